//! One run across the ranks, whatever the nodes do: address exchange with a same-configuration
//! check, endpoints over the chosen transport, an optional cross-rank barrier, a start barrier,
//! then every rank's outcomes gathered at rank 0 and sent back to all (or the failure worth
//! reporting, naming the rank and the nodes it hosted).

use super::backend::{Backend, ShmBackend, TcpBackend};
use super::barrier::ClusterBarrier;
use super::gather::{gather_at_root, FromRoot, Report};
use super::session::{self, Session};
use super::ClusterTransport;
use crate::driver::node_thread::AbortFlag;
use crate::error::{CoreError, Result};
use crate::protocol::NodeId;
use crate::transport::tcp::RingShape;
use crate::transport::Endpoint;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

/// What every rank must agree on, and the rings to build.
pub(crate) struct JobPlan {
    /// Nodes of the run; node `i` runs on rank `i mod size`.
    pub nodes: usize,
    /// Text equal on every rank of a consistent job (roles, graph, mode, ...).
    pub fingerprint: String,
    /// Run seed.
    pub seed: u64,
    /// Rings: (sender, receiver, shape).
    pub rings: Vec<(NodeId, NodeId, RingShape)>,
    /// The nodes use a barrier across all of them.
    pub barrier: bool,
}

/// What the nodes of this rank get at time zero.
pub(crate) struct JobStart {
    /// This rank's endpoints, by node.
    pub endpoints: Vec<(NodeId, Box<dyn Endpoint>)>,
    /// Time zero.
    pub start: Instant,
    /// Raised when another rank failed.
    pub abort: Arc<AbortFlag>,
    /// The barrier across all nodes, when the plan asked for one.
    pub barrier: Option<Arc<ClusterBarrier>>,
}

/// Waits for this rank's nodes and returns their outcomes.
pub(crate) type Joiner<O> = Box<dyn FnOnce() -> Result<Vec<O>> + Send>;

/// What a rank publishes before a run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Hello {
    nodes: usize,
    fingerprint: String,
    seed: u64,
    transport: ClusterTransport,
    /// The rank's host (shm needs every rank on one).
    host: String,
    /// Where this rank's nodes are reached (socket address or segment path).
    addrs: Vec<(NodeId, String)>,
    /// Rank 0 only, with a barrier: where the barrier listens.
    barrier: Option<String>,
}

fn on_rank(rank: usize) -> impl Fn(CoreError) -> CoreError {
    move |e| match e {
        e @ CoreError::Cluster { .. } => e,
        e => CoreError::Cluster {
            rank,
            message: e.to_string(),
        },
    }
}

/// Runs one job: `start` launches this rank's nodes on their endpoints and returns how to wait
/// for them. Every rank gets every rank's outcomes, ordered by rank.
///
/// # Errors
/// [`CoreError::Cluster`] naming the rank that failed or was lost (with the nodes it hosted),
/// or a configuration that differs between ranks; the same error on every rank.
pub(crate) fn run_job<O: Serialize + DeserializeOwned + Send + 'static>(
    session: &mut Session,
    transport: ClusterTransport,
    plan: &JobPlan,
    start: impl FnOnce(JobStart) -> Result<Joiner<O>>,
) -> Result<Vec<O>> {
    match transport {
        ClusterTransport::Tcp => run_on::<O, TcpBackend>(session, transport, plan, start),
        ClusterTransport::Shm => run_on::<O, ShmBackend>(session, transport, plan, start),
        #[cfg(feature = "rdma")]
        ClusterTransport::Rdma => {
            run_on::<O, super::backend::RdmaBackend>(session, transport, plan, start)
        }
        #[cfg(feature = "ofi")]
        ClusterTransport::Ofi => {
            run_on::<O, super::backend::OfiBackend>(session, transport, plan, start)
        }
    }
}

