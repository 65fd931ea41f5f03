//! SGD/ASGD and SAGA/ASAGA on least squares, as Algorithms 1-4 of ASYNC §5.2 run them under the
//! ASYNC coordinator ([`crate::protocol::coord`]).
//!
//! Workers own a contiguous partition of the rows (worker `w` of `P`: rows
//! `w*n/P..(w+1)*n/P`). A task samples each row of the partition with probability `b` (Spark's
//! `sample(false, b)`, seeded by run seed, worker and task number, so the sample does not depend
//! on the schedule) and returns the sum of the sampled gradients `(x.w - y) x` with their count.
//! The coordinator folds results into the model at each commit:
//! `w -= eta_t * (sum of results / sum of counts)`, with MLlib's `eta_t = eta / sqrt(t)` when
//! decay is on, `t` = 1 + results applied so far / P (so one synchronous round and P
//! asynchronous results advance the schedule alike). Optionally each result is weighted by
//! `1 / staleness` (ASYNC §5.3, Listing 1). The step given here is the run's: the experiments pass
//! the tuned synchronous step and, for ASGD/ASAGA, that step divided by P (the paper's
//! heuristic).
//!
//! SAGA keeps, per row, the model version its historical gradient was computed on (the table of
//! Algorithm 3). A worker returns `sum (grad_i(w) - grad_i(w_tau_i))` for its sample, recomputing
//! the historical gradients from the versions it holds: the history broadcast sends IDs only, so
//! no historical value ever travels. Rows start with a zero history. The coordinator keeps the
//! average history `a` and, in the order Algorithm 3 lines 6-7 write it, does
//! `a += sum(results) / n; w -= eta * (sum(results) / sum(counts) + a)` with a fixed step.

use super::least_squares::LeastSquares;
use super::task_versions::TaskVersions;
use super::version_store::VersionStore;
use crate::error::{CoreError, Result};
use crate::learning::{payload_words, Learning, Payload, PayloadEffect};
use crate::protocol::{Action, Message, NodeId, Role};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::sync::Arc;

/// The optimisation method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Mini-batch SGD (ASGD when results are collected one by one).
    Sgd,
    /// SAGA with historical gradients (ASAGA when collected one by one).
    Saga,
}

/// Settings of one run's learning.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AsyncLearningConfig {
    /// SGD or SAGA.
    pub method: Method,
    /// Step size of this run (already divided by P for asynchronous runs).
    pub step: f64,
    /// MLlib's decay `step / sqrt(t)` (SGD); SAGA uses a fixed step.
    pub decay: bool,
    /// Weight each result by `1 / max(1, staleness)`.
    pub staleness_lr: bool,
    /// Sampling rate b in (0, 1].
    pub sampling_rate: f64,
    /// Seed of the row sampling.
    pub seed: u64,
}

/// The [`Learning`] of ASYNC runs.
#[derive(Debug)]
pub struct AsyncLearning {
    problem: Arc<LeastSquares>,
    cfg: AsyncLearningConfig,
    optimum: f64,
}

/// Per-node state of an ASYNC run.
#[derive(Debug)]
pub enum AsyncNode {
    /// The coordinator's model and collected results.
    Server(Box<ServerState>),
    /// A worker's current version, history and result.
    Worker(Box<WorkerState>),
}

/// The coordinator's learning state.
#[derive(Debug)]
pub struct ServerState {
    model: Vec<f32>,
    version: u64,
    workers: usize,
    acc: Vec<f64>,
    acc_count: u64,
    collected: u64,
    results_total: u64,
    avg_history: Vec<f64>,
    inbox: HashMap<NodeId, Payload>,
    /// Versions named by tasks whose workers may still ask for the value.
    versions: TaskVersions,
}

/// A worker's learning state.
#[derive(Debug)]
pub struct WorkerState {
    worker: usize,
    rows: Range<usize>,
    current: Option<(u64, Arc<Vec<f32>>)>,
    /// SAGA: versions the rows' historical gradients were computed on.
    history: VersionStore,
    tau: Vec<Option<u64>>,
    pending: VecDeque<(u64, Payload)>,
    result: Option<Payload>,
}

impl WorkerState {
    /// Distinct historical versions held (SAGA).
    pub fn history_versions(&self) -> usize {
        self.history.len()
    }
}

