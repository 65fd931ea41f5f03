//! The cluster driver: one process per rank, each running its share of the nodes (node `i` on
//! rank `i mod size`) with [`node_thread::run_node`] over a real transport, results gathered to
//! every rank in the threads driver's schema.
//!
//! Transports: tcp (a listener per node; one host or several) and shm (a segment per node in
//! /dev/shm; every rank on one host, checked).
//!
//! A run goes: every rank prepares the receive side of each node it hosts (a listener, or a
//! segment) and the ranks exchange the addresses over the [`Session`] (also checking that all
//! run the same configuration); each rank builds its endpoints with the run's own token (a
//! stray connection or segment from an earlier run or another job is rejected); a barrier sets time zero; the nodes run; every rank reports its
//! outcomes to rank 0, which sends the merged result (or the failure) back to all, so every rank
//! goes on with the same records, and only rank 0 writes files.
//!
//! Failure: a rank that reports an error, or whose control connection closes mid-run (killed),
//! makes rank 0 tell every rank to stop; the others stop within one health check (50 ms) and
//! rank 0 waits at most the spec's timeout for their reports. The error names the rank and the
//! nodes it hosted. Times are each rank's own clock since the barrier, so rows of different
//! ranks line up to within the barrier's skew (a loopback round trip; a network one between
//! hosts).

mod backend;
pub mod barrier;
pub mod fault_point;
mod gather;
pub(crate) mod job;
#[cfg(feature = "mpi")]
pub mod mpi_bootstrap;
pub mod rank;
pub mod session;

pub use barrier::{ClusterBarrier, PeerBarrier};
pub use rank::{RankFlags, RankSpec};
pub use session::Session;

use super::node_thread::{self, NodeOutcome, RunShared, ThreadsConfig};
use super::threads::ps_rings;
use crate::error::{CoreError, Result};
use crate::learning::Learning;
use crate::metrics::RunRecords;
use crate::protocol::{NodeId, Protocol, Role};
use crate::straggler::StragglerConfig;
use job::JobPlan;
use std::collections::HashMap;
use std::sync::Arc;

/// The transport a cluster run moves payloads over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterTransport {
    /// A TCP connection per node pair (one host or several).
    Tcp,
    /// Shared-memory segments in /dev/shm (every rank on one host).
    Shm,
    /// RDMA verbs: RC queue pairs, one-sided writes, WRITE_WITH_IMM notifications (cargo
    /// feature `rdma`).
    #[cfg(feature = "rdma")]
    Rdma,
    /// libfabric: the same one-sided writes on an RDM endpoint of the provider
    /// `SYNCBENCH_OFI_PROVIDER` names (cargo feature `ofi`).
    #[cfg(feature = "ofi")]
    Ofi,
}

/// Runs `nodes` across the job's ranks (this process runs its share) until all finish.
///
/// Every rank must call this with the same nodes, in the same order of runs.
///
/// # Errors
/// [`CoreError::Cluster`] naming the rank that failed or was lost (with the nodes it hosted),
/// or a configuration that differs between ranks; the same error on every rank.
pub fn run<L: Learning + ?Sized + 'static>(
    session: &mut Session,
    transport: ClusterTransport,
    nodes: Vec<Box<dyn Protocol>>,
    workload: Arc<L>,
    cfg: &ThreadsConfig,
    stragglers: &StragglerConfig,
    seed: u64,
) -> Result<RunRecords> {
    let n = nodes.len();
    let roles: Vec<Role> = nodes.iter().map(|p| p.role()).collect();
    let (pairs, shape) = ps_rings(&roles, &*workload, cfg.ring_depth);
    let plan = JobPlan {
        nodes: n,
        fingerprint: format!("ps {roles:?} {shape:?}"),
        seed,
        rings: pairs.iter().map(|&(f, t)| (f, t, shape)).collect(),
        barrier: false,
    };
    let rank = session.spec().rank;
    let size = session.spec().size;
    let mut mine: HashMap<NodeId, Box<dyn Protocol>> = nodes
        .into_iter()
        .filter(|p| p.node() % size == rank)
        .map(|p| (p.node(), p))
        .collect();
    let mut outcomes: Vec<NodeOutcome> = job::run_job(session, transport, &plan, |js| {
        let own = js
            .endpoints
            .into_iter()
            .map(|(node, ep)| {
                let proto = mine.remove(&node).ok_or_else(|| CoreError::Protocol {
                    node,
                    message: "no protocol for this node on its rank".into(),
                })?;
                Ok((proto, ep))
            })
            .collect::<Result<Vec<_>>>()?;
        let handles = node_thread::spawn_nodes(
            own,
            &RunShared {
                workload: &workload,
                roles: &roles,
                pairs: &pairs,
                cfg,
                stragglers,
                seed,
                start: js.start,
                abort: &js.abort,
            },
        )?;
        Ok(Box::new(move || node_thread::join_nodes(handles)) as job::Joiner<NodeOutcome>)
    })?;
    outcomes.sort_by_key(|o| o.node);
    Ok(node_thread::merge(n, outcomes))
}
