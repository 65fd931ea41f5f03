//! The parameter-server family's learning: one node's model and the payloads it holds, and how
//! the learning part of protocol actions is carried out on it. Every [`Workload`] learns through
//! it (the blanket [`Learning`] impl below).

use crate::error::{CoreError, Result};
use crate::learning::{
    payload_words, Learning, Params, Payload, PayloadEffect, ScaledUpdate, Workload,
};
use crate::protocol::{Action, Message, NodeId, PayloadKind, Role};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

/// One node's model and the payloads it holds.
///
/// The model and the `applied` counts are reference-counted and copied on write: a snapshot
/// sent to any number of nodes is the node's current `Arc` (no copy per message), the next
/// change copies it only while a message or another node still holds it, and an installed
/// snapshot is adopted rather than copied.
///
/// A worker's own updates are folded into its model lazily, when the model is next used (the
/// next compute, an outgoing snapshot; [`NodeModel::view`] adds them to a copy): a snapshot
/// installed in between replaces the model anyway, so the fold (a dense pass over the model) is
/// then skipped. The values read are those of an eager fold, bit for bit.
#[derive(Debug)]
pub struct NodeModel {
    /// Local model, without the own updates in `unfolded`.
    model: Arc<Vec<f32>>,
    /// Own updates computed since the model was last used or replaced, not yet added to it
    /// (oldest first).
    unfolded: Vec<Params>,
    /// Per worker `w`: every update of `w` with a clock below `applied[w]` is settled (applied,
    /// or discarded as late in a backup-worker run). For servers, the live count; for workers,
    /// that of the snapshot installed. Without drops or skipped clocks it is the number of
    /// updates applied.
    pub applied: Arc<Vec<u64>>,
    /// This node's worker index (None for servers).
    me: Option<usize>,
    /// Own updates by iteration: computed and applied locally, sent or not. An entry leaves
    /// once an installed snapshot shows the server has applied it.
    own_updates: BTreeMap<u64, Params>,
    /// Received update payloads keyed by (sender, clock), kept until applied.
    inbox_updates: HashMap<(NodeId, u64), Payload>,
    /// Snapshots received per sender, oldest first, each awaiting its `Install` (several can
    /// arrive before the protocol's actions are carried out, e.g. while a worker computes).
    inbox_models: HashMap<NodeId, VecDeque<Payload>>,
}

impl NodeModel {
    /// A node starting from `initial`, in a run with `workers` workers; `me` is the node's
    /// worker index (None for a server).
    pub fn new(initial: Vec<f32>, workers: usize, me: Option<usize>) -> Self {
        NodeModel {
            model: Arc::new(initial),
            applied: Arc::new(vec![0; workers]),
            me,
            unfolded: Vec::new(),
            own_updates: BTreeMap::new(),
            inbox_updates: HashMap::new(),
            inbox_models: HashMap::new(),
        }
    }

    /// Carries out the payload part of `action` (Apply, Discard, Install) at node `node`, where
    /// `roles[n]` is the role of node `n`. Other actions return `Ok(None)`. Both drivers go
    /// through here, so the learning side of every protocol action is the same under each.
    ///
    /// # Errors
    /// [`CoreError::Protocol`] when the payload named is not held or comes from a non-worker
    /// (a protocol or driver bug), or an update's length is not the model's (a peer's garbage).
    pub fn carry_out(
        &mut self,
        node: NodeId,
        action: &Action,
        roles: &[Role],
    ) -> Result<Option<PayloadEffect>> {
        let err = |message: String| CoreError::Protocol { node, message };
        let worker_of = |from: NodeId| match roles.get(from) {
            Some(Role::Worker(w)) => Ok(*w),
            _ => Err(err(format!("update from non-worker node {from}"))),
        };
        Ok(Some(match *action {
            Action::Apply { from, clock } => {
                let worker = worker_of(from)?;
                let held = self.inbox_updates.get(&(from, clock)).map(|p| p.data.len());
                match held {
                    None => {
                        return Err(err(format!(
                            "no update payload from node {from} for clock {clock}"
                        )))
                    }
                    Some(n) if n != self.model.len() => {
                        return Err(err(format!(
                            "update from node {from} for clock {clock} has {n} parameters, \
                             the model {}",
                            self.model.len()
                        )))
                    }
                    Some(_) => {}
                }
                self.apply(from, worker, clock);
                PayloadEffect::Applied
            }
            Action::Discard { from, clock } => {
                if !self.discard(from, worker_of(from)?, clock) {
                    return Err(err(format!(
                        "no update payload from node {from} for clock {clock} to discard"
                    )));
                }
                PayloadEffect::Discarded
            }
            Action::Install { from } => {
                if !self.install(from) {
                    return Err(err(format!(
                        "no model payload from node {from} to install (or one of another size)"
                    )));
                }
                PayloadEffect::Installed
            }
            _ => return Ok(None),
        }))
    }