impl AsyncLearning {
    /// Learning on `problem` whose minimum objective is `optimum`.
    ///
    /// # Errors
    /// [`CoreError::Config`] for a sampling rate outside (0, 1] or a step that is not a
    /// positive finite number.
    pub fn new(problem: Arc<LeastSquares>, cfg: AsyncLearningConfig, optimum: f64) -> Result<Self> {
        if !(cfg.sampling_rate > 0.0 && cfg.sampling_rate <= 1.0) {
            return Err(CoreError::Config(format!(
                "sampling rate b must be in (0, 1], got {}",
                cfg.sampling_rate
            )));
        }
        if !(cfg.step > 0.0 && cfg.step.is_finite()) {
            return Err(CoreError::Config(format!(
                "step size must be a positive finite number, got {}",
                cfg.step
            )));
        }
        Ok(AsyncLearning {
            problem,
            cfg,
            optimum,
        })
    }

    /// Rows of worker `w`'s partition among `workers`.
    pub fn partition(&self, w: usize, workers: usize) -> Range<usize> {
        let n = self.problem.rows();
        (w * n / workers.max(1))..((w + 1) * n / workers.max(1))
    }

    fn worker_compute(&self, s: &mut WorkerState, iter: u64) {
        let (version, w) = s
            .current
            .clone()
            .expect("the ASYNC worker protocol installs a version before every Compute");
        let mut rng = ChaCha8Rng::seed_from_u64(
            self.cfg.seed
                ^ 0xA5A5_5A5A_0F0F_F0F0
                ^ (s.worker as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ iter.wrapping_mul(0xD1B5_4A32_D192_ED03),
        );
        let mut g = vec![0.0f64; self.problem.dim()];
        let mut count = 0u64;
        let saga = self.cfg.method == Method::Saga;
        for (k, r) in s.rows.clone().enumerate() {
            if rng.gen::<f64>() >= self.cfg.sampling_rate {
                continue;
            }
            count += 1;
            let res = self.problem.residual(r, &w);
            self.problem.add_row(r, res, &mut g);
            if saga {
                if let Some(old) = s.tau[k] {
                    let wv = s
                        .history
                        .get(old)
                        .expect("a row's history version is held while the row refers to it");
                    let res_old = self.problem.residual(r, wv);
                    self.problem.add_row(r, -res_old, &mut g);
                    s.history.release(old);
                }
                s.history.retain(version, || w.clone());
                s.tau[k] = Some(version);
            }
        }
        s.result = Some(Payload {
            data: g.iter().map(|&x| x as f32).collect::<Vec<f32>>().into(),
            applied: Arc::new(vec![count]),
        });
    }

    fn commit(&self, s: &mut ServerState, node: NodeId, version: u64) -> Result<PayloadEffect> {
        if version != s.version + 1 || s.collected == 0 {
            return Err(CoreError::Protocol {
                node,
                message: format!(
                    "commit of version {version} at model version {} with {} results collected",
                    s.version, s.collected
                ),
            });
        }
        let t = 1 + s.results_total / s.workers.max(1) as u64;
        let eta = if self.cfg.decay {
            self.cfg.step / (t as f64).sqrt()
        } else {
            self.cfg.step
        };
        if s.acc_count > 0 {
            let n = self.problem.rows() as f64;
            let saga = self.cfg.method == Method::Saga;
            if saga {
                for (a, g) in s.avg_history.iter_mut().zip(&s.acc) {
                    *a += g / n;
                }
            }
            let m = s.acc_count as f64;
            for j in 0..s.model.len() {
                let h = if saga { s.avg_history[j] } else { 0.0 };
                s.model[j] -= (eta * (s.acc[j] / m + h)) as f32;
            }
        }
        let results = s.collected;
        s.results_total += results;
        s.version = version;
        s.acc.iter_mut().for_each(|a| *a = 0.0);
        s.acc_count = 0;
        s.collected = 0;
        Ok(PayloadEffect::Committed { results })
    }
}

impl Learning for AsyncLearning {
    type Node = AsyncNode;

