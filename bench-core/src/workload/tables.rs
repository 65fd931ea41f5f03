//! A model learned through row-level parameter-server tables (essp.txt's Bösen), for any
//! [`TableModel`]: the drivers' [`Learning`] for the protocols of [`crate::protocol::table`].
//!
//! A shard keeps a dense vector of the rows (laid out by [`TableModel::offset`]) and uses the
//! rows it owns; a worker keeps only the rows its cache holds, plus the model's own worker
//! state. A worker applies its own INCs to its cache at once (read-my-writes) and re-applies
//! the ones a fresh row does not hold yet: every row a shard sends carries how many of that
//! worker's clocks the shard had applied.
//!
//! The loss is evaluated on shard 0's rows; with several shards no node holds every row, and
//! the loss is reported as NaN.

use crate::error::{CoreError, Result};
use crate::learning::{payload_words, Learning, Payload, PayloadEffect};
use crate::protocol::table::{RowAccess, RowKey};
use crate::protocol::{Action, Message, NodeId, Role};
use crate::workload::row_cache::RowCache;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ops::Range;
use std::sync::Arc;

/// What a model learned through row tables provides.
pub trait TableModel: Send + Sync + std::fmt::Debug {
    /// What a worker keeps besides its cache.
    type Local: Send + std::fmt::Debug;
    /// Floats per row.
    fn row_len(&self) -> usize;
    /// Rows over all tables.
    fn rows_total(&self) -> usize;
    /// Offset of `key`'s row in the dense layout.
    ///
    /// # Errors
    /// [`CoreError::Config`] naming the row and the tables' sizes when it is out of range.
    fn offset(&self, key: RowKey) -> Result<usize>;
    /// Every row's initial value, in the dense layout, for a run of `workers` workers.
    fn initial_values(&self, workers: usize) -> Vec<f32>;
    /// Worker `worker`'s own state at the start.
    fn local(&self, worker: usize, workers: usize) -> Self::Local;
    /// Examples (ratings, documents) in one worker's mini-batch of a clock: the units a
    /// clock's read-compute steps divide.
    fn examples_per_clock(&self, workers: usize) -> usize;
    /// The rows worker `worker` reads and INCs while processing examples `part` of its
    /// mini-batch of `clock`, sorted, without repeats.
    fn rows(&self, worker: usize, workers: usize, clock: u64, part: Range<usize>) -> Vec<RowKey>;
    /// Computes examples `part` of worker `worker`'s mini-batch of `clock`: `values` holds
    /// `rows` (each `row_len` floats, in order) as read, and holds them as changed on return.
    #[allow(clippy::too_many_arguments)]
    fn compute(
        &self,
        local: &mut Self::Local,
        rows: &[RowKey],
        values: &mut [f32],
        worker: usize,
        workers: usize,
        clock: u64,
        part: Range<usize>,
    );
    /// `(loss, accuracy)` of the rows in the dense layout.
    fn evaluate(&self, values: &[f32]) -> (f64, f64);
    /// Examples a worker processes per clock (the compute-time model charges per example).
    fn batch_size(&self, workers: usize) -> usize;
}

/// How a worker's clock is divided into read-compute steps (see [`RowAccess`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClockSteps {
    /// One step per example (a rating, a document): every row is read from the cache just
    /// before the example that uses it, as Bösen's computation threads do.
    #[default]
    PerExample,
    /// This many steps (at most one per example): 1 reads every row of the clock when it
    /// starts.
    Fixed(u64),
}

impl ClockSteps {
    /// From a config's `steps_per_clock`: absent, one step per example.
    ///
    /// # Errors
    /// [`CoreError::OutOfRange`] for 0.
    pub fn from_config(steps_per_clock: Option<u64>) -> Result<Self> {
        match steps_per_clock {
            None => Ok(ClockSteps::PerExample),
            Some(0) => Err(CoreError::out_of_range(
                "steps_per_clock",
                "at least 1 (leave it out for one step per example)",
                0,
            )),
            Some(n) => Ok(ClockSteps::Fixed(n)),
        }
    }

    /// A label for manifests and CSVs.
    pub fn label(self) -> String {
        match self {
            ClockSteps::PerExample => "per-example".into(),
            ClockSteps::Fixed(n) => n.to_string(),
        }
    }
}