fn run_on<O: Serialize + DeserializeOwned + Send + 'static, B: Backend>(
    session: &mut Session,
    transport: ClusterTransport,
    plan: &JobPlan,
    start: impl FnOnce(JobStart) -> Result<Joiner<O>>,
) -> Result<Vec<O>> {
    let run_index = session.begin_run()?;
    let (rank, size) = (session.spec().rank, session.spec().size);
    let n = plan.nodes;
    let hosts = |r: usize| -> String {
        let mine: Vec<String> = (r..n).step_by(size).map(|i| i.to_string()).collect();
        if mine.is_empty() {
            "no nodes".into()
        } else {
            format!("node(s) {}", mine.join(", "))
        }
    };
    // This run's token, so nothing of an earlier run or another job can connect.
    let token = session.spec().token ^ run_index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let own_nodes: Vec<NodeId> = (rank..n).step_by(size).collect();

    // Receive sides of this rank's nodes, and the address exchange.
    let mut pending = Vec::new();
    let mut addrs = Vec::new();
    for &node in &own_nodes {
        let local: HashMap<NodeId, RingShape> = plan
            .rings
            .iter()
            .filter(|r| r.1 == node)
            .map(|r| (r.0, r.2))
            .collect();
        let remote: HashMap<NodeId, RingShape> = plan
            .rings
            .iter()
            .filter(|r| r.0 == node)
            .map(|r| (r.1, r.2))
            .collect();
        let (addr, pend) =
            B::prepare(session.ip(), token, node, local, remote).map_err(on_rank(rank))?;
        addrs.push((node, addr));
        pending.push(pend);
    }
    let barrier_listener = if plan.barrier && rank == 0 {
        Some(
            TcpListener::bind((session.ip(), 0)).map_err(|e| CoreError::Cluster {
                rank,
                message: format!("cannot listen for the barrier: {e}"),
            })?,
        )
    } else {
        None
    };
    let hello = Hello {
        nodes: n,
        fingerprint: plan.fingerprint.clone(),
        seed: plan.seed,
        transport,
        host: crate::metrics::hostname(),
        addrs,
        barrier: barrier_listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
            .map(|a| a.to_string()),
    };
    let all = session.exchange(&hello)?;
    let mut table: Vec<Option<String>> = vec![None; n];
    for (r, h) in all.iter().enumerate() {
        if h.nodes != n
            || h.fingerprint != hello.fingerprint
            || h.seed != plan.seed
            || h.transport != transport
        {
            return Err(CoreError::Cluster {
                rank: r,
                message: format!(
                    "runs a different configuration: {} nodes, seed {}, {:?} (rank {rank} has {n} nodes, seed {}, {transport:?}); start every rank with the same arguments",
                    h.nodes, h.seed, h.transport, plan.seed
                ),
            });
        }
        if transport == ClusterTransport::Shm && h.host != hello.host {
            return Err(CoreError::Cluster {
                rank: r,
                message: format!(
                    "runs on host {:?}, rank {rank} on {:?}: the shm transport needs every rank on one host (use --transport tcp)",
                    h.host, hello.host
                ),
            });
        }
        for (node, a) in &h.addrs {
            if *node >= n || node % size != r {
                return Err(CoreError::Cluster {
                    rank: r,
                    message: format!("announced node {node}, which is not one of its nodes"),
                });
            }
            table[*node] = Some(a.clone());
        }
    }
    let table: Vec<String> = table
        .into_iter()
        .enumerate()
        .map(|(node, a)| {
            a.ok_or_else(|| CoreError::Cluster {
                rank: node % size,
                message: format!("did not announce node {node}"),
            })
        })
        .collect::<Result<_>>()?;
    // Every receive side was prepared before the exchange: connecting now reaches a listener.
    // The run starts only once every endpoint's peers have connected to it (no node opens a
    // first connection mid-run to a peer that may have finished and closed its listener).
    let deadline = Instant::now() + session.spec().startup;
    let mut own: Vec<(NodeId, B::Ep)> = Vec::new();
    for (&node, pend) in own_nodes.iter().zip(pending) {
        let ep = B::build(pend, token, node, &table, deadline).map_err(on_rank(rank))?;
        own.push((node, ep));
    }
    for (_, ep) in &own {
        B::ready(ep, deadline).map_err(on_rank(rank))?;
    }
    let abort = Arc::new(AbortFlag::default());
    let barrier = if plan.barrier {
        // Ranks hosting nodes take part; rank 0 always hosts node 0.
        let members: Vec<usize> = (1..size.min(n)).collect();
        let timeout = session.spec().timeout;
        let root_addr = all[0].barrier.clone();
        Some(Arc::new(
            ClusterBarrier::connect(
                rank,
                own_nodes.len(),
                token,
                barrier_listener,
                root_addr,
                &members,
                timeout,
                abort.clone(),
            )
            .map_err(on_rank(rank))?,
        ))
    } else {
        None
    };

    // Time zero, then the nodes.
    session.exchange(&())?;
    for (_, ep) in &mut own {
        B::started(ep);
    }
    super::fault_point::reach("start");
    let endpoints = own
        .into_iter()
        .map(|(node, ep)| (node, Box::new(ep) as Box<dyn Endpoint>))
        .collect();
    let joiner = start(JobStart {
        endpoints,
        start: Instant::now(),
        abort: abort.clone(),
        barrier,
    })
    .map_err(on_rank(rank))?;
    let report = move || match joiner() {
        Ok(o) => Report::Done(o),
        Err(e) => Report::Failed {
            secondary: matches!(e, CoreError::Stopped { .. }),
            stalled: matches!(e, CoreError::Deadlock { .. }),
            message: e.to_string(),
        },
    };
    let streams = session.streams()?;
    let outcome = if rank == 0 {
        let timeout = session.spec().timeout;
        let (result, lost) = gather_at_root(streams, &abort, timeout, report);
        if let Some(why) = lost {
            session.mark_broken(&why);
        }
        result
    } else {
        let mut stream = streams.into_iter().next().expect("a stream to rank 0");
        let (tx, rx) = mpsc::channel();
        let watcher = {
            let mut s = stream.try_clone().map_err(|e| CoreError::Cluster {
                rank,
                message: e.to_string(),
            })?;
            let abort = abort.clone();
            std::thread::spawn(move || loop {
                let msg = session::read_frame(&mut s).and_then(|v| {
                    serde_json::from_value::<FromRoot<O>>(v).map_err(|e| e.to_string())
                });
                match msg {
                    Ok(FromRoot::Abort(why)) => abort.raise(&why),
                    Ok(FromRoot::Final(r)) => {
                        let _ = tx.send(r);
                        return;
                    }
                    Err(e) => {
                        let why = format!("lost rank 0: {e}");
                        abort.raise(&why);
                        let _ = tx.send(Err((0, e)));
                        return;
                    }
                }
            })
        };
        let mine = report();
        super::fault_point::reach("gather");
        let sent = session::write_frame(&mut stream, &mine);
        let result = rx
            .recv()
            .unwrap_or_else(|_| Err((0, "rank 0 sent no result".to_string())));
        let _ = watcher.join();
        if let (Err(e), Err((0, _))) = (&sent, &result) {
            session.mark_broken(e);
        } else if matches!(result, Err((0, _))) {
            session.mark_broken("lost rank 0");
        }
        result
    };
    outcome.map_err(|(r, message)| CoreError::Cluster {
        rank: r,
        message: format!("{message} (it hosted {})", hosts(r)),
    })
}
