//! The deterministic discrete-event driver.
//!
//! Events are ordered by `(virtual time, sequence number)`, so a run is a pure function of its
//! inputs and seed: the same seed gives the same CSV bytes. The learning is real (updates are
//! computed and applied); only time is modelled: compute time from [`ComputeModel`] times the
//! straggler factor, message time from [`NetworkModel`].

use super::network::NetworkState;
use super::{crosses, ComputeModel, NetworkModel};
use crate::error::{CoreError, Result};
use crate::learning::Learning;
use crate::learning::{Payload, PayloadEffect, HEADER_BYTES};
use crate::metrics::seconds;
use crate::metrics::{ProgressRow, RunRecords};
use crate::protocol::{Action, Input, Message, NodeId, Protocol, Role};
use crate::straggler::{StragglerConfig, StragglerSampler};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Simulator settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Network time model.
    pub network: NetworkModel,
    /// Compute time model.
    pub compute: ComputeModel,
    /// Evaluate the server model every this many applied updates (0 = only at start and end).
    pub eval_every: u64,
    /// Safety limit on processed events.
    pub max_events: u64,
    /// A time profile's nanoseconds per iteration of each worker, replacing the compute model
    /// (see [`super::TimeProfile`]).
    #[serde(default)]
    pub iteration_ns: Option<Vec<u64>>,
    /// A time profile's bytes per payload, replacing the proxy model's real size for network
    /// timing and byte counts.
    #[serde(default)]
    pub wire_bytes: Option<u64>,
}

/// Hooks for checkers that assert invariants at every step of a simulation.
pub trait SimObserver {
    /// Worker `worker` starts computing `iter` on a model holding `applied[w]` updates of each
    /// worker `w` (ground truth from the server that produced the snapshot).
    ///
    /// # Errors
    /// Any error stops the run and is returned by [`run`].
    fn on_compute(
        &mut self,
        _now: u64,
        _worker: usize,
        _iter: u64,
        _applied: &[u64],
    ) -> Result<()> {
        Ok(())
    }

    /// Node `node` handled an input at `now` and its actions were carried out; `nodes` are all
    /// nodes, to compare their states (e.g. iteration gaps).
    ///
    /// # Errors
    /// Any error stops the run and is returned by [`run`].
    fn after_step(&mut self, _now: u64, _node: NodeId, _nodes: &[Box<dyn Protocol>]) -> Result<()> {
        Ok(())
    }
}

/// An observer that checks nothing.
pub struct NoObserver;
impl SimObserver for NoObserver {}

enum SimEvent {
    Start(NodeId),
    ComputeDone {
        node: NodeId,
        iter: u64,
    },
    Deliver {
        from: NodeId,
        to: NodeId,
        msg: Message,
        payload: Option<Payload>,
    },
}

struct Scheduled {
    time: u64,
    seq: u64,
    event: SimEvent,
}

impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        (self.time, self.seq) == (o.time, o.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

struct Sim<'a, L: Learning + ?Sized> {
    nodes: Vec<Box<dyn Protocol>>,
    roles: Vec<Role>,
    models: Vec<L::Node>,
    samplers: Vec<Option<StragglerSampler>>,
    workload: &'a L,
    cfg: SimConfig,
    workers: usize,
    heap: BinaryHeap<Scheduled>,
    seq: u64,
    net: NetworkState,
    records: RunRecords,
    bytes_in_iter: Vec<u64>,
    applied_total: u64,
}

