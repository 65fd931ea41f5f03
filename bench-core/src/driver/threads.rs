//! The real-time driver: one OS thread per node, exchanging every payload through the threads
//! transport (one-sided writes into per-sender slot rings, notification after the data), never
//! through shared pointers.
//!
//! Each thread runs [`node_thread::run_node`], the loop the cluster driver runs in each rank's
//! process too.

use super::node_thread::{self, AbortFlag, RunShared};
use crate::error::Result;
use crate::learning::Learning;
use crate::metrics::RunRecords;
use crate::protocol::{Protocol, Role};
use crate::straggler::StragglerConfig;
use crate::transport::threads::ThreadsFabric;
use crate::transport::RingShape;
use std::sync::Arc;
use std::time::Instant;

pub use super::node_thread::ThreadsConfig;

/// Which node has a ring to which: between the server and every worker; without a server
/// (peers), between every pair (rings no edge uses stay untouched, allocated lazily by the OS as
/// zero pages). Every driver over a real transport registers these.
pub(crate) fn ring_pairs(roles: &[Role]) -> Vec<(usize, usize)> {
    let n = roles.len();
    let has_server = roles.contains(&Role::Server);
    let mut pairs = Vec::new();
    for from in 0..n {
        for to in 0..n {
            if from != to
                && (!has_server || roles[from] == Role::Server || roles[to] == Role::Server)
            {
                pairs.push((from, to));
            }
        }
    }
    pairs
}

/// The rings a real-time run registers: the pairs of [`ring_pairs`], each of `depth` slots
/// sized for the workload's largest payload.
pub(crate) fn ps_rings<L: Learning + ?Sized>(
    roles: &[Role],
    workload: &L,
    depth: usize,
) -> (Vec<(usize, usize)>, RingShape) {
    let shape = RingShape {
        capacity: workload.payload_words(super::worker_count(roles)),
        depth,
    };
    (ring_pairs(roles), shape)
}

/// Runs `nodes` with one thread each until all finish.
///
/// # Errors
/// The first node error (protocol violation, transport error, or [`CoreError::Deadlock`] after
/// `stall_timeout_ms` without progress).
pub fn run<L: Learning + ?Sized + 'static>(
    nodes: Vec<Box<dyn Protocol>>,
    workload: Arc<L>,
    cfg: &ThreadsConfig,
    stragglers: &StragglerConfig,
    seed: u64,
) -> Result<RunRecords> {
    let n = nodes.len();
    let roles: Vec<Role> = nodes.iter().map(|p| p.role()).collect();
    let mut fabric = ThreadsFabric::new(n);
    let (pairs, shape) = ps_rings(&roles, &*workload, cfg.ring_depth);
    for &(from, to) in &pairs {
        fabric.register(from, to, shape.capacity, shape.depth)?;
    }
    let endpoints = fabric.endpoints();
    let abort = Arc::new(AbortFlag::default());
    let handles = node_thread::spawn_nodes(
        nodes.into_iter().zip(endpoints).collect(),
        &RunShared {
            workload: &workload,
            roles: &roles,
            pairs: &pairs,
            cfg,
            stragglers,
            seed,
            start: Instant::now(),
            abort: &abort,
        },
    )?;
    Ok(node_thread::merge(n, node_thread::join_nodes(handles)?))
}

#[cfg(test)]
mod stall_tests {
    use super::*;
    use crate::driver::ComputeModel;
    use crate::error::CoreError;
    use crate::protocol::{Action, Input, Nanos, NodeId};

    struct Silent(NodeId);
    impl Protocol for Silent {
        fn node(&self) -> NodeId {
            self.0
        }
        fn role(&self) -> Role {
            if self.0 == 0 {
                Role::Server
            } else {
                Role::Worker(self.0 - 1)
            }
        }
        fn handle(&mut self, _: Nanos, _: Input) -> Result<()> {
            Ok(())
        }
        fn poll_action(&mut self) -> Option<Action> {
            None
        }
        fn is_finished(&self) -> bool {
            false
        }
        fn waiting_on(&self) -> String {
            format!("node {} waits for nothing in particular", self.0)
        }
    }

    #[test]
    fn stalled_run_stops_with_a_deadlock_error() {
        let cfg = ThreadsConfig {
            compute: ComputeModel {
                ns_per_example: 0.0,
                measured: false,
            },
            ring_depth: 2,
            eval_every: 0,
            stall_timeout_ms: 50,
        };
        let nodes: Vec<Box<dyn Protocol>> = vec![Box::new(Silent(0)), Box::new(Silent(1))];
        let e = run(
            nodes,
            Arc::new(crate::learning::CountingProbe),
            &cfg,
            &StragglerConfig {
                slow: vec![],
                jitter_sigma: 0.0,
                production: None,
                random: None,
                trace: None,
            },
            1,
        )
        .unwrap_err();
        assert!(matches!(e, CoreError::Deadlock { .. }), "{e}");
        assert!(e.to_string().contains("received nothing for 50 ms"), "{e}");
    }
}