    fn node(&self, _node: NodeId, role: Role, workers: usize) -> AsyncNode {
        let d = self.problem.dim();
        match role {
            Role::Server => AsyncNode::Server(Box::new(ServerState {
                model: vec![0.0; d],
                version: 0,
                workers,
                acc: vec![0.0; d],
                acc_count: 0,
                collected: 0,
                results_total: 0,
                avg_history: vec![0.0; d],
                inbox: HashMap::new(),
                versions: TaskVersions::default(),
            })),
            Role::Worker(w) => {
                let rows = self.partition(w, workers);
                AsyncNode::Worker(Box::new(WorkerState {
                    worker: w,
                    tau: vec![None; rows.len()],
                    rows,
                    current: None,
                    history: VersionStore::default(),
                    pending: VecDeque::new(),
                    result: None,
                }))
            }
        }
    }

    fn compute(&self, state: &mut AsyncNode, _worker: usize, _workers: usize, iter: u64) {
        if let AsyncNode::Worker(s) = state {
            self.worker_compute(s, iter);
        }
    }

    fn carry_out(
        &self,
        state: &mut AsyncNode,
        node: NodeId,
        action: &Action,
        _roles: &[Role],
    ) -> Result<Option<PayloadEffect>> {
        let err = |message: String| CoreError::Protocol { node, message };
        match (state, action) {
            (AsyncNode::Server(s), &Action::Apply { from, clock }) => {
                let p = s
                    .inbox
                    .remove(&from)
                    .ok_or_else(|| err(format!("no task result from node {from} to apply")))?;
                let staleness = s.version.saturating_sub(clock);
                let weight = if self.cfg.staleness_lr {
                    1.0 / staleness.max(1) as f64
                } else {
                    1.0
                };
                for (a, &g) in s.acc.iter_mut().zip(p.data.iter()) {
                    *a += weight * f64::from(g);
                }
                s.acc_count += p.applied.first().copied().unwrap_or(0);
                s.collected += 1;
                Ok(Some(PayloadEffect::Collected))
            }
            (AsyncNode::Server(s), &Action::Commit { version }) => {
                self.commit(s, node, version).map(Some)
            }
            (AsyncNode::Worker(s), &Action::Install { from }) => {
                let (version, p) = s
                    .pending
                    .pop_front()
                    .ok_or_else(|| err(format!("no model version from node {from} to install")))?;
                s.current = Some((version, p.data.into_dense()));
                Ok(Some(PayloadEffect::Installed))
            }
            (_, Action::Apply { .. } | Action::Commit { .. } | Action::Install { .. }) => Err(err(
                format!("{action:?} does not apply to this node's role"),
            )),
            (_, Action::Discard { .. }) => Err(err("ASYNC runs discard nothing".into())),
            _ => Ok(None),
        }
    }

    fn outgoing(&self, state: &mut AsyncNode, to: NodeId, msg: &Message) -> Option<Payload> {
        match (state, *msg) {
            (AsyncNode::Server(s), Message::Task { version, .. }) => {
                debug_assert_eq!(version, s.version, "tasks name the current version");
                s.versions.task_sent(to, version, &s.model);
                None
            }
            (AsyncNode::Server(s), Message::VersionData { version }) => {
                s.versions.version_data(to, version)
            }
            (AsyncNode::Worker(s), Message::TaskResult { .. }) => s.result.take(),
            _ => None,
        }
    }

    fn receive(&self, state: &mut AsyncNode, from: NodeId, msg: &Message, payload: Payload) {
        match (state, *msg) {
            (AsyncNode::Server(s), Message::TaskResult { .. }) => {
                s.inbox.insert(from, payload);
            }
            (AsyncNode::Worker(s), Message::VersionData { version }) => {
                s.pending.push_back((version, payload));
            }
            _ => {}
        }
    }

    fn applied<'a>(&self, _state: &'a AsyncNode) -> &'a [u64] {
        &[]
    }

    /// `(objective - optimum, sign accuracy)` of the coordinator's model.
    fn evaluate(&self, state: &AsyncNode) -> (f64, f64) {
        match state {
            AsyncNode::Server(s) => {
                let (objective, accuracy) = self.problem.objective_and_accuracy(&s.model);
                (objective - self.optimum, accuracy)
            }
            AsyncNode::Worker(_) => (f64::NAN, f64::NAN),
        }
    }

    fn batch_size(&self, workers: usize) -> usize {
        let per = self.problem.rows() as f64 / workers.max(1) as f64;
        (per * self.cfg.sampling_rate).round().max(1.0) as usize
    }

    fn payload_words(&self, _workers: usize) -> usize {
        payload_words(1, self.problem.dim())
    }
}
