//! The receive-buffer reduce with one OS thread per peer over the threads transport: every
//! receiver registers one single-slot ring per in-neighbour, the copy engines carry out the
//! one-sided writes while readers read, and a reduce keeps a buffer only when the seqlock's
//! header and footer versions agree. Tearing is real here, not modelled.
//!
//! Notifications (NOTIFY-ACK's NOTIFY and ACK) are notification-only posts; a NOTIFY follows its
//! write through the same copy engine, so it is delivered after the data.

use super::{
    average_into, step, write_bytes, BufferedConfig, BufferedRecords, BufferedSetup, ReduceRow,
    CONTROL_BYTES,
};
use crate::driver::cluster::PeerBarrier;
use crate::driver::node_thread::AbortFlag;
use crate::error::{CoreError, Result, TransportFault};
use crate::learning::Workload;
use crate::metrics::seconds;
use crate::metrics::ProgressRow;
use crate::protocol::buffered::{BufferedAction, BufferedInput, BufferedPeer};
use crate::transport::threads::ThreadsFabric;
use crate::transport::{AlignedWords, Endpoint};
use std::collections::BTreeSet;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const TAG_NOTIFY: u64 = 1;
const TAG_ACK: u64 = 2;
/// A peer finished: it posts nothing more to the receiver (see [`PeerThread::farewell`]).
const TAG_DONE: u64 = 3;

/// A reusable barrier whose wait gives up after a timeout (a failed peer must not hang the
/// others forever).
#[derive(Debug)]
pub(crate) struct TimedBarrier {
    n: usize,
    state: Mutex<(usize, u64)>,
    cv: Condvar,
}

impl TimedBarrier {
    pub(crate) fn new(n: usize) -> Self {
        TimedBarrier {
            n,
            state: Mutex::new((0, 0)),
            cv: Condvar::new(),
        }
    }

    /// Waits for all `n`; false on timeout.
    pub(crate) fn wait(&self, timeout: Duration) -> bool {
        let mut s = self.state.lock().expect("barrier lock");
        let generation = s.1;
        s.0 += 1;
        if s.0 == self.n {
            s.0 = 0;
            s.1 += 1;
            self.cv.notify_all();
            return true;
        }
        let (s, r) = self
            .cv
            .wait_timeout_while(s, timeout, |s| s.1 == generation)
            .expect("barrier lock");
        drop(s);
        !r.timed_out()
    }
}

/// Model parameters as transport words, two f32 per word.
fn encode(model: &[f32]) -> Vec<u64> {
    model
        .chunks(2)
        .map(|p| p[0].to_bits() as u64 | ((p.get(1).map_or(0, |x| x.to_bits()) as u64) << 32))
        .collect()
}

fn decode(words: &[u64], dim: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(dim);
    for w in words {
        out.push(f32::from_bits(*w as u32));
        if out.len() < dim {
            out.push(f32::from_bits((*w >> 32) as u32));
        }
    }
    out.truncate(dim);
    out
}

impl PeerBarrier for TimedBarrier {
    fn wait(&self, timeout: Duration) -> bool {
        TimedBarrier::wait(self, timeout)
    }
}

/// What one peer measured (serialisable: cluster ranks send theirs to rank 0).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct PeerOutcome {
    pub(crate) node: usize,
    pub(crate) reduces: Vec<ReduceRow>,
    pub(crate) progress: Vec<ProgressRow>,
    pub(crate) bytes: u64,
    pub(crate) end: u64,
}

/// Merges the peers' outcomes of a run of `n` peers.
pub(crate) fn merge(n: usize, outcomes: Vec<PeerOutcome>) -> BufferedRecords {
    let mut records = BufferedRecords {
        bytes_sent: vec![0; n],
        ..Default::default()
    };
    for o in outcomes {
        records.reduces.extend(o.reduces);
        records.progress.extend(o.progress);
        if let Some(b) = records.bytes_sent.get_mut(o.node) {
            *b = o.bytes;
        }
        records.makespan = records.makespan.max(o.end);
    }
    records.reduces.sort_by_key(|r| (r.time, r.worker, r.iter));
    records.progress.sort_by(|a, b| a.time.total_cmp(&b.time));
    records
}

