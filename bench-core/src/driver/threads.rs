//! The real-time driver: one OS thread per node, exchanging every payload through the threads
//! transport (one-sided writes into per-sender slot rings, notification after the data), never
//! through shared pointers.
//!
//! Computation is real; a computation takes `max(real time, modelled time)` where the modelled
//! time is the [`ComputeModel`] times the straggler factor (the thread sleeps the difference), so
//! the same configuration means the same thing under `sim` and `threads`.

use super::learning::Learning;
use super::node_model::{Payload, PayloadEffect, HEADER_BYTES};
use super::{crosses, ComputeModel};
use crate::error::{CoreError, Result};
use crate::metrics::{IterationRow, ProgressRow, RunRecords, WaitRow};
use crate::protocol::{Action, Event, Input, Message, NodeId, Protocol, Role, MESSAGE_WORDS};
use crate::straggler::StragglerConfig;
use crate::transport::threads::{ThreadsEndpoint, ThreadsFabric};
use crate::transport::{AlignedWords, Endpoint};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Threads-driver settings.
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

/// Encodes a payload as words: `[n_applied, applied..., n_f32, f32 pairs...]`.
fn encode(p: &Payload) -> Vec<u64> {
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

fn decode(words: &[u64], from: NodeId) -> Result<Payload> {
    let bad = || CoreError::Transport(format!("malformed payload from node {from}"));
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

struct NodeOutcome {
    dropped: u64,
    waits: Vec<WaitRow>,
    iterations: Vec<IterationRow>,
    progress: Vec<ProgressRow>,
    bytes: u64,
    events: u64,
    end: u64,
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
    let workers = roles
        .iter()
        .filter(|r| matches!(r, Role::Worker(_)))
        .count();
    let mut fabric = ThreadsFabric::new(n);
    let cap = workload.payload_words(workers);
    // Rings between the server and every worker; without a server (peers), between every
    // pair (rings no edge uses stay untouched, allocated lazily by the OS as zero pages).
    let has_server = roles.contains(&Role::Server);
    // The node whose model progress.csv evaluates: the learning's choice, the server, or peer 0.
    let evaluator = workload
        .eval_node()
        .or_else(|| roles.iter().position(|r| *r == Role::Server))
        .unwrap_or(0);
    for from in 0..n {
        for to in 0..n {
            if from != to
                && (!has_server || roles[from] == Role::Server || roles[to] == Role::Server)
            {
                fabric.register(from, to, cap, cfg.ring_depth)?;
            }
        }
    }
    let endpoints = fabric.endpoints();
    let start = Instant::now();
    // Workers still running: the server keeps answering (late updates, last reads) until 0.
    let workers_running = Arc::new(std::sync::atomic::AtomicUsize::new(workers));
    let handles: Vec<_> = nodes
        .into_iter()
        .zip(endpoints)
        .map(|(proto, ep)| {
            let workload = workload.clone();
            let roles = roles.clone();
            let cfg = *cfg;
            let running = workers_running.clone();
            let sampler = match proto.role() {
                Role::Worker(w) => Some(stragglers.sampler(workers, w, seed)),
                Role::Server => None,
            }
            .transpose();
            std::thread::Builder::new()
                .name(format!("node-{}", proto.node()))
                .spawn(move || -> Result<NodeOutcome> {
                    let sampler = sampler.inspect_err(|_| {
                        running.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    })?;
                    let is_worker = matches!(proto.role(), Role::Worker(_));
                    let model = workload.node(proto.node(), proto.role(), workers);
                    let proto_node = proto.node();
                    let result = NodeThread {
                        proto,
                        ep,
                        model,
                        workload,
                        roles,
                        workers,
                        cfg,
                        sampler,
                        start,
                        out_version: vec![0; n],
                        out: NodeOutcome {
                            dropped: 0,
                            waits: Vec::new(),
                            iterations: Vec::new(),
                            progress: Vec::new(),
                            bytes: 0,
                            events: 0,
                            end: 0,
                        },
                        bytes_in_iter: 0,
                        applied_total: 0,
                        evaluator: proto_node == evaluator,
                        // A peer counts only its own reduces: scale to the run's total.
                        eval_scale: if has_server { 1 } else { workers.max(1) as u64 },
                        workers_running: running.clone(),
                    }
                    .run();
                    // The worker's endpoint (and its copy engine) is gone by now, so every
                    // message it sent has been delivered before the server sees the count drop.
                    if is_worker {
                        running.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    }
                    result
                })
                .expect("spawn node thread")
        })
        .collect();
    let mut records = RunRecords {
        bytes_sent: vec![0; n],
        ..RunRecords::default()
    };
    let mut first_err = None;
    for (node, h) in handles.into_iter().enumerate() {
        match h.join() {
            Ok(Ok(o)) => {
                records.iterations.extend(o.iterations);
                records.waits.extend(o.waits);
                records.progress.extend(o.progress);
                records.bytes_sent[node] = o.bytes;
                records.events += o.events;
                records.dropped_updates += o.dropped;
                records.makespan = records.makespan.max(o.end);
            }
            Ok(Err(e)) => super::keep_failure(&mut first_err, e),
            Err(_) => {
                first_err.get_or_insert(CoreError::Protocol {
                    node,
                    message: "node thread panicked".into(),
                });
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    records
        .iterations
        .sort_by_key(|r| (r.end, r.worker, r.iter));
    records.progress.sort_by(|a, b| a.time.total_cmp(&b.time));
    Ok(records)
}

struct NodeThread<L: Learning + ?Sized> {
    proto: Box<dyn Protocol>,
    ep: ThreadsEndpoint,
    model: L::Node,
    workload: Arc<L>,
    roles: Vec<Role>,
    workers: usize,
    cfg: ThreadsConfig,
    sampler: Option<crate::straggler::StragglerSampler>,
    start: Instant,
    /// Writes posted to each peer so far (slot = count % depth, version = count).
    out_version: Vec<u64>,
    out: NodeOutcome,
    bytes_in_iter: u64,
    applied_total: u64,
    /// This node's model is the one progress.csv evaluates.
    evaluator: bool,
    /// Factor from this node's applied count to the run's (peers: the worker count).
    eval_scale: u64,
    workers_running: Arc<std::sync::atomic::AtomicUsize>,
}

impl<L: Learning + ?Sized> NodeThread<L> {
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    fn run(mut self) -> Result<NodeOutcome> {
        let node = self.proto.node();
        if self.evaluator {
            self.evaluate();
        }
        let now = self.now();
        self.proto.handle(now, Input::Start)?;
        let mut buf = Vec::new();
        let stall = Duration::from_millis(self.cfg.stall_timeout_ms);
        loop {
            self.drain()?;
            if self.proto.is_finished() {
                break;
            }
            let Some(n) = self.ep.wait_notification(stall) else {
                return Err(CoreError::Deadlock {
                    time_ns: self.now(),
                    message: format!(
                        "node {node} received nothing for {} ms: {}",
                        self.cfg.stall_timeout_ms,
                        self.proto.waiting_on()
                    ),
                });
            };
            self.deliver(n, &mut buf)?;
        }
        if self.evaluator {
            self.evaluate();
        }
        if self.proto.role() == Role::Server {
            self.out.end = self.now();
            // Keep answering until every worker is done: with backup workers the server
            // finishes first, and late updates and final reads still arrive.
            let idle = Duration::from_millis(5);
            loop {
                let running = self
                    .workers_running
                    .load(std::sync::atomic::Ordering::SeqCst);
                match self
                    .ep
                    .wait_notification(if running == 0 { Duration::ZERO } else { idle })
                {
                    Some(n) => {
                        self.deliver(n, &mut buf)?;
                        self.drain()?;
                    }
                    None if running == 0 => break,
                    None => {}
                }
            }
        } else {
            self.out.end = self.now();
        }
        Ok(self.out)
    }

    /// Reads the payload a notification announces and feeds the message to the protocol.
    fn deliver(&mut self, n: crate::transport::Notification, buf: &mut Vec<u64>) -> Result<()> {
        let node = self.proto.node();
        self.out.events += 1;
        let imm: [u64; MESSAGE_WORDS] = n.imm;
        let msg = Message::decode(imm, n.from)?;
        if msg.payload() != crate::protocol::PayloadKind::None {
            let r = self.ep.read_slot(n.from, n.slot, buf)?;
            if !r.consistent() || r.footer != n.version {
                return Err(CoreError::Transport(format!(
                    "node {node}: slot {} from node {} holds versions header {} / footer {}, expected {} (ring overrun or torn write)",
                    n.slot, n.from, r.header, r.footer, n.version
                )));
            }
            let p = decode(buf, n.from)?;
            self.workload.receive(&mut self.model, n.from, &msg, p);
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
            match self.ep.wait_notification(left) {
                Some(n) => self.deliver(n, &mut buf)?,
                None => return Ok(()),
            }
        }
    }

    fn evaluate(&mut self) {
        let (loss, accuracy) = self.workload.evaluate(&self.model);
        self.out.progress.push(ProgressRow {
            time: self.now() as f64 * 1e-9,
            iteration: (self.applied_total * self.eval_scale) as f64 / self.workers.max(1) as f64,
            loss,
            accuracy,
        });
    }

    fn send(&mut self, to: NodeId, msg: Message) -> Result<()> {
        let payload = self.workload.outgoing(&mut self.model, to, &msg);
        let depth = self.ep.remote_depth(to)?;
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
        let node = self.proto.node();
        while let Some(action) = self.proto.poll_action() {
            match action {
                Action::Send { to, msg } => self.send(to, msg)?,
                Action::Compute { iter } => {
                    let Role::Worker(w) = self.roles[node] else {
                        return Err(CoreError::Protocol {
                            node,
                            message: "only workers compute".into(),
                        });
                    };
                    let t0 = Instant::now();
                    self.workload
                        .compute(&mut self.model, w, self.workers, iter);
                    let factor = self.sampler.as_mut().map_or(1.0, |s| s.next_factor());
                    let modelled = Duration::from_nanos(
                        (self.cfg.compute.ns_per_example
                            * self.workload.batch_size(self.workers) as f64
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
                | Action::Reduce { .. } => {
                    let effect =
                        self.workload
                            .carry_out(&mut self.model, node, &action, &self.roles)?;
                    if let Some(effect) = effect {
                        let before = self.applied_total;
                        self.applied_total += effect.results_applied();
                        if effect == PayloadEffect::Discarded {
                            self.out.dropped += 1;
                        }
                        if self.evaluator
                            && crosses(
                                before * self.eval_scale,
                                self.applied_total * self.eval_scale,
                                self.cfg.eval_every,
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
        assert_eq!(w.len(), super::super::payload_words(2, 3));
        assert_eq!(decode(&w, 0).unwrap(), p);
        assert!(decode(&w[..3], 0).is_err());
    }
}

#[cfg(test)]
mod stall_tests {
    use super::*;
    use crate::protocol::{Input, Nanos};

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
            Arc::new(crate::workload::CountingProbe),
            &cfg,
            &StragglerConfig {
                slow: vec![],
                jitter_sigma: 0.0,
                production: None,
                random: None,
            },
            1,
        )
        .unwrap_err();
        assert!(matches!(e, CoreError::Deadlock { .. }), "{e}");
        assert!(e.to_string().contains("received nothing for 50 ms"), "{e}");
    }
}
