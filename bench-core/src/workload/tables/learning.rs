//! [`TableLearning`]: the drivers' [`Learning`] for a [`TableModel`] on row tables, and one
//! node's state ([`TableNode`]): what a shard and a worker send, receive and compute.

use super::inc::*;
use super::steps::*;
use super::TableModel;
use crate::error::{CoreError, Result};
use crate::learning::{payload_words, Learning, Payload, PayloadEffect};
use crate::protocol::table::{RowAccess, RowKey};
use crate::protocol::{Action, Message, NodeId, Role};
use crate::workload::row_cache::RowCache;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Range;
use std::sync::Arc;

/// `model` learned through row tables with `shards` shards and `workers` workers.
#[derive(Debug)]
pub struct TableLearning<M> {
    pub(super) model: Arc<M>,
    pub(super) workers: usize,
    pub(super) shards: usize,
    pub(super) steps: ClockSteps,
}

impl<M: TableModel> TableLearning<M> {
    /// One read-compute step per example ([`ClockSteps::PerExample`]); see [`Self::with_steps`].
    ///
    /// # Errors
    /// [`CoreError::Config`] for zero workers or shards.
    pub fn new(model: Arc<M>, workers: usize, shards: usize) -> Result<Self> {
        if workers == 0 || shards == 0 {
            return Err(CoreError::Config(format!(
                "row tables need at least one worker and shard (got {workers} and {shards})"
            )));
        }
        Ok(TableLearning {
            model,
            workers,
            shards,
            steps: ClockSteps::default(),
        })
    }

    /// The same with `steps` read-compute steps per clock.
    pub fn with_steps(mut self, steps: ClockSteps) -> Self {
        self.steps = steps;
        self
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    /// Steps per clock (the same for every worker and clock).
    fn step_count(&self) -> u64 {
        let examples = self.model.examples_per_clock(self.workers).max(1) as u64;
        match self.steps {
            ClockSteps::PerExample => examples,
            ClockSteps::Fixed(n) => n.clamp(1, examples),
        }
    }

    /// The examples of step `step`: an even split of the mini-batch.
    pub(super) fn part(&self, step: u64) -> Range<usize> {
        let (n, k) = (
            self.model.examples_per_clock(self.workers),
            self.step_count(),
        );
        let at = |i: u64| (i as u128 * n as u128 / k as u128) as usize;
        at(step)..at(step + 1)
    }
}

impl<M: TableModel> RowAccess for TableLearning<M> {
    fn steps(&self, _worker: usize, _clock: u64) -> u64 {
        self.step_count()
    }

    fn rows(&self, worker: usize, clock: u64, step: u64) -> Vec<RowKey> {
        self.model
            .rows(worker, self.workers, clock, self.part(step))
    }

    fn clock_rows(&self, worker: usize, clock: u64) -> Vec<RowKey> {
        let n = self.model.examples_per_clock(self.workers);
        self.model.rows(worker, self.workers, clock, 0..n)
    }
}

/// One node's state.
#[derive(Debug)]
pub struct TableNode<L> {
    /// Shard: dense rows in the MF model's layout (empty on workers).
    pub(super) values: Vec<f32>,
    /// Worker: the cached rows, by dense row index (offset / row length).
    pub(super) cache: RowCache,
    /// Worker index (None: a shard).
    pub(super) me: Option<usize>,
    /// Worker: what the model keeps on the worker besides the cache (e.g. LDA's topic
    /// assignments of its documents).
    pub(super) local: Option<L>,
    /// Shard: per worker, clocks applied.
    pub(super) applied: Vec<u64>,
    /// Worker: own INCs by clock, kept until every shard's copies hold them.
    pub(super) own: BTreeMap<u64, Inc>,
    /// Worker: per shard, own clocks the last rows from it held.
    pub(super) own_applied: Vec<u64>,
    /// Shard: received INCs by (sender, clock).
    pub(super) inbox_incs: HashMap<(NodeId, u64), Payload>,
    /// Worker: received rows per shard, oldest first.
    pub(super) inbox_rows: HashMap<NodeId, VecDeque<Payload>>,
    /// Row lists the protocol named, per peer, oldest first.
    pub(super) row_sets: HashMap<NodeId, VecDeque<Vec<RowKey>>>,
    /// Worker: the clock being computed and its next step.
    pub(super) step_clock: Option<u64>,
    pub(super) next_step: u64,
}

impl<M: TableModel> Learning for TableLearning<M> {
    type Node = TableNode<M::Local>;

    fn node(&self, _node: NodeId, role: Role, workers: usize) -> TableNode<M::Local> {
        let me = match role {
            Role::Worker(w) => Some(w),
            Role::Server => None,
        };
        TableNode {
            values: if me.is_none() {
                self.model.initial_values(workers)
            } else {
                Vec::new()
            },
            cache: RowCache::new(
                if me.is_some() {
                    self.model.rows_total()
                } else {
                    0
                },
                self.model.row_len(),
            ),
            local: me.map(|w| self.model.local(w, workers)),
            me,
            applied: vec![0; if me.is_none() { workers } else { 0 }],
            own: BTreeMap::new(),
            own_applied: vec![0; self.shards],
            inbox_incs: HashMap::new(),
            inbox_rows: HashMap::new(),
            row_sets: HashMap::new(),
            step_clock: None,
            next_step: 0,
        }
    }