    /// Computes worker `worker`'s update for `iter` on the local model and applies it locally
    /// too (read-my-writes, as Petuum's client cache does). A workload offering a scaled update
    /// gets it held as one ([`ScaledUpdate`], on the model just read), with the same bits.
    ///
    /// # Panics
    /// When the workload's update is not of the model's length (a workload's bug).
    pub fn compute<W: Workload + ?Sized>(
        &mut self,
        w: &W,
        worker: usize,
        workers: usize,
        iter: u64,
    ) {
        self.fold();
        let u = match w.scaled_update(&self.model, worker, workers, iter) {
            Some(parts) => {
                Params::Scaled(Arc::new(ScaledUpdate::new(parts, Arc::clone(&self.model))))
            }
            None => w.update(&self.model, worker, workers, iter).into(),
        };
        self.unfolded.push(u.clone());
        self.own_updates.insert(iter, u);
    }

    /// Adds the own updates not yet in the model.
    fn fold(&mut self) {
        for u in self.unfolded.drain(..) {
            u.add_to(&mut self.model);
        }
    }

    /// The local model with every own update in it (a copy while some are not folded yet).
    pub fn view(&self) -> Cow<'_, [f32]> {
        if self.unfolded.is_empty() {
            return Cow::Borrowed(&self.model);
        }
        let mut m = Arc::new(self.model.to_vec());
        for u in &self.unfolded {
            u.add_to(&mut m);
        }
        Cow::Owned(Arc::unwrap_or_clone(m))
    }

    /// The payload to attach to an outgoing message of kind `kind` for `clock`.
    pub fn outgoing(&mut self, kind: PayloadKind, clock: u64) -> Option<Payload> {
        match kind {
            PayloadKind::None | PayloadKind::TaskResult | PayloadKind::Version => None,
            PayloadKind::Update => {
                let data = self.own_updates.get(&clock)?.clone();
                Some(Payload {
                    data,
                    applied: Arc::new(Vec::new()),
                })
            }
            PayloadKind::Model => Some(Payload {
                data: {
                    self.fold();
                    Params::Dense(Arc::clone(&self.model))
                },
                applied: Arc::clone(&self.applied),
            }),
        }
    }

    /// Stores an arriving payload.
    pub fn receive(&mut self, from: NodeId, kind: PayloadKind, clock: u64, payload: Payload) {
        match kind {
            PayloadKind::None | PayloadKind::TaskResult | PayloadKind::Version => {}
            PayloadKind::Update => {
                self.inbox_updates.insert((from, clock), payload);
            }
            PayloadKind::Model => {
                self.inbox_models
                    .entry(from)
                    .or_default()
                    .push_back(payload);
            }
        }
    }

    /// Applies the update received from worker `worker` (node `from`) for `clock`.
    /// Returns false when no such payload is held (a driver bug).
    ///
    /// # Panics
    /// When the update's length is not the model's ([`NodeModel::carry_out`] checks first).
    pub fn apply(&mut self, from: NodeId, worker: usize, clock: u64) -> bool {
        let Some(p) = self.inbox_updates.remove(&(from, clock)) else {
            return false;
        };
        self.fold();
        p.data.add_to(&mut self.model);
        self.settle(worker, clock);
        true
    }

    /// Records that `worker`'s updates below `clock + 1` are settled.
    fn settle(&mut self, worker: usize, clock: u64) {
        if self.applied.get(worker).is_some_and(|&a| a < clock + 1) {
            Arc::make_mut(&mut self.applied)[worker] = clock + 1;
        }
    }

    /// Drops the update received from worker `worker` (node `from`) for `clock` without
    /// applying it. Returns false when no such payload is held.
    pub fn discard(&mut self, from: NodeId, worker: usize, clock: u64) -> bool {
        if self.inbox_updates.remove(&(from, clock)).is_none() {
            return false;
        }
        self.settle(worker, clock);
        true
    }

    /// Installs the oldest snapshot from `from` not yet installed, then re-applies this
    /// worker's own updates the snapshot does not hold yet (read-my-writes, as Petuum's client
    /// applies its pending oplog over rows the server pushes). The snapshot's `applied` count
    /// for this worker says which of its updates the server had applied. Returns false when no
    /// snapshot is held or the oldest is not of this model's shape (it is then dropped).
    pub fn install(&mut self, from: NodeId) -> bool {
        let Some(p) = self
            .inbox_models
            .get_mut(&from)
            .and_then(VecDeque::pop_front)
        else {
            return false;
        };
        if p.data.len() != self.model.len() || p.applied.len() != self.applied.len() {
            return false;
        }
        // Adopted, not copied: the re-applied updates below copy it only while it is shared.
        self.model = p.data.into_dense();
        self.unfolded.clear();
        self.applied = p.applied;
        if let Some(me) = self.me {
            let held = self.applied.get(me).copied().unwrap_or(0);
            self.own_updates.retain(|&c, _| c >= held);
            for u in self.own_updates.values() {
                u.add_to(&mut self.model);
            }
        }
        true
    }
}