/// `model` learned through row tables with `shards` shards and `workers` workers.
#[derive(Debug)]
pub struct TableLearning<M> {
    model: Arc<M>,
    workers: usize,
    shards: usize,
    steps: ClockSteps,
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
    fn part(&self, step: u64) -> Range<usize> {
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

/// A worker's coalesced INCs of one clock: its rows in the order first written, K deltas per
/// row, and where each row's deltas are. Steps add to it one after another; a row written by
/// several steps keeps one entry whose deltas are summed in step order.
#[derive(Debug, Default)]
struct Inc {
    rows: Vec<RowKey>,
    deltas: Vec<f32>,
    at: EntryIndex,
}

/// Models of at most this many rows index an INC's entries by a dense array (4 bytes a row);
/// larger ones (the paper-scale Netflix twin's 498k rows, with a dozen live INCs per worker)
/// by a hash map.
const DENSE_INDEX_ROWS: usize = 1 << 16;

/// Where each row's entry is in an [`Inc`], by the row's dense index (its offset over the row
/// length). Why not a hash map of `RowKey` everywhere: an LDA clock adds a step per document,
/// thousands of word rows each, and hashing them was a tenth of essp-fig2-breakdown's time.
#[derive(Debug, Default)]
enum EntryIndex {
    #[default]
    Unset,
    Dense(Vec<u32>),
    Sparse(FxHashMap<usize, u32>),
}

const NO_ENTRY: u32 = u32::MAX;

impl EntryIndex {
    fn get(&self, row: usize) -> Option<usize> {
        match self {
            EntryIndex::Unset => None,
            EntryIndex::Dense(v) => match v.get(row) {
                Some(&e) if e != NO_ENTRY => Some(e as usize),
                _ => None,
            },
            EntryIndex::Sparse(m) => m.get(&row).map(|&e| e as usize),
        }
    }

    fn insert(&mut self, row: usize, entry: usize, rows_total: usize) {
        if matches!(self, EntryIndex::Unset) {
            *self = if rows_total <= DENSE_INDEX_ROWS {
                EntryIndex::Dense(vec![NO_ENTRY; rows_total])
            } else {
                EntryIndex::Sparse(FxHashMap::default())
            };
        }
        let entry = u32::try_from(entry).expect("fewer than 2^32 rows in one clock's INC");
        match self {
            EntryIndex::Dense(v) => v[row] = entry,
            EntryIndex::Sparse(m) => {
                m.insert(row, entry);
            }
            EntryIndex::Unset => unreachable!("set above"),
        }
    }
}

impl Inc {
    /// Adds a step's INCs (`k` deltas per row of `rows`, whose dense indices are `dense`, of a
    /// model of `rows_total` rows) to the clock's.
    fn add(
        &mut self,
        rows: &[RowKey],
        dense: &[usize],
        deltas: &[f32],
        k: usize,
        rows_total: usize,
    ) {
        for ((r, &x), d) in rows.iter().zip(dense).zip(deltas.chunks_exact(k)) {
            match self.at.get(x) {
                Some(i) => {
                    for (m, d) in self.deltas[i * k..(i + 1) * k].iter_mut().zip(d) {
                        *m += d;
                    }
                }
                None => {
                    self.at.insert(x, self.rows.len(), rows_total);
                    self.rows.push(*r);
                    self.deltas.extend_from_slice(d);
                }
            }
        }
    }

    /// The deltas of the row of dense index `row`, if this clock wrote it.
    fn get(&self, row: usize, k: usize) -> Option<&[f32]> {
        self.at.get(row).map(|i| &self.deltas[i * k..(i + 1) * k])
    }

    /// Entry indices in row order (an INC message lists its rows sorted).
    fn sorted(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.rows.len()).collect();
        order.sort_unstable_by_key(|&i| self.rows[i]);
        order
    }
}

/// One node's state.
#[derive(Debug)]
pub struct TableNode<L> {
    /// Shard: dense rows in the MF model's layout (empty on workers).
    values: Vec<f32>,
    /// Worker: the cached rows, by dense row index (offset / row length).
    cache: RowCache,
    /// Worker index (None: a shard).
    me: Option<usize>,
    /// Worker: what the model keeps on the worker besides the cache (e.g. LDA's topic
    /// assignments of its documents).
    local: Option<L>,
    /// Shard: per worker, clocks applied.
    applied: Vec<u64>,
    /// Worker: own INCs by clock, kept until every shard's copies hold them.
    own: BTreeMap<u64, Inc>,
    /// Worker: per shard, own clocks the last rows from it held.
    own_applied: Vec<u64>,
    /// Shard: received INCs by (sender, clock).
    inbox_incs: HashMap<(NodeId, u64), Payload>,
    /// Worker: received rows per shard, oldest first.
    inbox_rows: HashMap<NodeId, VecDeque<Payload>>,
    /// Row lists the protocol named, per peer, oldest first.
    row_sets: HashMap<NodeId, VecDeque<Vec<RowKey>>>,
    /// Worker: the clock being computed and its next step.
    step_clock: Option<u64>,
    next_step: u64,
}

impl<M: TableModel> TableLearning<M> {
    fn err(node: NodeId, message: String) -> CoreError {
        CoreError::Protocol { node, message }
    }