    fn compute(&self, state: &mut TableNode<M::Local>, worker: usize, workers: usize, iter: u64) {
        let k = self.model.row_len();
        // The protocol runs a clock's steps in order, one Compute each.
        if state.step_clock != Some(iter) {
            state.step_clock = Some(iter);
            state.next_step = 0;
        }
        let part = self.part(state.next_step);
        state.next_step += 1;
        let rows = self.model.rows(worker, workers, iter, part.clone());
        let at: Vec<usize> = rows
            .iter()
            .map(|r| {
                self.model
                    .offset(*r)
                    .expect("the protocol reads rows of the model")
                    / k.max(1)
            })
            .collect();
        // The protocol starts a computation only once every row it reads is cached.
        let mut local = Vec::with_capacity(rows.len() * k);
        for &i in &at {
            local.extend_from_slice(state.cache.get(i).expect("every row read is cached"));
        }
        let own = state.local.as_mut().expect("only workers compute");
        self.model
            .compute(own, &rows, &mut local, worker, workers, iter, part);
        for (&i, changed) in at.iter().zip(local.chunks_exact_mut(k.max(1))) {
            let cached = state.cache.get_mut(i).expect("read above");
            for (c, v) in cached.iter_mut().zip(changed.iter_mut()) {
                let d = *v - *c;
                *v = d;
                *c += d;
            }
        }
        let total = self.model.rows_total();
        state
            .own
            .entry(iter)
            .or_default()
            .add(&rows, &at, &local, k, total);
    }

    fn carry_out(
        &self,
        state: &mut TableNode<M::Local>,
        node: NodeId,
        action: &Action,
        _roles: &[Role],
    ) -> Result<Option<PayloadEffect>> {
        Ok(match action {
            Action::RowSet { peer, rows } => {
                state
                    .row_sets
                    .entry(*peer)
                    .or_default()
                    .push_back(rows.clone());
                None
            }
            Action::Apply { from, clock } => {
                self.apply_inc(state, node, *from, *clock)?;
                Some(PayloadEffect::Applied)
            }
            Action::Install { from } => {
                self.install(state, node, *from)?;
                Some(PayloadEffect::Installed)
            }
            _ => None,
        })
    }

    fn outgoing(
        &self,
        state: &mut TableNode<M::Local>,
        to: NodeId,
        msg: &Message,
    ) -> Option<Payload> {
        let k = self.model.row_len();
        match *msg {
            Message::RowInc { clock } => {
                let inc = state.own.get(&clock)?;
                let (mut keys, mut data) = (Vec::new(), Vec::new());
                for j in inc.sorted() {
                    let r = inc.rows[j];
                    if r.shard(self.shards) == to {
                        keys.push(r.to_word());
                        data.extend_from_slice(&inc.deltas[j * k..(j + 1) * k]);
                    }
                }
                Some(Payload {
                    data: data.into(),
                    applied: Arc::new(keys),
                })
            }
            Message::Rows { .. } | Message::RowPush { .. } => {
                let rows = state.row_sets.get_mut(&to)?.pop_front()?;
                let w = to.checked_sub(self.shards)?;
                let mut meta = Vec::with_capacity(rows.len() + 1);
                meta.push(*state.applied.get(w)?);
                let mut data = Vec::with_capacity(rows.len() * k);
                for r in &rows {
                    let o = self.model.offset(*r).ok()?;
                    meta.push(r.to_word());
                    data.extend_from_slice(&state.values[o..o + k]);
                }
                Some(Payload {
                    data: data.into(),
                    applied: Arc::new(meta),
                })
            }
            _ => None,
        }
    }

    fn receive(
        &self,
        state: &mut TableNode<M::Local>,
        from: NodeId,
        msg: &Message,
        payload: Payload,
    ) {
        match *msg {
            Message::RowInc { clock } => {
                state.inbox_incs.insert((from, clock), payload);
            }
            Message::Rows { .. } | Message::RowPush { .. } => {
                state.inbox_rows.entry(from).or_default().push_back(payload);
            }
            _ => {}
        }
    }

    fn applied<'a>(&self, state: &'a TableNode<M::Local>) -> &'a [u64] {
        &state.applied
    }

    fn evaluate(&self, state: &TableNode<M::Local>) -> (f64, f64) {
        if state.me.is_none() && self.shards == 1 {
            self.model.evaluate(&state.values)
        } else {
            (f64::NAN, f64::NAN)
        }
    }

    fn batch_size(&self, workers: usize) -> usize {
        self.model.batch_size(workers)
    }

    fn computes_per_iteration(&self, _workers: usize) -> u64 {
        self.step_count()
    }

    fn payload_words(&self, _workers: usize) -> usize {
        let rows = self.model.rows_total();
        payload_words(rows + 1, rows * self.model.row_len())
    }

    fn eval_node(&self) -> Option<NodeId> {
        Some(0)
    }
}
