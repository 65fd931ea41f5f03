//! The learning side of decentralized peers (Hop §4.1, Fig 4, parallel approach): a peer sends
//! its parameters x_k, computes its update on x_k, and at the Reduce replaces its parameters by
//! the weighted average of its own and the received ones, plus its update (Appl). In the serial
//! approach ([`PeerLearning::serial`]) the update is applied as soon as it is computed, the new
//! parameters are what the peer sends, and the Reduce only averages.

use super::weighted_average::weighted_average;
use super::Workload;
use crate::error::{CoreError, Result};
use crate::learning::{payload_words, Learning, Payload, PayloadEffect};
use crate::protocol::{Action, Message, NodeId, Role};
use std::collections::HashMap;
use std::sync::Arc;

/// Peers learning `W` by model averaging.
#[derive(Debug)]
pub struct PeerLearning<W: ?Sized> {
    eval_node: NodeId,
    serial: bool,
    workload: Arc<W>,
}

impl<W: Workload + ?Sized> PeerLearning<W> {
    /// Peers training `workload`; progress evaluates peer 0's model.
    pub fn new(workload: Arc<W>) -> Self {
        PeerLearning {
            eval_node: 0,
            serial: false,
            workload,
        }
    }

    /// Evaluates peer `node`'s model instead (e.g. the sink of a one-way chain, the only peer
    /// that sees every other peer's information).
    pub fn evaluating(mut self, node: NodeId) -> Self {
        self.eval_node = node;
        self
    }

    /// Applies each update when it is computed (the serial approach of Hop §3.2, Fig 2(a)) instead
    /// of after the Reduce; pair with [`crate::protocol::peer::PeerSettings::serial`].
    pub fn serial(mut self, serial: bool) -> Self {
        self.serial = serial;
        self
    }
}

/// One peer's parameters, its pending update and the parameters received.
#[derive(Debug)]
pub struct PeerState {
    /// Current parameters x_k, shared (not copied) by every message that sends them.
    model: Arc<Vec<f32>>,
    /// The update computed on x_k, applied after the Reduce of iteration k.
    pending: Option<Vec<f32>>,
    inbox: HashMap<(NodeId, u64), Arc<Vec<f32>>>,
}

impl<W: Workload + ?Sized> Learning for PeerLearning<W> {
    type Node = PeerState;

    fn node(&self, _node: NodeId, _role: Role, _workers: usize) -> PeerState {
        PeerState {
            model: Arc::new(self.workload.initial_model()),
            pending: None,
            inbox: HashMap::new(),
        }
    }

    fn compute(&self, state: &mut PeerState, worker: usize, workers: usize, iter: u64) {
        let update = self.workload.update(&state.model, worker, workers, iter);
        if self.serial {
            Arc::make_mut(&mut state.model)
                .iter_mut()
                .zip(&update)
                .for_each(|(m, u)| *m += u);
        } else {
            state.pending = Some(update);
        }
    }

    fn carry_out(
        &self,
        state: &mut PeerState,
        node: NodeId,
        action: &Action,
        _roles: &[Role],
    ) -> Result<Option<PayloadEffect>> {
        match action {
            Action::Reduce { inputs } => {
                let err = |message: String| CoreError::Protocol { node, message };
                // Each input's received vector, taken out of the inbox (None: this peer's own).
                let mut received = Vec::with_capacity(inputs.len());
                let mut total = 0.0;
                for &(from, iter, w) in inputs {
                    total += w;
                    received.push(if from == node {
                        None
                    } else {
                        Some(state.inbox.remove(&(from, iter)).ok_or_else(|| {
                            err(format!(
                                "no parameters from node {from} for iteration {iter}"
                            ))
                        })?)
                    });
                }
                if total <= 0.0 {
                    return Err(err("reduce with no positive weight".into()));
                }
                let mut weighted: Vec<(f64, &[f32])> = Vec::with_capacity(inputs.len());
                for (&(from, _, w), x) in inputs.iter().zip(&received) {
                    let x = x.as_deref().map_or(&state.model[..], |x| &x[..]);
                    if x.len() != state.model.len() {
                        return Err(err(format!(
                            "parameters from node {from} have {} values, this peer's {}",
                            x.len(),
                            state.model.len()
                        )));
                    }
                    weighted.push((w, x));
                }
                let update = state.pending.take().unwrap_or_default();
                // A new vector, not an in-place write: the old one may still be on its way to
                // the out-neighbours (messages share it), and is freed when they are done.
                state.model = Arc::new(weighted_average(&weighted, total, &update));
                Ok(Some(PayloadEffect::Applied))
            }
            Action::Discard { from, clock } => {
                state.inbox.remove(&(*from, *clock));
                Ok(Some(PayloadEffect::Discarded))
            }
            _ => Ok(None),
        }
    }

    fn outgoing(&self, state: &mut PeerState, _to: NodeId, msg: &Message) -> Option<Payload> {
        match msg {
            Message::Update { .. } => Some(Payload {
                data: Arc::clone(&state.model).into(),
                applied: Arc::new(Vec::new()),
            }),
            _ => None,
        }
    }

    fn receive(&self, state: &mut PeerState, from: NodeId, msg: &Message, payload: Payload) {
        if let Message::Update { clock } = msg {
            state
                .inbox
                .insert((from, *clock), payload.data.into_dense());
        }
    }

    fn applied<'a>(&self, _state: &'a PeerState) -> &'a [u64] {
        &[]
    }

    fn evaluate(&self, state: &PeerState) -> (f64, f64) {
        self.workload.evaluate(&state.model)
    }

    fn objective(&self, state: &PeerState) -> Option<f64> {
        self.workload.objective(&state.model)
    }

    fn batch_size(&self, workers: usize) -> usize {
        self.workload.batch_size(workers)
    }

    fn payload_words(&self, _workers: usize) -> usize {
        payload_words(0, self.workload.dim())
    }

    fn eval_node(&self) -> Option<NodeId> {
        Some(self.eval_node)
    }
}
