//! How a worker's clock is divided into read-compute steps: one per example as Bösen's
//! computation threads read rows, a fixed number, or every row at the start of the clock.

use crate::error::{CoreError, Result};

/// How a worker's clock is divided into read-compute steps (see [`RowAccess`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClockSteps {
    /// One step per example (a rating, a document): every row is read from the cache just
    /// before the example that uses it, as Bösen's computation threads do.
    #[default]
    PerExample,
    /// This many steps (at most one per example): 1 reads every row of the clock when it
    /// starts.
    Fixed(u64),
}

impl ClockSteps {
    /// From a config's `steps_per_clock`: absent, one step per example.
    ///
    /// # Errors
    /// [`CoreError::OutOfRange`] for 0.
    pub fn from_config(steps_per_clock: Option<u64>) -> Result<Self> {
        match steps_per_clock {
            None => Ok(ClockSteps::PerExample),
            Some(0) => Err(CoreError::out_of_range(
                "steps_per_clock",
                "at least 1 (leave it out for one step per example)",
                0,
            )),
            Some(n) => Ok(ClockSteps::Fixed(n)),
        }
    }

    /// A label for manifests and CSVs.
    pub fn label(self) -> String {
        match self {
            ClockSteps::PerExample => "per-example".into(),
            ClockSteps::Fixed(n) => n.to_string(),
        }
    }
}