/// Starts one thread per peer; each returns its outcome.
pub(crate) fn spawn_peers<E: Endpoint + 'static>(
    cfg: &BufferedConfig,
    setup: &BufferedSetup<'_>,
    peers: Vec<(BufferedPeer, E)>,
    barrier: Arc<dyn PeerBarrier>,
    start: Instant,
    abort: Arc<AbortFlag>,
) -> Result<Vec<(usize, std::thread::JoinHandle<Result<PeerOutcome>>)>> {
    let n = setup.topology.nodes();
    let dim = setup.workload.dim();
    peers
        .into_iter()
        .map(|(peer, ep)| {
            let node = peer.node();
            let mut neighbors = setup.topology.in_neighbors(node);
            neighbors.extend(setup.topology.out_neighbors(node));
            neighbors.retain(|&j| j != node);
            let neighbors: BTreeSet<usize> = neighbors.into_iter().collect();
            let sampler = setup.stragglers.sampler(n, node, setup.seed);
            let thread = PeerThread {
                cfg: cfg.clone(),
                workload: setup.workload.clone(),
                evaluator: node == setup.eval_node,
                peer,
                ep,
                barrier: barrier.clone(),
                neighbors,
                finished: BTreeSet::new(),
                start,
                n,
                dim,
                abort: abort.clone(),
                seed: setup.seed,
            };
            std::thread::Builder::new()
                .name(format!("peer-{node}"))
                .spawn(move || thread.run(sampler?))
                .map(|h| (node, h))
                .map_err(|e| {
                    CoreError::transport(
                        TransportFault::Setup,
                        format!("cannot start peer {node}: {e}"),
                    )
                })
        })
        .collect()
}

