//! The bytes a message carries besides its control words, and what carrying out a payload
//! action did.

use super::ScaledUpdate;
use std::ops::Deref;
use std::sync::Arc;

/// Bytes a message carries besides its control words.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    /// Parameters (an update or a model snapshot).
    pub data: Params,
    /// Ground truth for checkers: how many updates of each worker the sender's model held
    /// (snapshots) — never read by protocols.
    pub applied: Arc<Vec<u64>>,
}

/// What carrying out a payload action did, for the driver's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadEffect {
    /// An update was applied to the model.
    Applied,
    /// A late update was dropped.
    Discarded,
    /// A snapshot was installed.
    Installed,
    /// A result was collected for the next commit (ASYNC family).
    Collected,
    /// The results collected since the previous commit were folded into the model as one step.
    Committed {
        /// How many results the step folded in.
        results: u64,
    },
}

impl PayloadEffect {
    /// Updates or results this effect brought into the model (drives `eval_every`).
    pub fn results_applied(&self) -> u64 {
        match *self {
            PayloadEffect::Applied => 1,
            PayloadEffect::Committed { results } => results,
            _ => 0,
        }
    }
}

/// Bytes of control header counted for every message.
pub const HEADER_BYTES: u64 = 64;

/// A payload's parameters: a dense vector, or an update held as a multiple of the model it was
/// computed on ([`ScaledUpdate`], produced by the parameter-server family for workloads that
/// offer it). Both read as a slice of `f32` (the scaled form builds its dense form on first
/// read); [`Params::len`] never builds it, so charging a message's bytes stays cheap.
#[derive(Debug, Clone)]
pub enum Params {
    /// Every entry stored.
    Dense(Arc<Vec<f32>>),
    /// A scaled update.
    Scaled(Arc<ScaledUpdate>),
}

impl Params {
    /// Number of entries (without building a scaled update's dense form).
    pub fn len(&self) -> usize {
        match self {
            Params::Dense(d) => d.len(),
            Params::Scaled(s) => s.len(),
        }
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries as a shared dense vector (a scaled update's dense form is copied out).
    pub fn into_dense(self) -> Arc<Vec<f32>> {
        match self {
            Params::Dense(d) => d,
            Params::Scaled(s) => Arc::new(s.dense().to_vec()),
        }
    }

    /// Adds these entries to `model`, copying it first while another holder shares it.
    ///
    /// # Panics
    /// When the lengths differ (a caller's bug; [`crate::workload::NodeModel`] checks first).
    pub fn add_to(&self, model: &mut Arc<Vec<f32>>) {
        match self {
            Params::Dense(d) => {
                assert_eq!(model.len(), d.len(), "update and model lengths differ");
                Arc::make_mut(model)
                    .iter_mut()
                    .zip(d.iter())
                    .for_each(|(m, d)| *m += d);
            }
            Params::Scaled(s) => s.add_to(model),
        }
    }
}

impl Deref for Params {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        match self {
            Params::Dense(d) => d,
            Params::Scaled(s) => s.dense(),
        }
    }
}

impl PartialEq for Params {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl From<Arc<Vec<f32>>> for Params {
    fn from(d: Arc<Vec<f32>>) -> Self {
        Params::Dense(d)
    }
}

impl From<Vec<f32>> for Params {
    fn from(d: Vec<f32>) -> Self {
        Params::Dense(Arc::new(d))
    }
}

impl Payload {
    /// Bytes on the wire for the parameter part.
    pub fn wire_bytes(&self) -> u64 {
        self.data.len() as u64 * 4
    }
}
