//! ASYNCbarrier: which available workers get a task, as a predicate over the STAT table.

use super::StatTable;
use std::fmt;
use std::sync::Arc;

/// A user-supplied predicate: `(STAT, worker) -> admit?`.
pub type PredicateFn = dyn Fn(&StatTable, usize) -> bool + Send + Sync;

/// A barrier-control strategy. The scheduler evaluates it on a snapshot of the STAT table for
/// every available worker and dispatches a task to each one admitted (ASYNC §5.3, Listing 2).
#[derive(Clone)]
pub enum BarrierPredicate {
    /// ASP: always.
    Asp,
    /// BSP: only when all P workers are available.
    Bsp,
    /// SSP: while the maximum staleness is below `s`.
    Ssp {
        /// Staleness threshold s.
        s: u64,
    },
    /// Only when at least `k` workers are available (ASYNC §5.2, Algorithm 2's example).
    MinAvailable {
        /// Available workers needed.
        k: usize,
    },
    /// Any function of the STAT table and the worker, with a name for reports and errors.
    Custom {
        /// Name used in labels and errors.
        name: String,
        /// The predicate.
        f: Arc<PredicateFn>,
    },
}

impl BarrierPredicate {
    /// Does the barrier admit available worker `w` given `stat`?
    pub fn admits(&self, stat: &StatTable, w: usize) -> bool {
        match self {
            BarrierPredicate::Asp => true,
            BarrierPredicate::Bsp => stat.available_workers() == stat.len(),
            BarrierPredicate::Ssp { s } => stat.max_staleness() < *s,
            BarrierPredicate::MinAvailable { k } => stat.available_workers() >= *k,
            BarrierPredicate::Custom { f, .. } => f(stat, w),
        }
    }

    /// Parses `asp`, `bsp`, `sspN` or `min-availableK`: the labels [`Self::label`]
    /// writes for the built-in predicates.
    ///
    /// # Errors
    /// [`crate::CoreError::Config`] for anything else.
    pub fn parse(s: &str) -> crate::Result<Self> {
        let l = s.trim().to_ascii_lowercase();
        let err = || {
            crate::CoreError::Config(format!(
                "unknown barrier '{s}'; expected asp, bsp, sspN or min-availableK"
            ))
        };
        Ok(match l.as_str() {
            "asp" => BarrierPredicate::Asp,
            "bsp" => BarrierPredicate::Bsp,
            _ => {
                if let Some(n) = l.strip_prefix("ssp") {
                    BarrierPredicate::Ssp {
                        s: n.parse().map_err(|_| err())?,
                    }
                } else if let Some(k) = l.strip_prefix("min-available") {
                    BarrierPredicate::MinAvailable {
                        k: k.parse().map_err(|_| err())?,
                    }
                } else {
                    return Err(err());
                }
            }
        })
    }

    /// Label: `asp`, `bsp`, `ssp3`, `min-available4` or the custom name.
    pub fn label(&self) -> String {
        match self {
            BarrierPredicate::Asp => "asp".into(),
            BarrierPredicate::Bsp => "bsp".into(),
            BarrierPredicate::Ssp { s } => format!("ssp{s}"),
            BarrierPredicate::MinAvailable { k } => format!("min-available{k}"),
            BarrierPredicate::Custom { name, .. } => name.clone(),
        }
    }
}

impl fmt::Debug for BarrierPredicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BarrierPredicate({})", self.label())
    }
}

/// How the coordinator folds results into the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Collect {
    /// Each result is one step as soon as it arrives (ASYNCcollect: ASGD, ASAGA).
    Each,
    /// The results of a round are one step once no task is in flight (Spark's reduce: SGD,
    /// SAGA).
    Round,
}
