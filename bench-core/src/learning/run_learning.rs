//! The learning side of a run, as the drivers see it.
//!
//! Protocols name buffers and versions; a [`Learning`] owns what those names mean: each node's
//! model state, what a computation produces, which bytes a message carries and what `Apply`,
//! `Install` or `Commit` do. Drivers are generic over it, so one driver runs both the
//! parameter-server family (a [`super::Workload`] whose workers compute additive updates, carried by
//! [`crate::workload::NodeModel`]) and ASYNC's task-based family (workers compute gradients, the coordinator
//! applies them with its own step rule: [`crate::workload::AsyncLearning`]).

use super::payload::{Payload, PayloadEffect};
use crate::error::Result;
use crate::protocol::{Action, Message, NodeId, Role};

/// What a run learns and how its nodes hold and exchange model state.
pub trait Learning: Send + Sync {
    /// Per-node learning state.
    type Node: Send;

    /// State of node `node` with role `role` in a run of `workers` workers.
    fn node(&self, node: NodeId, role: Role, workers: usize) -> Self::Node;

    /// Carries out `Compute { iter }` at worker `worker`.
    fn compute(&self, state: &mut Self::Node, worker: usize, workers: usize, iter: u64);

    /// Carries out the payload part of `action` (Apply, Discard, Install, Commit) at `node`;
    /// other actions return `Ok(None)`.
    ///
    /// # Errors
    /// [`crate::CoreError::Protocol`] when a named payload is not held: a protocol or driver
    /// bug.
    fn carry_out(
        &self,
        state: &mut Self::Node,
        node: NodeId,
        action: &Action,
        roles: &[Role],
    ) -> Result<Option<PayloadEffect>>;

    /// The payload to attach to `msg` sent from `state`'s node to `to` (None: control only).
    fn outgoing(&self, state: &mut Self::Node, to: NodeId, msg: &Message) -> Option<Payload>;

    /// Stores the payload that came with `msg` from `from`.
    fn receive(&self, state: &mut Self::Node, from: NodeId, msg: &Message, payload: Payload);

    /// Ground truth for checkers: per worker, the updates the node's model holds (may be empty
    /// when the family has no such notion).
    fn applied<'a>(&self, state: &'a Self::Node) -> &'a [u64];

    /// `(loss, accuracy)` of the node's model (called on servers).
    fn evaluate(&self, state: &Self::Node) -> (f64, f64);

    /// The training objective `F(w)` of the node's model on the training rows, where the
    /// learning minimises one whose optimum a figure can compute (SVM, least squares); `None`
    /// otherwise. A pass over the training data: drivers call it at a run's first and last
    /// evaluation only ([`crate::metrics::ProgressRow::train_objective`]).
    fn objective(&self, _state: &Self::Node) -> Option<f64> {
        None
    }

    /// Examples a worker processes per computation when the run has `workers` workers (the
    /// compute-time model charges per example).
    fn batch_size(&self, workers: usize) -> usize;

    /// Compute actions a worker's protocol issues per iteration (row tables split a clock into
    /// read-compute steps). The drivers charge each `batch_size / computes_per_iteration`
    /// examples and draw the straggler factor once per iteration, so splitting a clock changes
    /// when its reads happen, not how long it takes. It must equal the Compute actions the run's
    /// protocol issues per iteration (a row-table run passes the same `TableLearning` as the
    /// protocol's `RowAccess`, which makes it so).
    fn computes_per_iteration(&self, _workers: usize) -> u64 {
        1
    }

    /// Largest payload in 64-bit words (transport slot size) for `workers` workers.
    fn payload_words(&self, workers: usize) -> usize;

    /// The node whose model progress.csv evaluates; None: the server, or node 0 without one.
    fn eval_node(&self) -> Option<NodeId> {
        None
    }
}

/// Words of a payload `[n_meta, meta..., n_f32, f32 pairs...]` with `meta` and `floats` entries.
pub fn payload_words(meta: usize, floats: usize) -> usize {
    2 + meta + floats.div_ceil(2)
}
