//! The loop of one protocol node in real time over any [`Endpoint`]: handle the protocol's
//! actions (sends under credits, computations, model effects, records), wait for messages,
//! and end the run with the link exchange of [`super::links`].
//!
//! Computation is real; a computation takes `max(real time, modelled time)` where the modelled
//! time is the [`ComputeModel`](crate::driver::ComputeModel) times the straggler factor (the
//! thread sleeps the difference, receiving meanwhile), so the same configuration means the same
//! thing under `sim`, `threads` and `cluster`. With `compute.measured` the modelled time is the
//! measured one times the factor: a worker at 1/k of its device's speed waits k - 1 times its
//! measured step, so speed ratios are realised on real compute (DSSP's mixed GPUs on one model
//! of GPU).

use super::codec::{decode, encode};
use super::links::{Links, Signal};
use super::{AbortFlag, NodeOutcome, ThreadsConfig};
use crate::driver::crosses;
use crate::error::{CoreError, Result, TransportFault};
use crate::learning::{Learning, PayloadEffect, HEADER_BYTES};
use crate::metrics::seconds;
use crate::metrics::{EventRows, ProgressRow};
use crate::protocol::{Action, Input, Message, NodeId, Protocol, Role, MESSAGE_WORDS};
use crate::straggler::StragglerSampler;
use crate::transport::{AlignedWords, Endpoint, Notification};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often an empty wait asks the transport and the abort flag for failures.
const HEALTH_EVERY: Duration = Duration::from_millis(50);

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
    let workers = crate::driver::worker_count(&ctx.roles);
    let has_server = ctx.roles.contains(&Role::Server);
    let node = proto.node();
    let model = ctx.workload.node(node, proto.role(), workers);
    let links = Links::new(
        node,
        ctx.roles.len(),
        ctx.sends_to.clone(),
        ctx.hears_from.clone(),
        ctx.cfg.ring_depth,
    );
    let mut t = NodeThread {
        proto,
        ep,
        model,
        workers,
        // A peer counts only its own reduces: scale to the run's total.
        eval_scale: if has_server { 1 } else { workers.max(1) as u64 },
        out_version: vec![0; ctx.roles.len()],
        out: NodeOutcome {
            node,
            ..NodeOutcome::default()
        },
        bytes_in_iter: 0,
        applied_total: 0,
        links,
        ctx,
    };
    let result = t.run();
    if result.is_err() {
        // Best effort: the others stop now rather than after their stall timeout.
        for &to in t.links.sends_to() {
            let _ = t.ep.post_notify(to, Signal::Stop.encode());
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
    /// Done, acknowledgement and credit state of this node's links.
    links: Links,
    ctx: NodeContext<L>,
}

/// What a wait brought.
enum Arrival {
    Message(Notification),
    /// A link signal (done, acknowledgement, credits), taken by [`Links`]: nothing for the
    /// protocol.
    Signal,
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
        loop {
            self.drain()?;
            if self.proto.is_finished() {
                break;
            }
            let stall = self.ctx.cfg.stall_timeout_ms;
            if let Some(n) = self.next_message(|t| {
                format!(
                    "node {} received nothing for {stall} ms: {}",
                    t.node(),
                    t.proto.waiting_on()
                )
            })? {
                self.deliver(n, &mut buf, true)?;
            }
        }
        if self.ctx.evaluator {
            self.evaluate();
        }
        self.out.end = self.now();
        if self.ctx.evaluator {
            self.mark_objectives();
        }
        for i in 0..self.links.sends_to().len() {
            let to = self.links.sends_to()[i];
            self.ep.post_notify(to, Signal::Done.encode())?;
        }
        // A server keeps answering (late updates with backup workers, final reads); other
        // nodes only consume what still arrives.
        let answer = self.proto.role() == Role::Server;
        while let Some(waiting) = self.links.ending_waits_on() {
            let stall = self.ctx.cfg.stall_timeout_ms;
            if let Some(n) = self.next_message(|t| {
                format!(
                    "node {} finished but node {waiting} did not end its run (or acknowledge the end of this one) within {stall} ms",
                    t.node()
                )
            })? {
                self.deliver(n, &mut buf, answer)?;
                if answer {
                    self.drain()?;
                }
            }
        }
        Ok(())
    }

    /// Waits up to the stall timeout for the next arrival: a protocol message (`Some`), or a
    /// link signal (`None`). Nothing at all is a deadlock, described by `stalled`.
    fn next_message(
        &mut self,
        stalled: impl FnOnce(&Self) -> String,
    ) -> Result<Option<Notification>> {
        let stall = Duration::from_millis(self.ctx.cfg.stall_timeout_ms);
        match self.wait(stall)? {
            Arrival::Message(n) => Ok(Some(n)),
            Arrival::Signal => Ok(None),
            Arrival::Nothing => Err(CoreError::Deadlock {
                time_ns: self.now(),
                message: stalled(self),
            }),
        }
    }

    /// Waits up to `limit` for a message, checking the transport's health and the abort flag
    /// every [`HEALTH_EVERY`]; link signals are taken by [`Links`] here, and its answers posted.
    fn wait(&mut self, limit: Duration) -> Result<Arrival> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.ep.wait_notification(left.min(HEALTH_EVERY)) {
                Some(n) => match Signal::decode(n.imm) {
                    Some(signal) => {
                        if let Some(reply) = self.links.on_signal(n.from, signal)? {
                            self.ep.post_notify(n.from, reply.encode())?;
                            while self.ep.poll_completion().is_some() {}
                        }
                        return Ok(Arrival::Signal);
                    }
                    None => return Ok(Arrival::Message(n)),
                },
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
        if let Some(credit) = self.links.handled(n.from) {
            self.ep.post_notify(n.from, credit.encode())?;
            while self.ep.poll_completion().is_some() {}
        }
        result
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
                Arrival::Signal => {}
            }
        }
    }

    fn evaluate(&mut self) {
        let (loss, accuracy) = self.ctx.workload.evaluate(&self.model);
        self.out.progress.push(ProgressRow {
            time: seconds(self.now()),
            iteration: (self.applied_total * self.eval_scale) as f64 / self.workers.max(1) as f64,
            loss,
            accuracy,
            train_objective: None,
        });
    }

    /// Adds the training objective to the first evaluation (the initial model, every node's
    /// start) and the last (this node's final model). Computed after this node's end time, not
    /// before its first iteration: a pass over the training rows each, as the final held-out
    /// evaluation is one over the test rows, before the node says done (a server still
    /// answering late reads answers them that much later).
    fn mark_objectives(&mut self) {
        let last = self.ctx.workload.objective(&self.model);
        if let Some(p) = self.out.progress.last_mut() {
            p.train_objective = last;
        }
        if last.is_some() && self.out.progress.len() > 1 {
            let initial = self
                .ctx
                .workload
                .node(self.node(), self.proto.role(), self.workers);
            let first = self.ctx.workload.objective(&initial);
            if let Some(p) = self.out.progress.first_mut() {
                p.train_objective = first;
            }
        }
    }

    fn send(&mut self, to: NodeId, msg: Message) -> Result<()> {
        // A worker or peer that said done has finished and would discard the message; it may
        // already have left, so nothing is posted to it (a server that said done still answers,
        // and stays until every node it hears from said done).
        if self.links.said_done(to) && self.ctx.roles[to] != Role::Server {
            return Ok(());
        }
        let depth = self.ep.remote_depth(to)?;
        // Out of credits: keep receiving until `to` has handled enough of its ring.
        let mut buf = Vec::new();
        while !self.links.has_credit(to, depth) {
            let stall = self.ctx.cfg.stall_timeout_ms;
            if let Some(n) = self.next_message(|t| {
                format!(
                    "node {} waited {stall} ms for node {to} to handle its {depth} queued messages",
                    t.node()
                )
            })? {
                self.deliver(n, &mut buf, true)?;
            }
        }
        self.links.posted(to);
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
                    // A row-table clock is several computes; each is its share of the clock.
                    let steps = self
                        .ctx
                        .workload
                        .computes_per_iteration(self.workers)
                        .max(1);
                    let factor = self
                        .ctx
                        .sampler
                        .as_mut()
                        .map_or(1.0, |s| s.next_step_factor(steps));
                    // compute.measured: the measured step times the factor (a worker at 1/k
                    // of its device waits k - 1 times its measured step); otherwise the
                    // modelled time, at least the real one.
                    let modelled = if self.ctx.cfg.compute.measured {
                        t0.elapsed().mul_f64(factor.max(0.0))
                    } else {
                        Duration::from_nanos(
                            (self.ctx.cfg.compute.ns_per_example
                                * self.ctx.workload.batch_size(self.workers) as f64
                                / steps as f64
                                * factor) as u64,
                        )
                    };
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
                Action::Record(event) => {
                    // An iteration's bytes: those sent since the previous iteration ended,
                    // including this update.
                    EventRows {
                        iterations: &mut self.out.iterations,
                        waits: &mut self.out.waits,
                        row_reads: &mut self.out.row_reads,
                    }
                    .record(event, || std::mem::take(&mut self.bytes_in_iter));
                }
                Action::Finished => {}
            }
        }
        Ok(())
    }
}
