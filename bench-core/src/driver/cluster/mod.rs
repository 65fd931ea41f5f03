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
use crate::transport::shm::{self, ShmEndpoint};
use crate::transport::tcp::{RingShape, TcpEndpoint};
use crate::transport::Endpoint;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The transport a cluster run moves payloads over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterTransport {
    /// A TCP connection per node pair (one host or several).
    Tcp,
    /// Shared-memory segments in /dev/shm (every rank on one host).
    Shm,
}

/// What a transport does at each step of a cluster run.
trait Backend {
    /// A node's endpoint between its address being published and the table being known.
    type Pending;
    type Ep: Endpoint + 'static;
    /// Prepares node `node`'s receive side; returns the address peers reach it by.
    fn prepare(
        ip: IpAddr,
        token: u64,
        node: NodeId,
        local: HashMap<NodeId, RingShape>,
        remote: HashMap<NodeId, RingShape>,
    ) -> Result<(String, Self::Pending)>;
    /// Completes the endpoint once every node's address is known.
    fn build(
        pending: Self::Pending,
        token: u64,
        node: NodeId,
        table: &[String],
    ) -> Result<Self::Ep>;
    /// Called once every rank built its endpoints (after the start barrier).
    fn started(_ep: &mut Self::Ep) {}
}

struct TcpBackend;

impl Backend for TcpBackend {
    type Pending = (
        TcpListener,
        HashMap<NodeId, RingShape>,
        HashMap<NodeId, RingShape>,
    );
    type Ep = TcpEndpoint;

    fn prepare(
        ip: IpAddr,
        _token: u64,
        node: NodeId,
        local: HashMap<NodeId, RingShape>,
        remote: HashMap<NodeId, RingShape>,
    ) -> Result<(String, Self::Pending)> {
        let l = TcpListener::bind((ip, 0)).map_err(|e| {
            CoreError::Transport(format!("node {node}: cannot listen on {ip}: {e}"))
        })?;
        let a = l
            .local_addr()
            .map_err(|e| CoreError::Transport(e.to_string()))?;
        Ok((a.to_string(), (l, local, remote)))
    }

    fn build(
        pending: Self::Pending,
        token: u64,
        node: NodeId,
        table: &[String],
    ) -> Result<TcpEndpoint> {
        let addrs = table
            .iter()
            .enumerate()
            .map(|(j, a)| {
                a.parse::<SocketAddr>().map_err(|_| {
                    CoreError::Transport(format!("node {j} announced {a:?}, not a socket address"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let (listener, local, remote) = pending;
        TcpEndpoint::start(node, token, listener, addrs, local, remote)
    }
}

struct ShmBackend;

impl Backend for ShmBackend {
    type Pending = ShmEndpoint;
    type Ep = ShmEndpoint;

    fn prepare(
        _ip: IpAddr,
        token: u64,
        node: NodeId,
        local: HashMap<NodeId, RingShape>,
        remote: HashMap<NodeId, RingShape>,
    ) -> Result<(String, ShmEndpoint)> {
        let path = shm::segment_path(&shm::default_dir(), token, node);
        let ep = ShmEndpoint::create(node, token, path.clone(), local, remote)?;
        Ok((path.to_string_lossy().into_owned(), ep))
    }

    fn build(
        mut ep: ShmEndpoint,
        _token: u64,
        _node: NodeId,
        table: &[String],
    ) -> Result<ShmEndpoint> {
        let paths: Vec<PathBuf> = table.iter().map(PathBuf::from).collect();
        ep.connect(&paths)?;
        Ok(ep)
    }

    fn started(ep: &mut ShmEndpoint) {
        ep.unlink();
    }
}

/// What a rank publishes before a run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Hello {
    /// Nodes of the run, roles, seed, transport: equal on every rank of a consistent job.
    nodes: usize,
    roles: String,
    seed: u64,
    transport: ClusterTransport,
    /// The rank's host (shm needs every rank on one).
    host: String,
    /// Where this rank's nodes are reached (socket address or segment path).
    addrs: Vec<(NodeId, String)>,
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
    match transport {
        ClusterTransport::Tcp => {
            run_on::<L, TcpBackend>(session, transport, nodes, workload, cfg, stragglers, seed)
        }
        ClusterTransport::Shm => {
            run_on::<L, ShmBackend>(session, transport, nodes, workload, cfg, stragglers, seed)
        }
    }
}

fn run_on<L: Learning + ?Sized + 'static, B: Backend>(
    session: &mut Session,
    transport: ClusterTransport,
    nodes: Vec<Box<dyn Protocol>>,
    workload: Arc<L>,
    cfg: &ThreadsConfig,
    stragglers: &StragglerConfig,
    seed: u64,
) -> Result<RunRecords> {
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
    let shape = RingShape {
        capacity: workload.payload_words(workers),
        depth: cfg.ring_depth,
    };
    // This run's token, so nothing of an earlier run or another job can connect.
    let token = session.spec().token ^ run_index.wrapping_mul(0x9E37_79B9_7F4A_7C15);

    // Receive sides of this rank's nodes, and the address exchange.
    let mine: Vec<Box<dyn Protocol>> = nodes
        .into_iter()
        .filter(|p| p.node() % size == rank)
        .collect();
    let mut pending = Vec::new();
    let mut addrs = Vec::new();
    for p in &mine {
        let node = p.node();
        let local = pairs
            .iter()
            .filter(|q| q.1 == node)
            .map(|q| (q.0, shape))
            .collect();
        let remote = pairs
            .iter()
            .filter(|q| q.0 == node)
            .map(|q| (q.1, shape))
            .collect();
        let (addr, pend) = B::prepare(session.ip(), token, node, local, remote).map_err(|e| {
            CoreError::Cluster {
                rank,
                message: e.to_string(),
            }
        })?;
        addrs.push((node, addr));
        pending.push(pend);
    }
    let hello = Hello {
        nodes: n,
        roles: format!("{roles:?}"),
        seed,
        transport,
        host: crate::metrics::hostname(),
        addrs,
    };
    let all = session.exchange(&hello)?;
    let mut table: Vec<Option<String>> = vec![None; n];
    for (r, h) in all.iter().enumerate() {
        if h.nodes != n || h.roles != hello.roles || h.seed != seed || h.transport != transport {
            return Err(CoreError::Cluster {
                rank: r,
                message: format!(
                    "runs a different configuration: {} nodes, seed {}, {:?} (rank {rank} has {n} nodes, seed {seed}, {transport:?}); start every rank with the same arguments",
                    h.nodes, h.seed, h.transport
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
    let mut own = Vec::new();
    for (proto, pend) in mine.into_iter().zip(pending) {
        let node = proto.node();
        let ep = B::build(pend, token, node, &table).map_err(|e| CoreError::Cluster {
            rank,
            message: e.to_string(),
        })?;
        own.push((proto, ep));
    }

    // Time zero, then the nodes.
    session.exchange(&())?;
    for (_, ep) in &mut own {
        B::started(ep);
    }
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
