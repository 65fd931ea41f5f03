//! Settings of the real-time drivers (threads and cluster).

use crate::driver::ComputeModel;

/// Threads- and cluster-driver settings.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadsConfig {
    /// Compute time model (a floor under the real computation time).
    pub compute: ComputeModel,
    /// Slots per sender ring.
    pub ring_depth: usize,
    /// Evaluate the server model every this many applied updates (0 = start and end only).
    pub eval_every: u64,
    /// A node that receives nothing for this long while unfinished reports a deadlock.
    pub stall_timeout_ms: u64,
}