/// Joins peer threads: their outcomes, or the failure worth reporting.
pub(crate) fn join_peers(
    handles: Vec<(usize, std::thread::JoinHandle<Result<PeerOutcome>>)>,
) -> Result<Vec<PeerOutcome>> {
    let mut out = Vec::with_capacity(handles.len());
    let mut first_err: Option<CoreError> = None;
    for (node, h) in handles {
        match h.join() {
            Ok(Ok(o)) => out.push(o),
            Ok(Err(e)) => crate::driver::keep_failure(&mut first_err, e),
            Err(_) => crate::driver::keep_failure(
                &mut first_err,
                CoreError::Protocol {
                    node,
                    message: "peer thread panicked".into(),
                },
            ),
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Runs the peers of `setup` with one thread each.
///
/// # Errors
/// Bad settings, a protocol or transport error, or a deadlock after `stall_timeout_ms` without
/// progress (the first error of any peer).
pub fn run(cfg: &BufferedConfig, setup: &BufferedSetup<'_>) -> Result<BufferedRecords> {
    let n = setup.topology.nodes();
    cfg.validate(n)?;
    let peers = setup.peers(cfg.iterations)?;
    let dim = setup.workload.dim();
    let words = dim.div_ceil(2);
    let mut fabric = ThreadsFabric::new(n);
    for p in &peers {
        for &from in p.ins() {
            fabric.register(from, p.node(), words, 1)?;
        }
    }
    let barrier: Arc<dyn PeerBarrier> = Arc::new(TimedBarrier::new(n));
    let handles = spawn_peers(
        cfg,
        setup,
        peers.into_iter().zip(fabric.endpoints()).collect(),
        barrier,
        Instant::now(),
        Arc::new(AbortFlag::default()),
    )?;
    Ok(merge(n, join_peers(handles)?))
}

struct PeerThread<E: Endpoint> {
    cfg: BufferedConfig,
    workload: Arc<dyn Workload>,
    evaluator: bool,
    peer: BufferedPeer,
    ep: E,
    barrier: Arc<dyn PeerBarrier>,
    /// The peers this one writes to or hears from (in- and out-neighbours, ACKs included).
    neighbors: BTreeSet<usize>,
    /// Neighbours that said they finished ([`TAG_DONE`]).
    finished: BTreeSet<usize>,
    start: Instant,
    n: usize,
    dim: usize,
    abort: Arc<AbortFlag>,
    /// The run seed (start offsets).
    seed: u64,
}

/// How often an empty wait checks the transport and the abort flag.
const HEALTH_EVERY: Duration = Duration::from_millis(50);

impl<E: Endpoint> PeerThread<E> {
    /// Waits up to `limit` for a notification, checking the transport's health and the abort
    /// flag between slices.
    fn wait(&mut self, limit: Duration) -> Result<Option<crate::transport::Notification>> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if let Some(n) = self.ep.wait_notification(left.min(HEALTH_EVERY)) {
                return Ok(Some(n));
            }
            self.ep.health()?;
            if let Some(reason) = self.abort.reason() {
                return Err(CoreError::Stopped {
                    node: self.peer.node(),
                    message: reason,
                });
            }
            if left.is_zero() {
                return Ok(None);
            }
        }
    }

    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    fn deadlock(&self) -> CoreError {
        CoreError::Deadlock {
            time_ns: self.now(),
            message: format!(
                "{} (nothing for {} ms)",
                self.peer.waiting_on(),
                self.cfg.stall_timeout_ms
            ),
        }
    }

    fn run(mut self, mut sampler: crate::straggler::StragglerSampler) -> Result<PeerOutcome> {
        let i = self.peer.node();
        let stall = Duration::from_millis(self.cfg.stall_timeout_ms);
        let mut model = self.workload.initial_model();
        let mut out = PeerOutcome {
            node: i,
            ..PeerOutcome::default()
        };
        if self.evaluator {
            self.evaluate(&model, 0, &mut out);
        }
        let mut snapshot: Option<(u64, Arc<AlignedWords>)> = None;
        let mut buf = Vec::new();
        let offset = self.cfg.start_offset_ns(i, self.seed);
        if offset > 0 {
            std::thread::sleep(Duration::from_nanos(offset));
        }
        self.peer.handle(BufferedInput::Start)?;
        loop {
            let Some(action) = self.peer.poll_action() else {
                if self.peer.is_finished() {
                    break;
                }
                let note = self.wait(stall)?.ok_or_else(|| self.deadlock())?;
                let input = match note.imm[0] {
                    TAG_NOTIFY => BufferedInput::Notified {
                        from: note.from,
                        version: note.imm[1],
                    },
                    TAG_ACK => BufferedInput::Acked { from: note.from },
                    TAG_DONE => {
                        self.finished.insert(note.from);
                        continue;
                    }
                    tag => {
                        return Err(CoreError::transport(
                            TransportFault::Malformed,
                            format!(
                                "peer {i}: notification with unknown tag {tag} from node {}",
                                note.from
                            ),
                        ))
                    }
                };
                self.peer.handle(input)?;
                continue;
            };
            match action {
                BufferedAction::Compute { iter } => {
                    let t0 = Instant::now();
                    step(&*self.workload, &mut model, i, self.n, iter);
                    let modelled = Duration::from_nanos(
                        (self.cfg.compute.ns_per_example
                            * self.workload.batch_size(self.n) as f64
                            * sampler.next_factor()) as u64,
                    );
                    let left = (t0 + modelled).saturating_duration_since(Instant::now());
                    if !left.is_zero() {
                        std::thread::sleep(left);
                    }
                    self.peer.handle(BufferedInput::ComputeDone)?;
                }
                BufferedAction::Write {
                    to,
                    version,
                    notify,
                } => {
                    let data = match &snapshot {
                        Some((v, d)) if *v == version => d.clone(),
                        _ => {
                            let d = Arc::new(AlignedWords::from_words(&encode(&model)));
                            snapshot = Some((version, d.clone()));
                            d
                        }
                    };
                    let len = data.len();
                    let imm = notify.then_some([TAG_NOTIFY, version]);
                    self.ep.post_write(to, 0, version, Some(data), len, imm)?;
                    out.bytes += write_bytes(self.dim);
                }
                BufferedAction::Barrier { .. } => {
                    if !self.barrier.wait(stall) {
                        if let Some(reason) = self.abort.reason() {
                            return Err(CoreError::Stopped {
                                node: i,
                                message: reason,
                            });
                        }
                        return Err(self.deadlock());
                    }
                    self.peer.handle(BufferedInput::Released)?;
                }
                BufferedAction::Reduce { iter, inputs } => {
                    let mut used = Vec::with_capacity(inputs.len());
                    let (mut consistent, mut current) = (0, 0);
                    let as_read_too = self.cfg.averages_torn(self.peer.mode());
                    for &from in &inputs {
                        let r = self.ep.read_slot(from, 0, &mut buf)?;
                        let complete = r.len == self.dim.div_ceil(2);
                        if r.consistent() && r.header > 0 && complete {
                            used.push(Arc::new(decode(&buf, self.dim)));
                            consistent += 1;
                            if r.header == iter + 1 {
                                current += 1;
                            }
                        } else if as_read_too && complete && r.header.max(r.footer) > 0 {
                            // Torn: the words as the copy engine left them mid-write.
                            used.push(Arc::new(decode(&buf, self.dim)));
                        }
                    }
                    average_into(&mut model, &used);
                    let now = self.now();
                    out.reduces.push(ReduceRow {
                        worker: i,
                        iter,
                        inputs_expected: inputs.len(),
                        inputs_consistent: consistent,
                        inputs_current: current,
                        time: now,
                    });
                    let every = self.cfg.eval_every;
                    if self.evaluator && every > 0 && (iter + 1) % every == 0 {
                        self.evaluate(&model, iter + 1, &mut out);
                    }
                    self.peer.handle(BufferedInput::Reduced)?;
                }
                BufferedAction::Ack { to } => {
                    self.ep.post_notify(to, [TAG_ACK, 0])?;
                    out.bytes += CONTROL_BYTES;
                }
                BufferedAction::Finished => {}
            }
            while self.ep.poll_completion().is_some() {}
        }
        out.end = self.now();
        if self.evaluator {
            self.evaluate(&model, self.peer.iteration(), &mut out);
            // The training objective of the first and last evaluation's models, after this
            // peer's end time (a pass over the training rows each, as the held-out evaluation
            // is one over the test rows), not before its first iteration.
            let last = self.workload.objective(&model);
            if last.is_some() {
                let initial = self.workload.objective(&self.workload.initial_model());
                if let Some(p) = out.progress.first_mut() {
                    p.train_objective = initial;
                }
            }
            if let Some(p) = out.progress.last_mut() {
                p.train_objective = last;
            }
        }
        self.farewell(stall)?;
        Ok(out)
    }

    /// Says done to every neighbour, then waits until every neighbour said done, taking what
    /// still arrives (too late to matter: this peer has finished). So no peer tears its
    /// endpoint down while a neighbour may still write to it: on a real RDMA device a write
    /// into a peer whose queue pairs are gone is never acknowledged and its sender stalls
    /// (seen on soft-RoCE: asap-fig7's ASYNC peers finish at different times), where the
    /// threads and shm backends let the write land in memory nobody reads. A peer's done is
    /// its last post to each neighbour, so when every neighbour's done has arrived, every
    /// write to this peer has landed.
    ///
    /// # Errors
    /// A neighbour stays silent for the stall timeout, or the transport fails.
    fn farewell(&mut self, stall: Duration) -> Result<()> {
        let i = self.peer.node();
        for &to in &self.neighbors {
            self.ep.post_notify(to, [TAG_DONE, 0])?;
        }
        while self.finished.len() < self.neighbors.len() {
            let Some(note) = self.wait(stall)? else {
                let left: Vec<_> = self.neighbors.difference(&self.finished).collect();
                return Err(CoreError::Deadlock {
                    time_ns: self.now(),
                    message: format!(
                        "peer {i} finished and waited {} ms for peers {left:?} to finish",
                        self.cfg.stall_timeout_ms
                    ),
                });
            };
            match note.imm[0] {
                TAG_DONE => {
                    self.finished.insert(note.from);
                }
                TAG_NOTIFY | TAG_ACK => {}
                tag => {
                    return Err(CoreError::transport(
                        TransportFault::Malformed,
                        format!(
                            "peer {i}: notification with unknown tag {tag} from node {}",
                            note.from
                        ),
                    ))
                }
            }
            while self.ep.poll_completion().is_some() {}
        }
        Ok(())
    }

    fn evaluate(&self, model: &[f32], iteration: u64, out: &mut PeerOutcome) {
        let (loss, accuracy) = self.workload.evaluate(model);
        out.progress.push(ProgressRow {
            time: seconds(self.now()),
            iteration: iteration as f64,
            loss,
            accuracy,
            train_objective: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_odd_and_even() {
        for m in [vec![1.5f32, -2.0, 3.25], vec![0.5, 7.0]] {
            assert_eq!(decode(&encode(&m), m.len()), m);
        }
    }

    #[test]
    fn barrier_releases_all_and_times_out_alone() {
        let b = Arc::new(TimedBarrier::new(2));
        let b2 = b.clone();
        let h = std::thread::spawn(move || b2.wait(Duration::from_secs(10)));
        assert!(b.wait(Duration::from_secs(10)));
        assert!(h.join().unwrap());
        assert!(
            !b.wait(Duration::from_millis(20)),
            "a lone waiter must time out"
        );
    }
}
