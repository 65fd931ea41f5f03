//! One protocol node running in real time over any [`Endpoint`]: the loop the threads driver runs
//! on one OS thread per node and the cluster driver runs in each rank's process.
//!
//! Computation is real; a computation takes `max(real time, modelled time)` where the modelled
//! time is the [`ComputeModel`] times the straggler factor (the thread sleeps the difference), so
//! the same configuration means the same thing under `sim`, `threads` and `cluster`.
//!
//! Ending a run takes no shared memory, so it works the same between processes: a node whose
//! protocol finished posts a *done* notification to every node it has a ring to, and keeps
//! receiving (a server keeps answering late updates and last reads) until every node with a ring
//! to it has said done, and every node it said done to has acknowledged; the transports deliver
//! a notification after everything posted before it, so no message can arrive after the done,
//! and no credit (below) after the acknowledgement: nothing is ever posted to a node that left. A node that fails posts *stop* to the same nodes, which
//! end with [`CoreError::Stopped`] naming it instead of waiting for a timeout.
//!
//! Flow control: every message occupies a slot of the receiver's ring until the receiver has
//! handled it, and one-sided writes cannot tell whether it has. So a sender keeps at most
//! `depth` messages unacknowledged per receiver, and a receiver returns *credits* (a
//! notification-only post) each time it has handled a quarter of a ring from one sender; a
//! sender out of credits goes on receiving (and handling) messages until credits come back. A
//! ring can then never be overrun, whatever the transport (over tcp, frames land as they arrive,
//! however far behind the receiver is).

use super::{crosses, ComputeModel};
use crate::error::{CoreError, Result, TransportFault};
use crate::learning::Learning;
use crate::learning::{Payload, PayloadEffect, HEADER_BYTES};
use crate::metrics::{IterationRow, ProgressRow, RowReadRow, RunRecords, WaitRow};
use crate::protocol::{Action, Event, Input, Message, NodeId, Protocol, Role, MESSAGE_WORDS};
use crate::straggler::StragglerSampler;
use crate::transport::{AlignedWords, Endpoint, Notification, IMM_WORDS};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// Notification words no protocol message encodes to (tag 0xFE/0xFD): end-of-run signals.
const DONE: [u64; IMM_WORDS] = [0xFE, 0x444F_4E45];
const STOP: [u64; IMM_WORDS] = [0xFD, 0x5354_4F50];
/// Tag of a credit return: `[CREDIT, slots freed]`.
const CREDIT: u64 = 0xFC;
/// Answer to a done: everything its sender posted here has been handled.
const DONE_ACK: [u64; IMM_WORDS] = [0xFB, 0x4143_4B00];
/// How often an empty wait asks the transport and the abort flag for failures.
const HEALTH_EVERY: Duration = Duration::from_millis(50);

/// A reason to stop that comes from outside the node (another rank failed), checked between
/// waits.
#[derive(Debug, Default)]
pub struct AbortFlag {
    raised: AtomicBool,
    reason: Mutex<String>,
}

impl AbortFlag {
    /// Asks every node watching this flag to stop, giving `reason`.
    pub fn raise(&self, reason: &str) {
        let mut r = self.reason.lock().expect("abort reason lock");
        if !self.raised.load(Ordering::SeqCst) {
            *r = reason.to_string();
            self.raised.store(true, Ordering::SeqCst);
        }
    }

    /// The reason, once raised.
    pub fn reason(&self) -> Option<String> {
        self.raised
            .load(Ordering::SeqCst)
            .then(|| self.reason.lock().expect("abort reason lock").clone())
    }
}

/// Encodes a payload as words: `[n_applied, applied..., n_f32, f32 pairs...]`.
pub(crate) fn encode(p: &Payload) -> Vec<u64> {
    let mut w = Vec::with_capacity(2 + p.applied.len() + p.data.len().div_ceil(2));
    w.push(p.applied.len() as u64);
    w.extend(p.applied.iter().copied());
    w.push(p.data.len() as u64);
    for pair in p.data.chunks(2) {
        let lo = pair[0].to_bits() as u64;
        let hi = pair.get(1).map_or(0, |x| x.to_bits() as u64);
        w.push(lo | (hi << 32));
    }
    w
}

