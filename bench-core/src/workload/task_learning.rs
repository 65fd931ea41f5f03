//! Any [`Workload`] trained under the ASYNC coordinator ([`crate::protocol::coord`]): the
//! coordinator's barrier predicates (ASP, BSP, SSP, min-available) on the same model the
//! parameter-server and decentralized families train, so one workload can be compared across
//! all three families (the mode matrix).
//!
//! A task of worker `w` numbered `k` on model version `v` computes the workload's additive
//! update `workload.update(x_v, w, P, k)` (its own mini-batch and step schedule, exactly as a
//! parameter-server worker's iteration `k`), and returns it. The coordinator adds each collected
//! result, optionally weighted by `1 / staleness` (ASYNC §5.3, Listing 1), and at a commit moves
//! the model by the sum ([`Aggregation::Sum`]) or by the sum over `P`
//! ([`Aggregation::Mean`]).
//!
//! With `Mean`, a synchronous round (BSP barrier, [`crate::protocol::coord::Collect::Round`])
//! is averaged mini-batch SGD, the same step as a parameter server's BSP clock under mean
//! aggregation; an asynchronous commit of one result moves the model by `update / P`, which is
//! ASYNC §6.1's heuristic for ASGD (the synchronous step divided by P), so no step is re-tuned
//! between the synchronous and asynchronous runs. Unlike [`super::AsyncLearning`] there is no
//! SAGA here: history needs the gradients of single rows, which a generic workload does not
//! expose.

use super::aggregation::Aggregation;
use super::task_versions::TaskVersions;
use crate::error::{CoreError, Result};
use crate::learning::{payload_words, Learning, Payload, PayloadEffect, Workload};
use crate::protocol::{Action, Message, NodeId, Role};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// The [`Learning`] of a coordinator run on a generic [`Workload`].
pub struct TaskLearning {
    workload: Arc<dyn Workload>,
    aggregation: Aggregation,
    staleness_lr: bool,
}

impl std::fmt::Debug for TaskLearning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskLearning")
            .field("dim", &self.workload.dim())
            .field("aggregation", &self.aggregation)
            .field("staleness_lr", &self.staleness_lr)
            .finish()
    }
}

/// Per-node state of a [`TaskLearning`] run.
#[derive(Debug)]
pub enum TaskNode {
    /// The coordinator's model and collected results.
    Coordinator(Box<CoordinatorState>),
    /// A worker's current version and result.
    Worker(Box<TaskWorkerState>),
}

/// The coordinator's learning state.
#[derive(Debug)]
pub struct CoordinatorState {
    model: Vec<f32>,
    version: u64,
    workers: usize,
    acc: Vec<f64>,
    collected: u64,
    inbox: HashMap<NodeId, Payload>,
    /// Versions named by tasks whose workers may still ask for the value.
    versions: TaskVersions,
}

/// A worker's learning state.
#[derive(Debug)]
pub struct TaskWorkerState {
    current: Option<Arc<Vec<f32>>>,
    pending: VecDeque<Payload>,
    result: Option<Payload>,
}

impl TaskLearning {
    /// `workload` under the coordinator, results combined by `aggregation`, each weighted by
    /// `1 / max(1, staleness)` when `staleness_lr`.
    pub fn new(workload: Arc<dyn Workload>, aggregation: Aggregation, staleness_lr: bool) -> Self {
        TaskLearning {
            workload,
            aggregation,
            staleness_lr,
        }
    }

    fn commit(
        &self,
        s: &mut CoordinatorState,
        node: NodeId,
        version: u64,
    ) -> Result<PayloadEffect> {
        if version != s.version + 1 || s.collected == 0 {
            return Err(CoreError::Protocol {
                node,
                message: format!(
                    "commit of version {version} at model version {} with {} results collected",
                    s.version, s.collected
                ),
            });
        }
        let scale = match self.aggregation {
            Aggregation::Sum => 1.0,
            Aggregation::Mean => 1.0 / s.workers.max(1) as f64,
        };
        for (m, a) in s.model.iter_mut().zip(s.acc.iter_mut()) {
            *m += (*a * scale) as f32;
            *a = 0.0;
        }
        let results = s.collected;
        s.version = version;
        s.collected = 0;
        Ok(PayloadEffect::Committed { results })
    }
}

impl Learning for TaskLearning {
    type Node = TaskNode;

