//! The cluster driver: one process per rank, each running its share of the nodes (node `i` on
//! rank `i mod size`) with [`node_thread::run_node`] over a real transport, results gathered to
//! every rank in the threads driver's schema.
//!
//! A run goes: every rank binds a listener per node it hosts and the ranks exchange the
//! addresses over the [`Session`] (also checking that all run the same configuration); each
//! rank builds its endpoints with the run's own token (a stray connection from an earlier run
//! or another job is rejected); a barrier sets time zero; the nodes run; every rank reports its
//! outcomes to rank 0, which sends the merged result (or the failure) back to all, so every rank
//! goes on with the same records, and only rank 0 writes files.
//!
//! Failure: a rank that reports an error, or whose control connection closes mid-run (killed),
//! makes rank 0 tell every rank to stop; the others stop within one health check (50 ms) and
//! rank 0 waits at most the spec's timeout for their reports. The error names the rank and the
//! nodes it hosted. Times are each rank's own clock since the barrier, so rows of different
//! ranks line up to within the barrier's skew (a loopback round trip; a network one between
//! hosts).

pub mod rank;
pub mod session;

pub use rank::{RankFlags, RankSpec};
pub use session::Session;

use super::learning::Learning;
use super::node_thread::{self, AbortFlag, NodeOutcome, RunShared, ThreadsConfig};
use super::threads::ring_pairs;
use crate::error::{CoreError, Result};
use crate::metrics::RunRecords;
use crate::protocol::{NodeId, Protocol, Role};
use crate::straggler::StragglerConfig;
use crate::transport::tcp::{RingShape, TcpEndpoint};
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The transport a cluster run moves payloads over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterTransport {
    /// A TCP connection per node pair.
    Tcp,
}

/// What a rank publishes before a run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Hello {
    /// Nodes of the run, roles hashed, seed: equal on every rank of a consistent job.
    nodes: usize,
    roles: String,
    seed: u64,
    /// Where this rank's nodes listen.
    addrs: Vec<(NodeId, SocketAddr)>,
}

/// A rank's report after its nodes stopped.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
enum Report {
    Done(Vec<NodeOutcome>),
    Failed {
        /// Stopped because of another failure (a deadlock or a stop), not a cause.
        secondary: bool,
        message: String,
    },
}

/// What rank 0 sends during and after a run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
enum FromRoot {
    Abort(String),
    Final(std::result::Result<Vec<NodeOutcome>, (usize, String)>),
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
    let ClusterTransport::Tcp = transport;
    let run_index = session.begin_run()?;
    let (rank, size) = (session.spec().rank, session.spec().size);
    let n = nodes.len();
    let roles: Vec<Role> = nodes.iter().map(|p| p.role()).collect();
    let hosts = |r: usize| -> String {
        let mine: Vec<String> = (r..n).step_by(size).map(|i| i.to_string()).collect();
        if mine.is_empty() {
            "no nodes".into()
        } else {
            format!("node(s) {}", mine.join(", "))
        }
    };
    let workers = roles
        .iter()
        .filter(|r| matches!(r, Role::Worker(_)))
        .count();
    let pairs = ring_pairs(&roles);
    let cap = workload.payload_words(workers);

