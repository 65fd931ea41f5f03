//! The receive-buffer reduce in virtual time, with in-flight writes modelled.
//!
//! A write posted at `t` occupies the sender's NIC and lands in the receiver's buffer over
//! `[first byte, last byte]` ([`crate::driver::NetworkModel`]); its notification (NOTIFY-ACK) is
//! delivered at the last byte. ACKs go on their own control queue: link latency only. A BSP
//! barrier is a dissemination barrier: it releases ⌈log2 n⌉ latencies after the last arrival.
//! A reduce starting at `t` reads its buffers one after another, each taking `bytes / copy_gbps`;
//! a read is torn when a write to that buffer lands during it (the seqlock's header and footer
//! would differ), and otherwise holds the last write that had landed completely before it began.
//! The reduce's outcome is decided when it ends, once every write that could overlap it has
//! been posted. An ASYNC reduce set to average whatever its buffers hold
//! ([`super::AsyncReads::AsRead`]) takes a torn buffer's words as [`super::torn::as_read`]
//! models them. Peers start at 0, or at seeded offsets within `start_spread_ns`.

use super::torn::{as_read, LandingSpan};
use super::{
    average_into, step, write_bytes, BufferedConfig, BufferedRecords, BufferedSetup, ReduceRow,
    CONTROL_BYTES,
};
use crate::driver::network::NetworkState;
use crate::error::{CoreError, Result};
use crate::metrics::seconds;
use crate::metrics::ProgressRow;
use crate::protocol::buffered::{BufferedAction, BufferedInput, BufferedPeer};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    Input(usize, Input),
    ReduceEnd(usize),
}

/// [`BufferedInput`] in an orderable form for the event queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Input {
    Start,
    ComputeDone,
    Released,
    Notified(usize, u64),
    Acked(usize),
}

impl From<Input> for BufferedInput {
    fn from(i: Input) -> Self {
        match i {
            Input::Start => BufferedInput::Start,
            Input::ComputeDone => BufferedInput::ComputeDone,
            Input::Released => BufferedInput::Released,
            Input::Notified(from, version) => BufferedInput::Notified { from, version },
            Input::Acked(from) => BufferedInput::Acked { from },
        }
    }
}

/// One write into a buffer: its version, when its bytes land, and what it carries.
#[derive(Debug, Clone)]
struct Landing {
    version: u64,
    start: u64,
    end: u64,
    data: Arc<Vec<f32>>,
}

/// A reduce in progress: its iteration, inputs and start.
#[derive(Debug, Clone)]
struct PendingReduce {
    iter: u64,
    inputs: Vec<usize>,
    start: u64,
}

struct Sim<'a> {
    cfg: &'a BufferedConfig,
    setup: &'a BufferedSetup<'a>,
    peers: Vec<BufferedPeer>,
    models: Vec<Vec<f32>>,
    samplers: Vec<crate::straggler::StragglerSampler>,
    net: NetworkState,
    /// Writes into the buffer of (sender, receiver), oldest first.
    buffers: HashMap<(usize, usize), VecDeque<Landing>>,
    /// The model snapshot of each peer's current version, shared by all its writes.
    snapshot: Vec<Option<(u64, Arc<Vec<f32>>)>>,
    queue: BinaryHeap<Reverse<(u64, u64, Due)>>,
    seq: u64,
    arrived: Vec<u64>,
    barrier_waiting: usize,
    barrier_last: u64,
    reducing: Vec<Option<PendingReduce>>,
    records: BufferedRecords,
    read_ns: u64,
    write_bytes: u64,
}