    fn apply_inc(
        &self,
        state: &mut TableNode<M::Local>,
        node: NodeId,
        from: NodeId,
        clock: u64,
    ) -> Result<()> {
        let p = state.inbox_incs.remove(&(from, clock)).ok_or_else(|| {
            Self::err(
                node,
                format!("no INC payload from node {from} for clock {clock}"),
            )
        })?;
        let k = self.model.row_len();
        if p.data.len() != p.applied.len() * k {
            return Err(Self::err(
                node,
                format!(
                    "INC payload from node {from} has {} values for {} rows",
                    p.data.len(),
                    p.applied.len()
                ),
            ));
        }
        for (i, &w) in p.applied.iter().enumerate() {
            let key = RowKey::from_word(w);
            if key.shard(self.shards) != node {
                return Err(Self::err(
                    node,
                    format!(
                        "node {from} sent an INC of row {key:?}, which shard {} holds",
                        key.shard(self.shards)
                    ),
                ));
            }
            let o = self.model.offset(key)?;
            for (v, d) in state.values[o..o + k]
                .iter_mut()
                .zip(&p.data[i * k..(i + 1) * k])
            {
                *v += d;
            }
        }
        let w = from - self.shards;
        state.applied[w] = state.applied[w].max(clock + 1);
        Ok(())
    }