    // Listeners for this rank's nodes, and the address exchange.
    let mine: Vec<Box<dyn Protocol>> = nodes
        .into_iter()
        .filter(|p| p.node() % size == rank)
        .collect();
    let mut listeners = Vec::new();
    let mut addrs = Vec::new();
    for p in &mine {
        let l = TcpListener::bind((session.ip(), 0)).map_err(|e| CoreError::Cluster {
            rank,
            message: format!("node {}: cannot listen on {}: {e}", p.node(), session.ip()),
        })?;
        addrs.push((
            p.node(),
            l.local_addr()
                .map_err(|e| CoreError::Transport(e.to_string()))?,
        ));
        listeners.push(l);
    }
    let hello = Hello {
        nodes: n,
        roles: format!("{roles:?}"),
        seed,
        addrs,
    };
    let all = session.exchange(&hello)?;
    let mut table: Vec<Option<SocketAddr>> = vec![None; n];
    for (r, h) in all.iter().enumerate() {
        if h.nodes != n || h.roles != hello.roles || h.seed != seed {
            return Err(CoreError::Cluster {
                rank: r,
                message: format!(
                    "runs a different configuration: {} nodes, seed {} (rank {rank} has {n} nodes, seed {seed}); start every rank with the same arguments",
                    h.nodes, h.seed
                ),
            });
        }
        for &(node, a) in &h.addrs {
            if node >= n || node % size != r {
                return Err(CoreError::Cluster {
                    rank: r,
                    message: format!("announced node {node}, which is not one of its nodes"),
                });
            }
            table[node] = Some(a);
        }
    }
    let table: Vec<SocketAddr> = table
        .into_iter()
        .enumerate()
        .map(|(node, a)| {
            a.ok_or_else(|| CoreError::Cluster {
                rank: node % size,
                message: format!("did not announce node {node}"),
            })
        })
        .collect::<Result<_>>()?;

    // This run's endpoints: a token of its own, so nothing of an earlier run can connect.
    let token = session.spec().token ^ run_index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let shape = RingShape {
        capacity: cap,
        depth: cfg.ring_depth,
    };
    let mut own = Vec::new();
    for (proto, listener) in mine.into_iter().zip(listeners) {
        let node = proto.node();
        let local: HashMap<NodeId, RingShape> = pairs
            .iter()
            .filter(|p| p.1 == node)
            .map(|p| (p.0, shape))
            .collect();
        let remote: HashMap<NodeId, RingShape> = pairs
            .iter()
            .filter(|p| p.0 == node)
            .map(|p| (p.1, shape))
            .collect();
        let ep = TcpEndpoint::start(node, token, listener, table.clone(), local, remote)?;
        own.push((proto, ep));
    }