/// Runs the peers of `setup` in virtual time.
///
/// # Errors
/// Bad settings, a protocol violation, or a deadlock (no event pending before every peer
/// finished).
pub fn run(cfg: &BufferedConfig, setup: &BufferedSetup<'_>) -> Result<BufferedRecords> {
    let n = setup.topology.nodes();
    cfg.validate(n)?;
    let peers = setup.peers(cfg.iterations)?;
    let samplers = (0..n)
        .map(|w| setup.stragglers.sampler(n, w, setup.seed))
        .collect::<Result<Vec<_>>>()?;
    let dim = setup.workload.dim();
    let bytes = write_bytes(dim);
    let mut sim = Sim {
        cfg,
        setup,
        peers,
        models: vec![setup.workload.initial_model(); n],
        samplers,
        net: NetworkState::new(cfg.network.clone(), n, setup.seed),
        buffers: HashMap::new(),
        snapshot: vec![None; n],
        queue: BinaryHeap::new(),
        seq: 0,
        arrived: vec![0; n],
        barrier_waiting: 0,
        barrier_last: 0,
        reducing: vec![None; n],
        records: BufferedRecords {
            bytes_sent: vec![0; n],
            ..Default::default()
        },
        read_ns: ((bytes as f64) / cfg.copy_gbps).ceil() as u64,
        write_bytes: bytes,
    };
    sim.evaluate(0);
    for i in 0..n {
        let at = cfg.start_offset_ns(i, setup.seed);
        if at == 0 {
            sim.peers[i].handle(BufferedInput::Start)?;
            sim.drain(0, i)?;
        } else {
            sim.push(at, Due::Input(i, Input::Start));
        }
    }
    while let Some(Reverse((t, _, due))) = sim.queue.pop() {
        match due {
            Due::Input(i, input) => {
                sim.peers[i].handle(input.into())?;
                sim.drain(t, i)?;
            }
            Due::ReduceEnd(i) => {
                sim.finish_reduce(t, i);
                sim.peers[i].handle(BufferedInput::Reduced)?;
                sim.drain(t, i)?;
            }
        }
        sim.records.makespan = sim.records.makespan.max(t);
    }
    if let Some(p) = sim.peers.iter().find(|p| !p.is_finished()) {
        return Err(CoreError::Deadlock {
            time_ns: sim.records.makespan,
            message: p.waiting_on(),
        });
    }
    let end = sim.records.makespan;
    sim.evaluate(end);
    Ok(sim.records)
}