    fn node(&self, _node: NodeId, role: Role, workers: usize) -> TaskNode {
        match role {
            Role::Server => TaskNode::Coordinator(Box::new(CoordinatorState {
                model: self.workload.initial_model(),
                version: 0,
                workers,
                acc: vec![0.0; self.workload.dim()],
                collected: 0,
                inbox: HashMap::new(),
                versions: TaskVersions::default(),
            })),
            Role::Worker(_) => TaskNode::Worker(Box::new(TaskWorkerState {
                current: None,
                pending: VecDeque::new(),
                result: None,
            })),
        }
    }

    fn compute(&self, state: &mut TaskNode, worker: usize, workers: usize, iter: u64) {
        if let TaskNode::Worker(s) = state {
            let model = s
                .current
                .as_ref()
                .expect("the ASYNC worker protocol installs a version before every Compute");
            let update = self.workload.update(model, worker, workers, iter);
            s.result = Some(Payload {
                data: update.into(),
                applied: Arc::new(Vec::new()),
            });
        }
    }

    fn carry_out(
        &self,
        state: &mut TaskNode,
        node: NodeId,
        action: &Action,
        _roles: &[Role],
    ) -> Result<Option<PayloadEffect>> {
        let err = |message: String| CoreError::Protocol { node, message };
        match (state, action) {
            (TaskNode::Coordinator(s), &Action::Apply { from, clock }) => {
                let p = s
                    .inbox
                    .remove(&from)
                    .ok_or_else(|| err(format!("no task result from node {from} to apply")))?;
                let weight = if self.staleness_lr {
                    1.0 / s.version.saturating_sub(clock).max(1) as f64
                } else {
                    1.0
                };
                for (a, &u) in s.acc.iter_mut().zip(p.data.iter()) {
                    *a += weight * f64::from(u);
                }
                s.collected += 1;
                Ok(Some(PayloadEffect::Collected))
            }
            (TaskNode::Coordinator(s), &Action::Commit { version }) => {
                self.commit(s, node, version).map(Some)
            }
            (TaskNode::Worker(s), &Action::Install { from }) => {
                let p = s
                    .pending
                    .pop_front()
                    .ok_or_else(|| err(format!("no model version from node {from} to install")))?;
                s.current = Some(p.data.into_dense());
                Ok(Some(PayloadEffect::Installed))
            }
            (_, Action::Apply { .. } | Action::Commit { .. } | Action::Install { .. }) => Err(err(
                format!("{action:?} does not apply to this node's role"),
            )),
            (_, Action::Discard { .. }) => Err(err("coordinator runs discard nothing".into())),
            _ => Ok(None),
        }
    }

    fn outgoing(&self, state: &mut TaskNode, to: NodeId, msg: &Message) -> Option<Payload> {
        match (state, *msg) {
            (TaskNode::Coordinator(s), Message::Task { version, .. }) => {
                debug_assert_eq!(version, s.version, "tasks name the current version");
                s.versions.task_sent(to, version, &s.model);
                None
            }
            (TaskNode::Coordinator(s), Message::VersionData { version }) => {
                s.versions.version_data(to, version)
            }
            (TaskNode::Worker(s), Message::TaskResult { .. }) => s.result.take(),
            _ => None,
        }
    }

    fn receive(&self, state: &mut TaskNode, from: NodeId, msg: &Message, payload: Payload) {
        match (state, *msg) {
            (TaskNode::Coordinator(s), Message::TaskResult { .. }) => {
                s.inbox.insert(from, payload);
            }
            (TaskNode::Worker(s), Message::VersionData { .. }) => {
                s.pending.push_back(payload);
            }
            _ => {}
        }
    }

    fn applied<'a>(&self, _state: &'a TaskNode) -> &'a [u64] {
        &[]
    }

    /// The workload's `(loss, accuracy)` of the coordinator's model.
    fn evaluate(&self, state: &TaskNode) -> (f64, f64) {
        match state {
            TaskNode::Coordinator(s) => self.workload.evaluate(&s.model),
            TaskNode::Worker(_) => (f64::NAN, f64::NAN),
        }
    }

    /// The workload's training objective of the coordinator's model.
    fn objective(&self, state: &TaskNode) -> Option<f64> {
        match state {
            TaskNode::Coordinator(s) => self.workload.objective(&s.model),
            TaskNode::Worker(_) => None,
        }
    }

    fn batch_size(&self, workers: usize) -> usize {
        self.workload.batch_size(workers)
    }

    fn payload_words(&self, _workers: usize) -> usize {
        payload_words(1, self.workload.dim())
    }
}