    fn install(&self, state: &mut TableNode<M::Local>, node: NodeId, from: NodeId) -> Result<()> {
        let p = state
            .inbox_rows
            .get_mut(&from)
            .and_then(VecDeque::pop_front)
            .ok_or_else(|| Self::err(node, format!("no rows from shard {from} to install")))?;
        let named = state
            .row_sets
            .get_mut(&from)
            .and_then(VecDeque::pop_front)
            .ok_or_else(|| {
                Self::err(
                    node,
                    format!("rows from shard {from} the protocol did not name"),
                )
            })?;
        let k = self.model.row_len();
        let (&held, keys) = p
            .applied
            .split_first()
            .ok_or_else(|| Self::err(node, format!("rows from shard {from} without a header")))?;
        let rows: Vec<RowKey> = keys.iter().map(|&w| RowKey::from_word(w)).collect();
        if p.data.len() != rows.len() * k {
            return Err(Self::err(
                node,
                format!(
                    "rows from shard {from}: {} values for {} rows of {k}",
                    p.data.len(),
                    rows.len()
                ),
            ));
        }
        if let Some(r) = rows.iter().find(|r| named.binary_search(r).is_err()) {
            return Err(Self::err(
                node,
                format!("shard {from} sent row {r:?}, which the protocol did not name"),
            ));
        }
        // This worker's own INCs the shard's copy does not hold yet, oldest first: re-applied
        // to every row installed. Gathered once: walking the map's range for each row of a
        // push (a thousand rows under ESSP) showed as a tenth of an essp-fig3 profile (an A/B
        // of whole runs did not separate the two from this VM's noise).
        let pending: Vec<&Inc> = state.own.range(held..).map(|(_, inc)| inc).collect();
        for (i, key) in rows.iter().enumerate() {
            let x = self.model.offset(*key)? / k.max(1);
            let row = state.cache.get_or_zero(x);
            row.copy_from_slice(&p.data[i * k..(i + 1) * k]);
            for inc in &pending {
                if let Some(deltas) = inc.get(x, k) {
                    for (v, d) in row.iter_mut().zip(deltas) {
                        *v += d;
                    }
                }
            }
        }
        state.own_applied[from] = held;
        let oldest = state.own_applied.iter().copied().min().unwrap_or(0);
        state.own = state.own.split_off(&oldest);
        Ok(())
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::RatingsShape;
    use crate::workload::{MatrixFactorization, MfConfig, MfTables, ITEM_TABLE, USER_TABLE};

    fn tables(shards: usize) -> MfTables {
        let shape = RatingsShape {
            users: 20,
            items: 10,
            ratings: 400,
            rank: 2,
            noise: 0.1,
            popularity_exponent: 1.0,
        };
        let all = shape.generate(1);
        let (test, train) = all.split_at(40);
        let cfg = MfConfig {
            rank: 2,
            lambda: 0.01,
            step: 0.1,
            minibatch_fraction: 0.05,
            init_scale: 0.3,
            init_seed: 1,
        };
        let mf = MatrixFactorization::new(cfg, 20, 10, train.to_vec(), test.to_vec()).unwrap();
        MfTables::new(Arc::new(mf), 2, shards).unwrap()
    }

    fn payload(meta: Vec<u64>, data: Vec<f32>) -> Payload {
        Payload {
            data: data.into(),
            applied: Arc::new(meta),
        }
    }

    /// A clock's steps coalesce into one INC: the union of their rows, deltas of a row in both
    /// added.
    #[test]
    fn step_incs_merge_into_the_clocks() {
        let key = |row| RowKey { table: 0, row };
        for total in [10, DENSE_INDEX_ROWS + 1] {
            let mut inc = Inc::default();
            inc.add(&[key(1), key(4)], &[1, 4], &[1.0, 2.0, 3.0, 4.0], 2, total);
            inc.add(
                &[key(0), key(4), key(9)],
                &[0, 4, 9],
                &[5.0, 6.0, 7.0, 8.0, 9.0, 10.0],
                2,
                total,
            );
            assert_eq!(
                matches!(inc.at, EntryIndex::Dense(_)),
                total <= DENSE_INDEX_ROWS
            );
            let sorted: Vec<RowKey> = inc.sorted().into_iter().map(|i| inc.rows[i]).collect();
            assert_eq!(sorted, vec![key(0), key(1), key(4), key(9)]);
            let deltas: Vec<f32> = inc
                .sorted()
                .into_iter()
                .flat_map(|i| inc.deltas[i * 2..i * 2 + 2].to_vec())
                .collect();
            assert_eq!(deltas, vec![5.0, 6.0, 1.0, 2.0, 10.0, 12.0, 9.0, 10.0]);
            assert_eq!(inc.get(4, 2), Some(&[10.0, 12.0][..]));
            assert_eq!(inc.get(5, 2), None);
        }
    }

    /// Splitting a clock into steps changes when rows are read, not what one worker computes.
    #[test]
    fn steps_split_the_mini_batch_evenly() {
        let t = tables(1);
        let n = t.model().examples_per_clock(2);
        for steps in [
            ClockSteps::Fixed(1),
            ClockSteps::Fixed(3),
            ClockSteps::PerExample,
        ] {
            let t = tables(1).with_steps(steps);
            let k = t.steps(0, 0);
            let covered: usize = (0..k).map(|i| t.part(i).len()).sum();
            assert_eq!(covered, n, "{steps:?}");
            assert_eq!(t.part(k - 1).end, n);
        }
        assert_eq!(
            tables(1).with_steps(ClockSteps::PerExample).steps(0, 0),
            n as u64
        );
        assert_eq!(
            tables(1).with_steps(ClockSteps::Fixed(10_000)).steps(0, 0),
            n as u64
        );
        assert!(ClockSteps::from_config(Some(0)).is_err());
    }

    #[test]
    fn an_inc_of_a_row_out_of_range_is_an_error_naming_it() {
        let t = tables(1);
        let mut shard = t.node(0, Role::Server, 2);
        let bad = RowKey {
            table: USER_TABLE,
            row: 20,
        };
        let msg = Message::RowInc { clock: 0 };
        t.receive(
            &mut shard,
            1,
            &msg,
            payload(vec![bad.to_word()], vec![0.5, 0.5]),
        );
        let e = t
            .carry_out(&mut shard, 0, &Action::Apply { from: 1, clock: 0 }, &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("row 20 of table 0 is out of range") && e.contains("20 user rows"),
            "{e}"
        );
        let e = t
            .carry_out(&mut shard, 0, &Action::Apply { from: 1, clock: 1 }, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("no INC payload from node 1 for clock 1"), "{e}");
    }

    #[test]
    fn rows_the_protocol_did_not_name_are_refused() {
        let t = tables(1);
        let mut w = t.node(1, Role::Worker(0), 2);
        let named = RowKey {
            table: ITEM_TABLE,
            row: 3,
        };
        let other = RowKey {
            table: ITEM_TABLE,
            row: 4,
        };
        t.carry_out(
            &mut w,
            1,
            &Action::RowSet {
                peer: 0,
                rows: vec![named],
            },
            &[],
        )
        .unwrap();
        let msg = Message::Rows { clock: 0, stamp: 0 };
        t.receive(
            &mut w,
            0,
            &msg,
            payload(vec![0, other.to_word()], vec![1.0, 2.0]),
        );
        let e = t
            .carry_out(&mut w, 1, &Action::Install { from: 0 }, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("did not name"), "{e}");
    }

    /// A worker's own INC stays in its cache (read-my-writes) and is re-applied on top of a
    /// fresh copy that does not hold it yet, but not on one that does.
    #[test]
    fn own_incs_are_reapplied_until_the_shard_holds_them() {
        let t = tables(1);
        let rows = t.clock_rows(0, 0);
        let mut shard = t.node(0, Role::Server, 2);
        let mut w = t.node(1, Role::Worker(0), 2);
        let k = t.model().row_len();
        let cached = |w: &TableNode<()>, r: &RowKey| {
            let i = t.model().offset(*r).unwrap() / k;
            w.cache.get(i).expect("cached").to_vec()
        };
        let install = |w: &mut TableNode<()>, shard: &mut TableNode<()>, held: u64| {
            t.carry_out(
                shard,
                0,
                &Action::RowSet {
                    peer: 1,
                    rows: rows.clone(),
                },
                &[],
            )
            .unwrap();
            let mut p = t
                .outgoing(shard, 1, &Message::Rows { clock: 0, stamp: 0 })
                .unwrap();
            let mut meta = (*p.applied).clone();
            meta[0] = held;
            p.applied = Arc::new(meta);
            t.carry_out(
                w,
                1,
                &Action::RowSet {
                    peer: 0,
                    rows: rows.clone(),
                },
                &[],
            )
            .unwrap();
            t.receive(w, 0, &Message::Rows { clock: 0, stamp: 0 }, p);
            t.carry_out(w, 1, &Action::Install { from: 0 }, &[])
                .unwrap();
        };
        install(&mut w, &mut shard, 0);
        let before: Vec<Vec<f32>> = rows.iter().map(|r| cached(&w, r)).collect();
        t.compute(&mut w, 0, 2, 0);
        let after: Vec<Vec<f32>> = rows.iter().map(|r| cached(&w, r)).collect();
        assert_ne!(before, after, "the computation changed its rows");
        // A copy without the INC (held = 0): the INC is re-applied.
        install(&mut w, &mut shard, 0);
        let again: Vec<Vec<f32>> = rows.iter().map(|r| cached(&w, r)).collect();
        assert_eq!(again, after);
        // The shard applies it; a copy that holds it (held = 1) is taken as it is.
        let inc = t
            .outgoing(&mut w, 0, &Message::RowInc { clock: 0 })
            .unwrap();
        t.receive(&mut shard, 1, &Message::RowInc { clock: 0 }, inc);
        t.carry_out(&mut shard, 0, &Action::Apply { from: 1, clock: 0 }, &[])
            .unwrap();
        install(&mut w, &mut shard, 1);
        for (r, a) in rows.iter().zip(&after) {
            for (x, y) in cached(&w, r).iter().zip(a) {
                assert!((x - y).abs() < 1e-6, "{r:?}: {x} vs {y}");
            }
        }
        assert!(w.own.is_empty(), "the held INC was dropped");
    }
}