impl Sim<'_> {
    fn push(&mut self, t: u64, due: Due) {
        self.seq += 1;
        self.queue.push(Reverse((t, self.seq, due)));
    }

    /// Evaluates the evaluated node's model at the run's start or end, with its training
    /// objective (the evaluations every `eval_every` reduces, in `finish_reduce`, have none).
    fn evaluate(&mut self, t: u64) {
        let e = self.setup.eval_node;
        let (loss, accuracy) = self.setup.workload.evaluate(&self.models[e]);
        self.records.progress.push(ProgressRow {
            time: seconds(t),
            iteration: self.peers[e].iteration() as f64,
            loss,
            accuracy,
            train_objective: self.setup.workload.objective(&self.models[e]),
        });
    }

    fn drain(&mut self, t: u64, i: usize) -> Result<()> {
        let n = self.peers.len();
        while let Some(a) = self.peers[i].poll_action() {
            match a {
                BufferedAction::Compute { iter } => {
                    step(&*self.setup.workload, &mut self.models[i], i, n, iter);
                    let ns = self.cfg.compute.ns_per_example
                        * self.setup.workload.batch_size(n) as f64
                        * self.samplers[i].next_factor();
                    self.push(t + ns.round() as u64, Due::Input(i, Input::ComputeDone));
                }
                BufferedAction::Write {
                    to,
                    version,
                    notify,
                } => {
                    let data = match &self.snapshot[i] {
                        Some((v, d)) if *v == version => d.clone(),
                        _ => {
                            let d = Arc::new(self.models[i].clone());
                            self.snapshot[i] = Some((version, d.clone()));
                            d
                        }
                    };
                    let (start, end) = self.net.send_span(t, i, to, self.write_bytes);
                    self.buffers.entry((i, to)).or_default().push_back(Landing {
                        version,
                        start,
                        end,
                        data,
                    });
                    self.records.bytes_sent[i] += self.write_bytes;
                    if notify {
                        self.push(end, Due::Input(to, Input::Notified(i, version)));
                    }
                }
                BufferedAction::Barrier { iter } => {
                    if self.arrived[i] != iter {
                        return Err(CoreError::Protocol {
                            node: i,
                            message: format!(
                                "entered barrier {iter} after {} barriers",
                                self.arrived[i]
                            ),
                        });
                    }
                    self.arrived[i] += 1;
                    self.barrier_waiting += 1;
                    self.barrier_last = self.barrier_last.max(t);
                    if self.barrier_waiting == n {
                        let rounds = (n as f64).log2().ceil() as u64;
                        let release = self.barrier_last + rounds * self.cfg.network.latency_ns;
                        self.barrier_waiting = 0;
                        for j in 0..n {
                            self.push(release, Due::Input(j, Input::Released));
                        }
                    }
                }
                BufferedAction::Reduce { iter, inputs } => {
                    let end = t + inputs.len() as u64 * self.read_ns;
                    self.reducing[i] = Some(PendingReduce {
                        iter,
                        inputs,
                        start: t,
                    });
                    self.push(end, Due::ReduceEnd(i));
                }
                BufferedAction::Ack { to } => {
                    self.records.bytes_sent[i] += CONTROL_BYTES;
                    let at = t + self.net.control_latency(i, to);
                    self.push(at, Due::Input(to, Input::Acked(i)));
                }
                BufferedAction::Finished => {}
            }
        }
        Ok(())
    }

    /// Decides which buffers the reduce of `i` read whole and averages them.
    fn finish_reduce(&mut self, t: u64, i: usize) {
        let Some(r) = self.reducing[i].take() else {
            return;
        };
        let mut used = Vec::with_capacity(r.inputs.len());
        let (mut consistent, mut current) = (0, 0);
        let as_read_too = self.cfg.averages_torn(self.setup.mode);
        let dim = self.models[i].len();
        for (k, &from) in r.inputs.iter().enumerate() {
            let (rs, re) = (
                r.start + k as u64 * self.read_ns,
                r.start + (k as u64 + 1) * self.read_ns,
            );
            let Some(writes) = self.buffers.get_mut(&(from, i)) else {
                continue;
            };
            let torn = writes.iter().any(|w| w.start < re && w.end > rs);
            let whole = writes.iter().rev().find(|w| w.end <= rs);
            if !torn {
                if let Some(w) = whole {
                    used.push(w.data.clone());
                    consistent += 1;
                    if w.version == r.iter + 1 {
                        current += 1;
                    }
                }
            } else if as_read_too {
                let spans: Vec<LandingSpan<'_>> = writes
                    .iter()
                    .map(|w| LandingSpan {
                        start: w.start,
                        end: w.end,
                        data: &w.data,
                    })
                    .collect();
                if let Some(words) = as_read(rs, re, &spans, dim) {
                    used.push(Arc::new(words));
                }
            }
            // Only this reader reads the buffer, and its reads move forward in time: writes that
            // landed before this read began matter no more, except the newest of them.
            while writes.len() > 1 && writes[1].end <= rs {
                writes.pop_front();
            }
        }
        self.records.reduces.push(ReduceRow {
            worker: i,
            iter: r.iter,
            inputs_expected: r.inputs.len(),
            inputs_consistent: consistent,
            inputs_current: current,
            time: t,
        });
        average_into(&mut self.models[i], &used);
        let every = self.cfg.eval_every;
        if i == self.setup.eval_node && every > 0 && (r.iter + 1) % every == 0 {
            // The evaluation reads the iteration count after the reduce.
            let (loss, accuracy) = self.setup.workload.evaluate(&self.models[i]);
            self.records.progress.push(ProgressRow {
                time: seconds(t),
                iteration: (r.iter + 1) as f64,
                loss,
                accuracy,
                train_objective: None,
            });
        }
    }
}