/// The parameter-server family: every [`Workload`] learns through [`NodeModel`].
impl<W: Workload + ?Sized> Learning for W {
    type Node = NodeModel;

    fn node(&self, _node: NodeId, role: Role, workers: usize) -> NodeModel {
        let me = match role {
            Role::Worker(w) => Some(w),
            Role::Server => None,
        };
        NodeModel::new(self.initial_model(), workers, me)
    }

    fn compute(&self, state: &mut NodeModel, worker: usize, workers: usize, iter: u64) {
        state.compute(self, worker, workers, iter);
    }

    fn carry_out(
        &self,
        state: &mut NodeModel,
        node: NodeId,
        action: &Action,
        roles: &[Role],
    ) -> Result<Option<PayloadEffect>> {
        state.carry_out(node, action, roles)
    }

    fn outgoing(&self, state: &mut NodeModel, _to: NodeId, msg: &Message) -> Option<Payload> {
        state.outgoing(msg.payload(), msg.payload_key())
    }

    fn receive(&self, state: &mut NodeModel, from: NodeId, msg: &Message, payload: Payload) {
        state.receive(from, msg.payload(), msg.payload_key(), payload);
    }

    fn applied<'a>(&self, state: &'a NodeModel) -> &'a [u64] {
        &state.applied
    }

    fn evaluate(&self, state: &NodeModel) -> (f64, f64) {
        Workload::evaluate(self, &state.view())
    }

    fn objective(&self, state: &NodeModel) -> Option<f64> {
        Workload::objective(self, &state.view())
    }

    fn batch_size(&self, workers: usize) -> usize {
        Workload::batch_size(self, workers)
    }

    fn payload_words(&self, workers: usize) -> usize {
        payload_words(workers, self.dim())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learning::ScaledParts;

    fn snapshot(v: f32, applied: u64) -> Payload {
        Payload {
            data: vec![v].into(),
            applied: Arc::new(vec![applied]),
        }
    }

    #[test]
    fn a_shared_model_is_copied_on_write_and_a_sent_snapshot_keeps_its_values() {
        let mut m = NodeModel::new(vec![1.0, 2.0], 1, None);
        m.receive(5, PayloadKind::Update, 0, snapshot(0.0, 0));
        let sent = m.outgoing(PayloadKind::Model, 0).unwrap();
        assert!(
            matches!(&sent.data, Params::Dense(d) if Arc::ptr_eq(d, &m.model)),
            "a snapshot is shared, not copied"
        );
        let update = Payload {
            data: vec![0.5, 0.25].into(),
            applied: Arc::new(Vec::new()),
        };
        m.receive(5, PayloadKind::Update, 1, update);
        assert!(m.apply(5, 0, 1));
        assert_eq!(sent.data[..], [1.0, 2.0], "what was sent does not change");
        assert_eq!(*m.model, vec![1.5, 2.25]);
        assert_eq!(*sent.applied, vec![0]);
        assert_eq!(*m.applied, vec![2]);
        // Unshared now: the next change is in place.
        let before = Arc::as_ptr(&m.model);
        let update = Payload {
            data: vec![1.0, 0.0].into(),
            applied: Arc::new(Vec::new()),
        };
        m.receive(5, PayloadKind::Update, 2, update);
        assert!(m.apply(5, 0, 2));
        assert_eq!(Arc::as_ptr(&m.model), before);
        assert_eq!(*m.model, vec![2.5, 2.25]);
    }

    #[test]
    fn snapshots_install_in_arrival_order() {
        let mut m = NodeModel::new(vec![0.0], 1, None);
        m.receive(0, PayloadKind::Model, 0, snapshot(1.0, 1));
        m.receive(0, PayloadKind::Model, 0, snapshot(2.0, 2));
        assert!(m.install(0));
        assert_eq!((m.model[0], m.applied[0]), (1.0, 1));
        assert!(m.install(0));
        assert_eq!((m.model[0], m.applied[0]), (2.0, 2));
        assert!(!m.install(0));
    }

    #[test]
    fn install_keeps_own_updates_the_snapshot_lacks() {
        let mut m = NodeModel::new(vec![0.0], 1, Some(0));
        for c in 0..3 {
            m.compute(&crate::learning::CountingProbe, 0, 1, c);
        }
        assert_eq!(m.view()[0], 3.0);
        assert_eq!(
            m.model[0], 2.0,
            "the last own update is folded when next read"
        );
        m.outgoing(PayloadKind::Update, 0).unwrap();
        m.outgoing(PayloadKind::Update, 1).unwrap();
        // The server had applied only clock 0 (model 1.0 + others' 10.0).
        m.receive(9, PayloadKind::Model, 0, snapshot(11.0, 1));
        assert!(m.install(9));
        // own clocks 1 (sent, not applied yet) and 2 (not sent) are re-applied.
        assert_eq!(m.view()[0], 13.0);
        m.receive(9, PayloadKind::Model, 0, snapshot(13.0, 3));
        assert!(m.install(9));
        assert_eq!(m.view()[0], 13.0, "nothing left to re-apply");
    }

    /// A workload whose update is `-0.5 * model` plus one exact entry, offered scaled or not.
    struct Shrink {
        scaled: bool,
    }

    impl Workload for Shrink {
        fn dim(&self) -> usize {
            3
        }
        fn initial_model(&self) -> Vec<f32> {
            vec![1.0, 0.3, -7.1]
        }
        fn update(&self, model: &[f32], _: usize, _: usize, iter: u64) -> Vec<f32> {
            let mut u: Vec<f32> = model.iter().map(|&w| -0.5 * w).collect();
            u[1] = 0.1 * iter as f32;
            u
        }
        fn scaled_update(
            &self,
            model: &[f32],
            w: usize,
            n: usize,
            iter: u64,
        ) -> Option<ScaledParts> {
            self.scaled.then(|| ScaledParts {
                c: -0.5,
                post: 1.0,
                exact: vec![(1, self.update(model, w, n, iter)[1])],
            })
        }
        fn batch_size(&self, _: usize) -> usize {
            1
        }
        fn evaluate(&self, model: &[f32]) -> (f64, f64) {
            (f64::from(model[0]), 0.0)
        }
    }

    /// Three computes, a snapshot lacking the last two, one more compute: the views and the
    /// updates sent.
    fn run(w: &Shrink) -> (Vec<Vec<f32>>, Vec<Vec<f32>>) {
        let mut m = NodeModel::new(w.initial_model(), 1, Some(0));
        let (mut views, mut sent) = (Vec::new(), Vec::new());
        for c in 0..3 {
            m.compute(w, 0, 1, c);
            views.push(m.view().into_owned());
            sent.push(m.outgoing(PayloadKind::Update, c).unwrap().data.to_vec());
        }
        m.receive(
            9,
            PayloadKind::Model,
            0,
            Payload {
                data: vec![0.5, 0.5, 0.5].into(),
                applied: Arc::new(vec![1]),
            },
        );
        assert!(m.install(9));
        views.push(m.view().into_owned());
        m.compute(w, 0, 1, 3);
        views.push(m.view().into_owned());
        (views, sent)
    }

    #[test]
    fn a_scaled_update_moves_and_folds_the_bits_of_the_dense_one() {
        let dense = run(&Shrink { scaled: false });
        let scaled = run(&Shrink { scaled: true });
        assert_eq!(dense, scaled);
        assert_eq!(dense.0[0], vec![0.5, 0.3, -3.55]);
    }

    #[test]
    fn an_update_of_the_wrong_length_is_a_protocol_error_naming_the_sender() {
        let mut m = NodeModel::new(vec![0.0; 3], 1, None);
        m.receive(4, PayloadKind::Update, 0, snapshot(1.0, 0));
        let roles = [
            Role::Server,
            Role::Server,
            Role::Server,
            Role::Server,
            Role::Worker(0),
        ];
        let e = m
            .carry_out(0, &Action::Apply { from: 4, clock: 0 }, &roles)
            .unwrap_err()
            .to_string();
        assert!(e.contains("node 4") && e.contains("1 parameters"), "{e}");
    }
}