pub(crate) fn decode(words: &[u64], from: NodeId) -> Result<Payload> {
    let bad = || {
        CoreError::transport(
            TransportFault::Malformed,
            format!("malformed payload from node {from}"),
        )
    };
    let na = *words.first().ok_or_else(bad)? as usize;
    let applied = words.get(1..1 + na).ok_or_else(bad)?.to_vec();
    let nf = *words.get(1 + na).ok_or_else(bad)? as usize;
    let body = words.get(2 + na..2 + na + nf.div_ceil(2)).ok_or_else(bad)?;
    let mut data = Vec::with_capacity(nf);
    for (i, w) in body.iter().enumerate() {
        data.push(f32::from_bits(*w as u32));
        if 2 * i + 1 < nf {
            data.push(f32::from_bits((*w >> 32) as u32));
        }
    }
    Ok(Payload {
        data: Arc::new(data),
        applied: Arc::new(applied),
    })
}

/// What one node measured; several merge into a [`RunRecords`] with [`merge`]. Serialisable so
/// that ranks can send theirs to rank 0.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NodeOutcome {
    /// The node.
    pub node: NodeId,
    /// Updates it discarded as late.
    pub dropped: u64,
    /// Task waits it recorded.
    pub waits: Vec<WaitRow>,
    /// Iterations it finished.
    pub iterations: Vec<IterationRow>,
    /// Row tables: its row reads' clock differentials.
    #[serde(default)]
    pub row_reads: Vec<RowReadRow>,
    /// Evaluations of its model.
    pub progress: Vec<ProgressRow>,
    /// Bytes it sent.
    pub bytes: u64,
    /// Messages it handled.
    pub events: u64,
    /// When its protocol finished, in ns since the run started.
    pub end: u64,
}