/// Runs `nodes` to completion in virtual time.
///
/// # Errors
/// A protocol violation, an observer's error, [`CoreError::Deadlock`] when no event is pending
/// while a node is unfinished, or [`CoreError::Config`] when `max_events` is exceeded.
pub fn run<L: Learning + ?Sized>(
    nodes: Vec<Box<dyn Protocol>>,
    workload: &L,
    cfg: &SimConfig,
    stragglers: &StragglerConfig,
    seed: u64,
    observer: &mut dyn SimObserver,
) -> Result<RunRecords> {
    let roles: Vec<Role> = nodes.iter().map(|n| n.role()).collect();
    let workers = super::worker_count(&roles);
    let samplers = roles
        .iter()
        .map(|r| match r {
            Role::Worker(w) => stragglers.sampler(workers, *w, seed).map(Some),
            Role::Server => Ok(None),
        })
        .collect::<Result<Vec<_>>>()?;
    let n = nodes.len();
    cfg.network.validate(n)?;
    let mut sim = Sim {
        models: roles
            .iter()
            .enumerate()
            .map(|(i, r)| workload.node(i, *r, workers))
            .collect(),
        nodes,
        roles,
        samplers,
        workload,
        cfg: cfg.clone(),
        workers,
        heap: BinaryHeap::new(),
        seq: 0,
        net: NetworkState::new(cfg.network.clone(), n, seed),
        records: RunRecords {
            bytes_sent: vec![0; n],
            ..RunRecords::default()
        },
        bytes_in_iter: vec![0; n],
        applied_total: 0,
    };
    for node in 0..n {
        sim.schedule(0, SimEvent::Start(node));
    }
    sim.evaluate(0);
    sim.mark_objective();
    sim.run_loop(observer)?;
    Ok(sim.records)
}

