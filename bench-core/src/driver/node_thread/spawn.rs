//! Starting one OS thread per node and joining them: the threads driver runs every node of a
//! run this way, a cluster rank the nodes it hosts.

use super::node_loop::{run_node, NodeContext};
use super::{AbortFlag, NodeOutcome, ThreadsConfig};
use crate::error::{CoreError, Result, TransportFault};
use crate::learning::Learning;
use crate::protocol::{NodeId, Protocol, Role};
use crate::transport::Endpoint;
use std::sync::Arc;
use std::time::Instant;

/// What every node of a run shares, for [`spawn_nodes`].
pub struct RunShared<'a, L: Learning + ?Sized> {
    /// The learning.
    pub workload: &'a Arc<L>,
    /// Every node's role, by node id.
    pub roles: &'a [Role],
    /// Ordered (from, to) pairs with a ring.
    pub pairs: &'a [(NodeId, NodeId)],
    /// Settings.
    pub cfg: &'a ThreadsConfig,
    /// Straggler pattern.
    pub stragglers: &'a crate::straggler::StragglerConfig,
    /// Run seed.
    pub seed: u64,
    /// Time zero.
    pub start: Instant,
    /// Stop request from outside.
    pub abort: &'a Arc<AbortFlag>,
}

/// Starts one thread per `(protocol, endpoint)` running [`run_node`].
///
/// # Errors
/// [`CoreError::Transport`] when a thread cannot be spawned.
pub fn spawn_nodes<L: Learning + ?Sized + 'static, E: Endpoint + 'static>(
    nodes: Vec<(Box<dyn Protocol>, E)>,
    run: &RunShared<'_, L>,
) -> Result<Vec<(NodeId, std::thread::JoinHandle<Result<NodeOutcome>>)>> {
    let workers = crate::driver::worker_count(run.roles);
    let evaluator = run
        .workload
        .eval_node()
        .or_else(|| run.roles.iter().position(|r| *r == Role::Server))
        .unwrap_or(0);
    nodes
        .into_iter()
        .map(|(proto, ep)| {
            let node = proto.node();
            let sampler = match proto.role() {
                Role::Worker(w) => Some(run.stragglers.sampler(workers, w, run.seed)),
                Role::Server => None,
            }
            .transpose();
            let ctx = sampler.map(|sampler| NodeContext {
                workload: run.workload.clone(),
                roles: run.roles.to_vec(),
                cfg: *run.cfg,
                sampler,
                start: run.start,
                evaluator: node == evaluator,
                sends_to: run
                    .pairs
                    .iter()
                    .filter(|p| p.0 == node)
                    .map(|p| p.1)
                    .collect(),
                hears_from: run
                    .pairs
                    .iter()
                    .filter(|p| p.1 == node)
                    .map(|p| p.0)
                    .collect(),
                abort: run.abort.clone(),
            });
            std::thread::Builder::new()
                .name(format!("node-{node}"))
                .spawn(move || -> Result<NodeOutcome> { run_node(proto, ep, ctx?) })
                .map(|h| (node, h))
                .map_err(|e| {
                    CoreError::transport(
                        TransportFault::Setup,
                        format!("cannot start node {node}'s thread: {e}"),
                    )
                })
        })
        .collect()
}

/// Joins node threads: their outcomes, or the failure worth reporting
/// ([`crate::driver::keep_failure`]).
pub fn join_nodes(
    handles: Vec<(NodeId, std::thread::JoinHandle<Result<NodeOutcome>>)>,
) -> std::result::Result<Vec<NodeOutcome>, CoreError> {
    let mut outcomes = Vec::with_capacity(handles.len());
    let mut first_err = None;
    for (node, h) in handles {
        match h.join() {
            Ok(Ok(o)) => outcomes.push(o),
            Ok(Err(e)) => crate::driver::keep_failure(&mut first_err, e),
            Err(_) => crate::driver::keep_failure(
                &mut first_err,
                CoreError::Protocol {
                    node,
                    message: "node thread panicked".into(),
                },
            ),
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(outcomes),
    }
}