/// Merges the outcomes of all `nodes` nodes of a run, in the order every driver reports.
pub fn merge(nodes: usize, outcomes: Vec<NodeOutcome>) -> RunRecords {
    let mut records = RunRecords {
        bytes_sent: vec![0; nodes],
        ..RunRecords::default()
    };
    for o in outcomes {
        records.iterations.extend(o.iterations);
        records.waits.extend(o.waits);
        records.row_reads.extend(o.row_reads);
        records.progress.extend(o.progress);
        if let Some(b) = records.bytes_sent.get_mut(o.node) {
            *b = o.bytes;
        }
        records.events += o.events;
        records.dropped_updates += o.dropped;
        records.makespan = records.makespan.max(o.end);
    }
    records
        .iterations
        .sort_by_key(|r| (r.end, r.worker, r.iter));
    records
        .row_reads
        .sort_by_key(|r| (r.worker, r.clock, r.differential));
    records.progress.sort_by(|a, b| a.time.total_cmp(&b.time));
    records
}

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
    let workers = super::worker_count(run.roles);
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
/// ([`super::keep_failure`]).
pub fn join_nodes(
    handles: Vec<(NodeId, std::thread::JoinHandle<Result<NodeOutcome>>)>,
) -> std::result::Result<Vec<NodeOutcome>, CoreError> {
    let mut outcomes = Vec::with_capacity(handles.len());
    let mut first_err = None;
    for (node, h) in handles {
        match h.join() {
            Ok(Ok(o)) => outcomes.push(o),
            Ok(Err(e)) => super::keep_failure(&mut first_err, e),
            Err(_) => super::keep_failure(
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

/// Everything one node needs besides its protocol and endpoint.
pub struct NodeContext<L: Learning + ?Sized> {
    /// The learning all nodes share.
    pub workload: Arc<L>,
    /// Every node's role, by node id.
    pub roles: Vec<Role>,
    /// Settings.
    pub cfg: ThreadsConfig,
    /// This worker's straggler factors (none for a server).
    pub sampler: Option<StragglerSampler>,
    /// Time zero of the run.
    pub start: Instant,
    /// This node's model is the one progress.csv evaluates.
    pub evaluator: bool,
    /// Nodes this node has a ring to (it says done and stop to them).
    pub sends_to: Vec<NodeId>,
    /// Nodes with a ring to this node (it waits for their done).
    pub hears_from: Vec<NodeId>,
    /// Stop request from outside the node.
    pub abort: Arc<AbortFlag>,
}

/// Runs one node to the end of the run (see the module documentation).
///
/// # Errors
/// A protocol violation, a transport error (a lost peer among them), [`CoreError::Deadlock`]
/// after `stall_timeout_ms` without a message, or [`CoreError::Stopped`] when another node
/// failed first.
pub fn run_node<L: Learning + ?Sized, E: Endpoint>(
    proto: Box<dyn Protocol>,
    ep: E,
    ctx: NodeContext<L>,
) -> Result<NodeOutcome> {
    let workers = super::worker_count(&ctx.roles);
    let has_server = ctx.roles.contains(&Role::Server);
    let node = proto.node();
    let model = ctx.workload.node(node, proto.role(), workers);
    let n = ctx.roles.len();
    let mut t = NodeThread {
        proto,
        ep,
        model,
        workers,
        // A peer counts only its own reduces: scale to the run's total.
        eval_scale: if has_server { 1 } else { workers.max(1) as u64 },
        out_version: vec![0; n],
        out: NodeOutcome {
            node,
            ..NodeOutcome::default()
        },
        bytes_in_iter: 0,
        applied_total: 0,
        done_from: vec![false; n],
        acked_by: vec![false; n],
        unacked: vec![0; n],
        handled: vec![0; n],
        ctx,
    };
    let result = t.run();
    if result.is_err() {
        // Best effort: the others stop now rather than after their stall timeout.
        for &to in &t.ctx.sends_to {
            let _ = t.ep.post_notify(to, STOP);
        }
    }
    result.map(|()| t.out)
}

struct NodeThread<L: Learning + ?Sized, E: Endpoint> {
    proto: Box<dyn Protocol>,
    ep: E,
    model: L::Node,
    workers: usize,
    /// Factor from this node's applied count to the run's (peers: the worker count).
    eval_scale: u64,
    /// Writes posted to each peer so far (slot = count % depth, version = count).
    out_version: Vec<u64>,
    out: NodeOutcome,
    bytes_in_iter: u64,
    applied_total: u64,
    /// Nodes that said done.
    done_from: Vec<bool>,
    /// Nodes that acknowledged this node's done.
    acked_by: Vec<bool>,
    /// Messages posted to each node and not yet acknowledged by credits.
    unacked: Vec<u64>,
    /// Messages handled from each node since the last credit return.
    handled: Vec<u64>,
    ctx: NodeContext<L>,
}

/// What a wait brought.
enum Arrival {
    Message(Notification),
    /// A node said done (recorded in `done_from`), or returned credits (recorded in
    /// `unacked`): nothing for the protocol.
    Done,
    Nothing,
}

impl<L: Learning + ?Sized, E: Endpoint> NodeThread<L, E> {
    fn now(&self) -> u64 {
        self.ctx.start.elapsed().as_nanos() as u64
    }

    fn node(&self) -> NodeId {
        self.proto.node()
    }

    fn run(&mut self) -> Result<()> {
        if self.ctx.evaluator {
            self.evaluate();
        }
        let now = self.now();
        self.proto.handle(now, Input::Start)?;
        let mut buf = Vec::new();
        let stall = Duration::from_millis(self.ctx.cfg.stall_timeout_ms);
        loop {
            self.drain()?;
            if self.proto.is_finished() {
                break;
            }
            match self.wait(stall)? {
                Arrival::Message(n) => self.deliver(n, &mut buf, true)?,
                Arrival::Done => {}
                Arrival::Nothing => {
                    return Err(CoreError::Deadlock {
                        time_ns: self.now(),
                        message: format!(
                            "node {} received nothing for {} ms: {}",
                            self.node(),
                            self.ctx.cfg.stall_timeout_ms,
                            self.proto.waiting_on()
                        ),
                    })
                }
            }
        }
        if self.ctx.evaluator {
            self.evaluate();
        }
        self.out.end = self.now();
        for i in 0..self.ctx.sends_to.len() {
            let to = self.ctx.sends_to[i];
            self.ep.post_notify(to, DONE)?;
        }
        // A server keeps answering (late updates with backup workers, final reads); other
        // nodes only consume what still arrives.
        let answer = self.proto.role() == Role::Server;
        loop {
            let waiting = match (
                self.ctx.hears_from.iter().find(|&&f| !self.done_from[f]),
                self.ctx.sends_to.iter().find(|&&t| !self.acked_by[t]),
            ) {
                (Some(&f), _) => f,
                (None, Some(&t)) => t,
                (None, None) => break,
            };
            match self.wait(stall)? {
                Arrival::Message(n) => {
                    self.deliver(n, &mut buf, answer)?;
                    if answer {
                        self.drain()?;
                    }
                }
                Arrival::Done => {}
                Arrival::Nothing => {
                    return Err(CoreError::Deadlock {
                        time_ns: self.now(),
                        message: format!(
                            "node {} finished but node {waiting} did not end its run (or acknowledge the end of this one) within {} ms",
                            self.node(),
                            self.ctx.cfg.stall_timeout_ms
                        ),
                    })
                }
            }
        }
        Ok(())
    }

    /// Waits up to `limit` for a message, checking the transport's health and the abort flag
    /// every [`HEALTH_EVERY`]; end-of-run signals are handled here.
    fn wait(&mut self, limit: Duration) -> Result<Arrival> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.ep.wait_notification(left.min(HEALTH_EVERY)) {
                Some(n) if n.imm == DONE => {
                    if let Some(d) = self.done_from.get_mut(n.from) {
                        *d = true;
                    }
                    // Everything it sent is handled: its ring needs no more credits.
                    self.ep.post_notify(n.from, DONE_ACK)?;
                    while self.ep.poll_completion().is_some() {}
                    return Ok(Arrival::Done);
                }
                Some(n) if n.imm == DONE_ACK => {
                    if let Some(a) = self.acked_by.get_mut(n.from) {
                        *a = true;
                    }
                    return Ok(Arrival::Done);
                }
                Some(n) if n.imm[0] == CREDIT => {
                    if let Some(u) = self.unacked.get_mut(n.from) {
                        *u = u.saturating_sub(n.imm[1]);
                    }
                    return Ok(Arrival::Done);
                }
                Some(n) if n.imm == STOP => {
                    return Err(CoreError::Stopped {
                        node: self.node(),
                        message: format!("node {} failed", n.from),
                    })
                }
                Some(n) => return Ok(Arrival::Message(n)),
                None => {
                    self.ep.health()?;
                    if let Some(reason) = self.ctx.abort.reason() {
                        return Err(CoreError::Stopped {
                            node: self.node(),
                            message: reason,
                        });
                    }
                    if left.is_zero() {
                        return Ok(Arrival::Nothing);
                    }
                }
            }
        }
    }

    /// Reads the payload a notification announces and, when `feed`, gives the message to the
    /// protocol (a finished non-server node only consumes what still arrives).
    fn deliver(&mut self, n: Notification, buf: &mut Vec<u64>, feed: bool) -> Result<()> {
        self.out.events += 1;
        let imm: [u64; MESSAGE_WORDS] = n.imm;
        let msg = Message::decode(imm, n.from)?;
        let result = if feed { self.feed(n, msg, buf) } else { Ok(()) };
        // The slot is free now (its payload was copied out, or is not wanted).
        self.return_credit(n.from)?;
        result
    }

    /// Returns credits to `from` once a quarter of its ring has been handled.
    fn return_credit(&mut self, from: NodeId) -> Result<()> {
        if self.done_from.get(from).copied().unwrap_or(true) {
            return Ok(());
        }
        let Some(h) = self.handled.get_mut(from) else {
            return Ok(());
        };
        *h += 1;
        let every = (self.ctx.cfg.ring_depth as u64 / 4).max(1);
        if *h >= every {
            let freed = std::mem::take(h);
            self.ep.post_notify(from, [CREDIT, freed])?;
            while self.ep.poll_completion().is_some() {}
        }
        Ok(())
    }

    /// Hands a message (and its payload) to the workload and the protocol.
    fn feed(&mut self, n: Notification, msg: Message, buf: &mut Vec<u64>) -> Result<()> {
        let node = self.node();
        if msg.payload() != crate::protocol::PayloadKind::None {
            let r = self.ep.read_slot(n.from, n.slot, buf)?;
            if !r.consistent() || r.footer != n.version {
                return Err(CoreError::transport(TransportFault::RingOverrun, format!(
                    "node {node}: slot {} from node {} holds versions header {} / footer {}, expected {} (ring overrun or torn write)",
                    n.slot, n.from, r.header, r.footer, n.version
                )));
            }
            let p = decode(buf, n.from)?;
            self.ctx.workload.receive(&mut self.model, n.from, &msg, p);
        }
        let now = self.now();
        self.proto
            .handle(now, Input::Received { from: n.from, msg })
    }

    /// Handles messages arriving while a computation runs, until `deadline` (and at least
    /// those already queued): real time goes on for the network while a worker computes.
    fn receive_until(&mut self, deadline: Instant) -> Result<()> {
        let mut buf = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.wait(left)? {
                Arrival::Message(n) => self.deliver(n, &mut buf, true)?,
                Arrival::Nothing => return Ok(()),
                Arrival::Done => {}
            }
        }
    }

    fn evaluate(&mut self) {
        let (loss, accuracy) = self.ctx.workload.evaluate(&self.model);
        self.out.progress.push(ProgressRow {
            time: self.now() as f64 * 1e-9,
            iteration: (self.applied_total * self.eval_scale) as f64 / self.workers.max(1) as f64,
            loss,
            accuracy,
        });
    }

    fn send(&mut self, to: NodeId, msg: Message) -> Result<()> {
        // A worker or peer that said done has finished and would discard the message; it may
        // already have left, so nothing is posted to it (a server that said done still answers,
        // and stays until every node it hears from said done).
        if self.done_from[to] && self.ctx.roles[to] != Role::Server {
            return Ok(());
        }
        let depth = self.ep.remote_depth(to)?;
        // Out of credits: keep receiving until `to` has handled enough of its ring.
        let stall = Duration::from_millis(self.ctx.cfg.stall_timeout_ms);
        let mut buf = Vec::new();
        while self.unacked[to] >= depth as u64 {
            match self.wait(stall)? {
                Arrival::Message(n) => self.deliver(n, &mut buf, true)?,
                Arrival::Done => {}
                Arrival::Nothing => {
                    return Err(CoreError::Deadlock {
                        time_ns: self.now(),
                        message: format!(
                        "node {} waited {} ms for node {to} to handle its {depth} queued messages",
                        self.node(),
                        self.ctx.cfg.stall_timeout_ms
                    ),
                    })
                }
            }
        }
        self.unacked[to] += 1;
        let payload = self.ctx.workload.outgoing(&mut self.model, to, &msg);
        self.out_version[to] += 1;
        let version = self.out_version[to];
        let slot = (version as usize) % depth;
        let (data, len, bytes) = match payload {
            Some(p) => {
                let words = encode(&p);
                let len = words.len();
                (
                    Some(Arc::new(AlignedWords::from_words(&words))),
                    len,
                    p.wire_bytes(),
                )
            }
            None => (None, 0, 0),
        };
        self.ep
            .post_write(to, slot, version, data, len, Some(msg.encode()))?;
        while self.ep.poll_completion().is_some() {}
        let total = HEADER_BYTES + bytes;
        self.out.bytes += total;
        self.bytes_in_iter += total;
        Ok(())
    }

    fn drain(&mut self) -> Result<()> {
        let node = self.node();
        while let Some(action) = self.proto.poll_action() {
            match action {
                Action::Send { to, msg } => self.send(to, msg)?,
                Action::Compute { iter } => {
                    let Role::Worker(w) = self.ctx.roles[node] else {
                        return Err(CoreError::Protocol {
                            node,
                            message: "only workers compute".into(),
                        });
                    };
                    let t0 = Instant::now();
                    self.ctx
                        .workload
                        .compute(&mut self.model, w, self.workers, iter);
                    let factor = self.ctx.sampler.as_mut().map_or(1.0, |s| s.next_factor());
                    let modelled = Duration::from_nanos(
                        (self.ctx.cfg.compute.ns_per_example
                            * self.ctx.workload.batch_size(self.workers) as f64
                            * factor) as u64,
                    );
                    self.receive_until(t0 + modelled)?;
                    let now = self.now();
                    self.proto.handle(now, Input::ComputeDone { iter })?;
                }
                Action::Apply { .. }
                | Action::Discard { .. }
                | Action::Install { .. }
                | Action::Commit { .. }
                | Action::Reduce { .. }
                | Action::RowSet { .. } => {
                    let effect = self.ctx.workload.carry_out(
                        &mut self.model,
                        node,
                        &action,
                        &self.ctx.roles,
                    )?;
                    if let Some(effect) = effect {
                        let before = self.applied_total;
                        self.applied_total += effect.results_applied();
                        if effect == PayloadEffect::Discarded {
                            self.out.dropped += 1;
                        }
                        if self.ctx.evaluator
                            && crosses(
                                before * self.eval_scale,
                                self.applied_total * self.eval_scale,
                                self.ctx.cfg.eval_every,
                            )
                        {
                            self.evaluate();
                        }
                    }
                }
                Action::Record(Event::Iteration(r)) => {
                    let bytes = std::mem::take(&mut self.bytes_in_iter);
                    self.out
                        .iterations
                        .push(IterationRow::from_record(&r, bytes));
                }
                Action::Record(Event::TaskWait { worker, iter, wait }) => {
                    self.out.waits.push(WaitRow { worker, iter, wait });
                }
                Action::Record(Event::RowReads {
                    worker,
                    clock,
                    differentials,
                }) => {
                    self.out.row_reads.extend(differentials.into_iter().map(
                        |(differential, rows)| RowReadRow {
                            worker,
                            clock,
                            differential,
                            rows,
                        },
                    ));
                }
                Action::Record(Event::Read { .. }) | Action::Finished => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_round_trip() {
        let p = Payload {
            data: Arc::new(vec![1.5, -2.0, 3.25]),
            applied: Arc::new(vec![4, 5]),
        };
        let w = encode(&p);
        assert_eq!(w.len(), crate::learning::payload_words(2, 3));
        assert_eq!(decode(&w, 0).unwrap(), p);
        assert!(decode(&w[..3], 0).is_err());
    }

    #[test]
    fn end_signals_are_not_messages() {
        assert!(Message::decode(DONE, 0).is_err());
        assert!(Message::decode(STOP, 0).is_err());
        assert!(Message::decode(DONE_ACK, 0).is_err());
        assert!(Message::decode([CREDIT, 4], 0).is_err());
    }

    #[test]
    fn abort_flag_keeps_the_first_reason() {
        let f = AbortFlag::default();
        assert_eq!(f.reason(), None);
        f.raise("rank 2 lost");
        f.raise("later");
        assert_eq!(f.reason().as_deref(), Some("rank 2 lost"));
    }
}