impl<L: Learning + ?Sized> Sim<'_, L> {
    fn schedule(&mut self, time: u64, event: SimEvent) {
        self.seq += 1;
        self.heap.push(Scheduled {
            time,
            seq: self.seq,
            event,
        });
    }

    /// The node progress.csv evaluates: the learning's chosen node, else the server, else peer 0
    /// (the threads driver picks the same node, so progress means the same under both).
    fn eval_node(&self) -> NodeId {
        self.workload
            .eval_node()
            .or_else(|| self.roles.iter().position(|r| *r == Role::Server))
            .unwrap_or(0)
    }

    /// Evaluates the evaluated node's model (see [`Self::eval_node`]).
    fn evaluate(&mut self, now: u64) {
        let node = self.eval_node();
        if node >= self.models.len() {
            return;
        }
        let (loss, accuracy) = self.workload.evaluate(&self.models[node]);
        self.records.progress.push(ProgressRow {
            time: seconds(now),
            iteration: self.applied_total as f64 / self.workers.max(1) as f64,
            loss,
            accuracy,
            train_objective: None,
        });
    }

    /// Adds the training objective of the evaluated node's model to the last evaluation, made
    /// of that same model (the run's first and last: a pass over the training rows each).
    fn mark_objective(&mut self) {
        let node = self.eval_node();
        if node >= self.models.len() {
            return;
        }
        let objective = self.workload.objective(&self.models[node]);
        if let Some(last) = self.records.progress.last_mut() {
            last.train_objective = objective;
        }
    }

    fn run_loop(&mut self, observer: &mut dyn SimObserver) -> Result<()> {
        let mut now = 0;
        while let Some(s) = self.heap.pop() {
            now = s.time;
            self.records.events += 1;
            if self.records.events > self.cfg.max_events {
                return Err(CoreError::Config(format!(
                    "simulation exceeded max_events = {}",
                    self.cfg.max_events
                )));
            }
            let (node, input) = match s.event {
                SimEvent::Start(node) => (node, Input::Start),
                SimEvent::ComputeDone { node, iter } => (node, Input::ComputeDone { iter }),
                SimEvent::Deliver {
                    from,
                    to,
                    msg,
                    payload,
                } => {
                    if let Some(p) = payload {
                        self.workload.receive(&mut self.models[to], from, &msg, p);
                    }
                    (to, Input::Received { from, msg })
                }
            };
            self.nodes[node].handle(now, input)?;
            self.drain(now, node, observer)?;
            observer.after_step(now, node, &self.nodes)?;
        }
        self.records.makespan = now;
        let unfinished: Vec<String> = self
            .nodes
            .iter()
            .filter(|n| !n.is_finished())
            .map(|n| n.waiting_on())
            .collect();
        if !unfinished.is_empty() {
            return Err(CoreError::Deadlock {
                time_ns: now,
                message: unfinished.join("; "),
            });
        }
        if self.cfg.eval_every == 0 || !self.applied_total.is_multiple_of(self.cfg.eval_every) {
            self.evaluate(now);
        }
        // The last evaluation is of the final model: either the one just made, or the one made
        // when the last update was applied.
        self.mark_objective();
        Ok(())
    }

    fn drain(&mut self, now: u64, node: NodeId, observer: &mut dyn SimObserver) -> Result<()> {
        while let Some(action) = self.nodes[node].poll_action() {
            match action {
                Action::Send { to, msg } => {
                    let payload = self.workload.outgoing(&mut self.models[node], to, &msg);
                    let payload_bytes = payload
                        .as_ref()
                        .map_or(0, |p| self.cfg.wire_bytes.unwrap_or_else(|| p.wire_bytes()));
                    let bytes = HEADER_BYTES + payload_bytes;
                    self.records.bytes_sent[node] += bytes;
                    self.bytes_in_iter[node] += bytes;
                    let at = self.net.send(now, node, to, bytes);
                    self.schedule(
                        at,
                        SimEvent::Deliver {
                            from: node,
                            to,
                            msg,
                            payload,
                        },
                    );
                }
                Action::Compute { iter } => {
                    let Role::Worker(w) = self.roles[node] else {
                        return Err(CoreError::Protocol {
                            node,
                            message: "only workers compute".into(),
                        });
                    };
                    observer.on_compute(now, w, iter, self.workload.applied(&self.models[node]))?;
                    let t0 = std::time::Instant::now();
                    self.workload
                        .compute(&mut self.models[node], w, self.workers, iter);
                    // A row-table clock is several computes; each is its share of the clock.
                    let steps = self.workload.computes_per_iteration(self.workers).max(1);
                    let factor = self.samplers[node]
                        .as_mut()
                        .map_or(1.0, |s| s.next_step_factor(steps));
                    let base = if let Some(v) = &self.cfg.iteration_ns {
                        v.get(w).copied().ok_or_else(|| {
                            CoreError::Config(format!("iteration_ns has no entry for worker {w}"))
                        })? as f64
                            / steps as f64
                    } else if self.cfg.compute.measured {
                        t0.elapsed().as_nanos() as f64
                    } else {
                        self.cfg.compute.ns_per_example
                            * self.workload.batch_size(self.workers) as f64
                            / steps as f64
                    };
                    let dur = (base * factor).round() as u64;
                    self.schedule(now + dur.max(1), SimEvent::ComputeDone { node, iter });
                }
                Action::Apply { .. }
                | Action::Discard { .. }
                | Action::Install { .. }
                | Action::Commit { .. }
                | Action::Reduce { .. }
                | Action::RowSet { .. } => {
                    let effect = self.workload.carry_out(
                        &mut self.models[node],
                        node,
                        &action,
                        &self.roles,
                    )?;
                    if let Some(effect) = effect {
                        let before = self.applied_total;
                        self.applied_total += effect.results_applied();
                        if effect == PayloadEffect::Discarded {
                            self.records.dropped_updates += 1;
                        }
                        if crosses(before, self.applied_total, self.cfg.eval_every) {
                            self.evaluate(now);
                        }
                    }
                }
                Action::Record(event) => {
                    // An iteration's bytes: those sent since the previous iteration ended,
                    // including this update.
                    self.records
                        .event_rows()
                        .record(event, || std::mem::take(&mut self.bytes_in_iter[node]));
                }
                Action::Finished => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Input, Nanos};

    /// A worker that asks the server for something and never gets it.
    struct Stuck;
    impl Protocol for Stuck {
        fn node(&self) -> NodeId {
            0
        }
        fn role(&self) -> Role {
            Role::Worker(0)
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
            "worker 0 waits for a reply that never comes".into()
        }
    }

    #[test]
    fn deadlock_is_reported_with_what_waits() {
        let cfg = SimConfig {
            network: NetworkModel::default(),
            compute: ComputeModel {
                ns_per_example: 1.0,
                measured: false,
            },
            eval_every: 0,
            max_events: 100,
            iteration_ns: None,
            wire_bytes: None,
        };
        let e = run(
            vec![Box::new(Stuck)],
            &crate::learning::CountingProbe,
            &cfg,
            &StragglerConfig {
                slow: vec![],
                jitter_sigma: 0.0,
                production: None,
                random: None,
                trace: None,
            },
            1,
            &mut NoObserver,
        )
        .unwrap_err();
        assert!(matches!(e, CoreError::Deadlock { .. }), "{e}");
        assert!(e.to_string().contains("never comes"), "{e}");
    }
}
