//! Drivers run protocol nodes: [`sim`] in deterministic virtual time, [`threads`] with one OS
//! thread per node in real time over the threads transport, [`cluster`] with one process per
//! rank over tcp, shm or rdma. All carry out the same [`crate::protocol::Action`]s through one
//! [`crate::learning::Learning`], so the learning is identical in kind. [`schedule_search`] searches the
//! simulator's schedules for a peer setting's worst iteration gaps.

pub mod buffered;
pub mod cluster;
mod network;
pub mod node_thread;
mod profile;
pub mod schedule_search;
pub mod sim;
pub mod threads;

pub use network::{HostPlacement, LinkOverride, NetworkModel};

/// Keeps the error a threaded run reports: the first of the most telling kind. A node's own
/// failure tells most; a deadlock (a node waited in vain) less, as it is usually the consequence
/// of a failure elsewhere; a stop (a node told that another failed) least.
pub(crate) fn keep_failure(
    first: &mut Option<crate::error::CoreError>,
    e: crate::error::CoreError,
) {
    use crate::error::CoreError;
    let rank = |e: &CoreError| match e {
        CoreError::Stopped { .. } => 2,
        CoreError::Deadlock { .. } => 1,
        _ => 0,
    };
    if first.as_ref().is_none_or(|f| rank(&e) < rank(f)) {
        *first = Some(e);
    }
}

/// Workers among `roles` (the count every workload and straggler pattern is sized by).
pub(crate) fn worker_count(roles: &[crate::protocol::Role]) -> usize {
    roles
        .iter()
        .filter(|r| matches!(r, crate::protocol::Role::Worker(_)))
        .count()
}

/// True when counting from `before` to `after` passes a multiple of `every` (0: never).
pub(crate) fn crosses(before: u64, after: u64, every: u64) -> bool {
    every > 0 && before / every != after / every
}
pub use profile::{DeviceTime, TimeProfile};

/// Time model of computations.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComputeModel {
    /// Virtual nanoseconds per example of a mini-batch, before the straggler factor.
    pub ns_per_example: f64,
    /// Use the measured wall time of the real computation times the straggler factor instead
    /// of `ns_per_example`. In the sim it makes timings realistic but the CSV bytes no longer
    /// reproducible from the seed (recorded in the manifest); under threads and cluster a
    /// worker slowed by factor k waits k - 1 times its measured step, so per-worker speed
    /// ratios are realised on real compute. The receive-buffer drivers refuse it.
    #[serde(default)]
    pub measured: bool,
}

/// Which driver runs an experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverKind {
    /// Deterministic discrete-event simulation.
    Sim,
    /// One OS thread per node, real time.
    Threads,
    /// One process per rank (mpirun, srun or `syncbench launch`), nodes spread over the ranks,
    /// real time over a real transport.
    Cluster,
}

impl DriverKind {
    /// Label used in paths and CSVs.
    pub fn label(&self) -> &'static str {
        match self {
            DriverKind::Sim => "sim",
            DriverKind::Threads => "threads",
            DriverKind::Cluster => "cluster",
        }
    }
}