    // Time zero, then the nodes.
    session.exchange(&())?;
    let abort = Arc::new(AbortFlag::default());
    let handles = node_thread::spawn_nodes(
        own,
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
    let report = |handles| match node_thread::join_nodes(handles) {
        Ok(o) => Report::Done(o),
        Err(e) => Report::Failed {
            secondary: matches!(e, CoreError::Deadlock { .. } | CoreError::Stopped { .. }),
            message: e.to_string(),
        },
    };
    let streams = session.streams()?;
    let outcome = if rank == 0 {
        let timeout = session.spec().timeout;
        let (result, lost) = gather_at_root(streams, &abort, timeout, move || report(handles));
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
                let msg = session::read_frame(&mut s)
                    .and_then(|v| serde_json::from_value::<FromRoot>(v).map_err(|e| e.to_string()));
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
        let mine = report(handles);
        let sent = session::write_frame(&mut stream, &mine);
        let result = match rx.recv() {
            Ok(r) => r,
            Err(_) => Err((0, "rank 0 sent no result".to_string())),
        };
        let _ = watcher.join();
        if let (Err(e), Err((0, _))) = (&sent, &result) {
            session.mark_broken(e);
        } else if matches!(result, Err((0, _))) {
            session.mark_broken("lost rank 0");
        }
        result
    };
    match outcome {
        Ok(outcomes) => Ok(node_thread::merge(n, outcomes)),
        Err((r, message)) => Err(CoreError::Cluster {
            rank: r,
            message: format!("{message} (it hosted {})", hosts(r)),
        }),
    }
}

/// How bad a rank's failure is, for choosing the one to report: a lost rank, then a real
/// failure, then a rank that never reported, then a rank stopped by someone else's failure.
fn severity(f: &Failure) -> u8 {
    match f {
        Failure::Lost(_) => 0,
        Failure::Failed {
            secondary: false, ..
        } => 1,
        Failure::Silent => 2,
        Failure::Failed {
            secondary: true, ..
        } => 3,
    }
}

enum Failure {
    Lost(String),
    Failed { secondary: bool, message: String },
    Silent,
}

/// Rank 0's side of a run: collects every rank's report (its own from `local`), tells the
/// others to stop at the first failure, and sends the result to all. Returns the result and,
/// when a rank was lost or silent, why the session cannot be used again.
#[allow(clippy::type_complexity)]
fn gather_at_root(
    streams: Vec<TcpStream>,
    abort: &Arc<AbortFlag>,
    timeout: Duration,
    local: impl FnOnce() -> Report + Send + 'static,
) -> (
    std::result::Result<Vec<NodeOutcome>, (usize, String)>,
    Option<String>,
) {
    let size = streams.len() + 1;
    let (tx, rx) = mpsc::channel::<(usize, std::result::Result<Report, String>)>();
    let mut writers = Vec::new();
    for (i, s) in streams.into_iter().enumerate() {
        let rank = i + 1;
        let mut reader = match s.try_clone() {
            Ok(r) => r,
            Err(e) => {
                let _ = tx.send((rank, Err(e.to_string())));
                writers.push(s);
                continue;
            }
        };
        writers.push(s);
        let tx = tx.clone();
        std::thread::spawn(move || {
            let r = session::read_frame(&mut reader).and_then(|v| {
                serde_json::from_value::<Report>(v)
                    .map_err(|e| format!("sent a malformed report ({e})"))
            });
            let _ = tx.send((rank, r));
        });
    }
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let _ = tx.send((0, Ok(local())));
        });
    }
    drop(tx);
    let mut reports: Vec<Option<std::result::Result<Report, String>>> =
        (0..size).map(|_| None).collect();
    let mut deadline: Option<Instant> = None;
    let mut got = 0;
    while got < size {
        let next = match deadline {
            None => rx.recv().map_err(|_| ()),
            Some(d) => rx
                .recv_timeout(d.saturating_duration_since(Instant::now()))
                .map_err(|_| ()),
        };
        let Ok((rank, r)) = next else { break };
        let failed = match &r {
            Err(e) => Some(format!("rank {rank} lost: {e}")),
            Ok(Report::Failed { message, .. }) => Some(format!("rank {rank} failed: {message}")),
            Ok(Report::Done(_)) => None,
        };
        if let (Some(why), None) = (failed, deadline) {
            abort.raise(&why);
            for w in writers.iter_mut() {
                let _ = session::write_frame(w, &FromRoot::Abort(why.clone()));
            }
            deadline = Some(Instant::now() + timeout);
        }
        reports[rank] = Some(r);
        got += 1;
    }
    let mut worst: Option<(u8, usize, String)> = None;
    let mut outcomes = Vec::new();
    let mut broken = None;
    for (rank, r) in reports.into_iter().enumerate() {
        let f = match r {
            Some(Ok(Report::Done(o))) => {
                outcomes.extend(o);
                continue;
            }
            Some(Ok(Report::Failed { secondary, message })) => {
                Failure::Failed { secondary, message }
            }
            Some(Err(e)) => Failure::Lost(e),
            None => Failure::Silent,
        };
        let message = match &f {
            Failure::Lost(e) => {
                broken.get_or_insert_with(|| format!("rank {rank} was lost"));
                format!("lost mid-run: {e}")
            }
            Failure::Failed { message, .. } => message.clone(),
            Failure::Silent => {
                broken.get_or_insert_with(|| format!("rank {rank} did not report"));
                format!(
                    "did not report within {} ms after the first failure",
                    timeout.as_millis()
                )
            }
        };
        let s = severity(&f);
        if worst.as_ref().is_none_or(|w| s < w.0) {
            worst = Some((s, rank, message));
        }
    }
    let result = match worst {
        Some((_, rank, message)) => Err((rank, message)),
        None => {
            outcomes.sort_by_key(|o| o.node);
            Ok(outcomes)
        }
    };
    for w in writers.iter_mut() {
        let _ = session::write_frame(w, &FromRoot::Final(result.clone()));
    }
    (result, broken)
}
