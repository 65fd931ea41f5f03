//! The bytes a message carries besides its control words, and what carrying out a payload
//! action did.

use std::sync::Arc;

/// Bytes a message carries besides its control words.
#[derive(Debug, Clone, PartialEq)]
pub struct Payload {
    /// Parameters (an update or a model snapshot).
    pub data: Arc<Vec<f32>>,
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

impl Payload {
    /// Bytes on the wire for the parameter part.
    pub fn wire_bytes(&self) -> u64 {
        self.data.len() as u64 * 4
    }
}
