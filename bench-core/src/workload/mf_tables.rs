//! Matrix factorisation on row-level parameter-server tables (essp.txt's MF on Bösen).
//!
//! Table 0 holds the user factors `L` (one row per user), table 1 the item factors `R` (one
//! row per item), each row K floats, sharded by [`RowKey::shard`]. At clock `c` a worker GETs
//! the rows of its mini-batch (the users and items of its next ratings), runs sequential SGD on
//! its local copies, and INCs each touched row by the change it made; the INCs of a clock are
//! coalesced and sent with CLOCK to every shard ([`crate::protocol::table`]).
//!
//! A shard keeps a dense vector laid out as [`MatrixFactorization`]'s model (`L` then `R`) and
//! uses the rows it owns; a worker keeps only the rows its cache holds. A worker applies its own
//! INCs to its cache at once (read-my-writes) and re-applies the ones a fresh row does not
//! hold yet: every row a shard sends carries how many of that worker's clocks the shard had
//! applied.
//!
//! The loss is the held-out mean squared error of shard 0's rows; with several shards no node
//! holds every row, and the loss is reported as NaN (the staleness profile, not the loss, is
//! what sharded runs measure).

use super::{MatrixFactorization, Workload};
use crate::driver::{payload_words, Learning, Payload, PayloadEffect};
use crate::error::{CoreError, Result};
use crate::protocol::table::{RowAccess, RowKey};
use crate::protocol::{Action, Message, NodeId, Role};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

/// The user-factor table.
pub const USER_TABLE: u32 = 0;
/// The item-factor table.
pub const ITEM_TABLE: u32 = 1;

/// Matrix factorisation learned through row tables with `shards` shards and `workers` workers.
#[derive(Debug)]
pub struct MfTables {
    mf: Arc<MatrixFactorization>,
    workers: usize,
    shards: usize,
}

impl MfTables {
    /// # Errors
    /// [`CoreError::Config`] for zero workers or shards, or more rows than a table holds.
    pub fn new(mf: Arc<MatrixFactorization>, workers: usize, shards: usize) -> Result<Self> {
        if workers == 0 || shards == 0 {
            return Err(CoreError::Config(format!(
                "MF tables need at least one worker and shard (got {workers} and {shards})"
            )));
        }
        if u32::try_from(mf.users().max(mf.items())).is_err() {
            return Err(CoreError::Config(
                "more than 2^32 rows in one MF table".into(),
            ));
        }
        Ok(MfTables {
            mf,
            workers,
            shards,
        })
    }

    /// Offset of `key`'s row in the dense layout.
    fn offset(&self, key: RowKey) -> Result<usize> {
        let k = self.mf.rank();
        let row = key.row as usize;
        match key.table {
            USER_TABLE if row < self.mf.users() => Ok(row * k),
            ITEM_TABLE if row < self.mf.items() => Ok((self.mf.users() + row) * k),
            _ => Err(CoreError::Config(format!(
                "row {} of table {} is out of range: the MF tables hold {} user rows (table \
                 {USER_TABLE}) and {} item rows (table {ITEM_TABLE})",
                key.row,
                key.table,
                self.mf.users(),
                self.mf.items()
            ))),
        }
    }

    fn rows_total(&self) -> usize {
        self.mf.users() + self.mf.items()
    }
}

impl RowAccess for MfTables {
    fn rows(&self, worker: usize, clock: u64) -> Vec<RowKey> {
        let mut rows: Vec<RowKey> = self
            .mf
            .minibatch(worker, self.workers, clock)
            .flat_map(|r| {
                [
                    RowKey {
                        table: USER_TABLE,
                        row: r.user,
                    },
                    RowKey {
                        table: ITEM_TABLE,
                        row: r.item,
                    },
                ]
            })
            .collect();
        rows.sort_unstable();
        rows.dedup();
        rows
    }
}

/// A worker's coalesced INCs of one clock: sorted rows and K deltas per row.
#[derive(Debug)]
struct Inc {
    rows: Vec<RowKey>,
    deltas: Vec<f32>,
}

/// One node's state.
#[derive(Debug)]
pub struct TableNode {
    /// Shard: dense rows in the MF model's layout (empty on workers).
    values: Vec<f32>,
    /// Worker: the cached rows.
    cache: HashMap<RowKey, Vec<f32>>,
    /// Worker index (None: a shard).
    me: Option<usize>,
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
}

impl MfTables {
    fn err(node: NodeId, message: String) -> CoreError {
        CoreError::Protocol { node, message }
    }

    fn apply_inc(
        &self,
        state: &mut TableNode,
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
        let k = self.mf.rank();
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
            let o = self.offset(key)?;
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

    fn install(&self, state: &mut TableNode, node: NodeId, from: NodeId) -> Result<()> {
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
        let k = self.mf.rank();
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
        for (i, key) in rows.iter().enumerate() {
            self.offset(*key)?;
            let row = state.cache.entry(*key).or_insert_with(|| vec![0.0; k]);
            row.copy_from_slice(&p.data[i * k..(i + 1) * k]);
            // Re-apply this worker's own INCs the shard's copy does not hold yet.
            for inc in state.own.range(held..).map(|(_, inc)| inc) {
                if let Ok(j) = inc.rows.binary_search(key) {
                    for (v, d) in row.iter_mut().zip(&inc.deltas[j * k..(j + 1) * k]) {
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

impl Learning for MfTables {
    type Node = TableNode;

    fn node(&self, _node: NodeId, role: Role, workers: usize) -> TableNode {
        let me = match role {
            Role::Worker(w) => Some(w),
            Role::Server => None,
        };
        TableNode {
            values: if me.is_none() {
                self.mf.initial_model()
            } else {
                Vec::new()
            },
            cache: HashMap::new(),
            me,
            applied: vec![0; if me.is_none() { workers } else { 0 }],
            own: BTreeMap::new(),
            own_applied: vec![0; self.shards],
            inbox_incs: HashMap::new(),
            inbox_rows: HashMap::new(),
            row_sets: HashMap::new(),
        }
    }

    fn compute(&self, state: &mut TableNode, worker: usize, workers: usize, iter: u64) {
        let k = self.mf.rank();
        let rows = self.rows(worker, iter);
        // The protocol starts a computation only once every row it reads is cached.
        let mut local: Vec<f32> = rows
            .iter()
            .flat_map(|r| state.cache[r].iter().copied())
            .collect();
        let index = |key: RowKey| rows.binary_search(&key).expect("the mini-batch's rows");
        for r in self.mf.minibatch(worker, workers, iter) {
            let u = index(RowKey {
                table: USER_TABLE,
                row: r.user,
            });
            let i = index(RowKey {
                table: ITEM_TABLE,
                row: r.item,
            });
            // User rows sort before item rows, so u < i.
            let (left, right) = local.split_at_mut(i * k);
            self.mf
                .sgd_step(&mut left[u * k..(u + 1) * k], &mut right[..k], r.value);
        }
        for (j, r) in rows.iter().enumerate() {
            let cached = state.cache.get_mut(r).expect("read above");
            for (f, c) in cached.iter_mut().enumerate() {
                let d = local[j * k + f] - *c;
                local[j * k + f] = d;
                *c += d;
            }
        }
        state.own.insert(
            iter,
            Inc {
                rows,
                deltas: local,
            },
        );
    }

    fn carry_out(
        &self,
        state: &mut TableNode,
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

    fn outgoing(&self, state: &mut TableNode, to: NodeId, msg: &Message) -> Option<Payload> {
        let k = self.mf.rank();
        match *msg {
            Message::RowInc { clock } => {
                let inc = state.own.get(&clock)?;
                let (mut keys, mut data) = (Vec::new(), Vec::new());
                for (j, r) in inc.rows.iter().enumerate() {
                    if r.shard(self.shards) == to {
                        keys.push(r.to_word());
                        data.extend_from_slice(&inc.deltas[j * k..(j + 1) * k]);
                    }
                }
                Some(Payload {
                    data: Arc::new(data),
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
                    let o = self.offset(*r).ok()?;
                    meta.push(r.to_word());
                    data.extend_from_slice(&state.values[o..o + k]);
                }
                Some(Payload {
                    data: Arc::new(data),
                    applied: Arc::new(meta),
                })
            }
            _ => None,
        }
    }

    fn receive(&self, state: &mut TableNode, from: NodeId, msg: &Message, payload: Payload) {
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

    fn applied<'a>(&self, state: &'a TableNode) -> &'a [u64] {
        &state.applied
    }

    fn evaluate(&self, state: &TableNode) -> (f64, f64) {
        if state.me.is_none() && self.shards == 1 {
            Workload::evaluate(&*self.mf, &state.values)
        } else {
            (f64::NAN, f64::NAN)
        }
    }

    fn batch_size(&self, workers: usize) -> usize {
        Workload::batch_size(&*self.mf, workers)
    }

    fn payload_words(&self, _workers: usize) -> usize {
        let rows = self.rows_total();
        payload_words(rows + 1, rows * self.mf.rank())
    }

    fn eval_node(&self) -> Option<NodeId> {
        Some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::RatingsShape;
    use crate::workload::MfConfig;

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
            data: Arc::new(data),
            applied: Arc::new(meta),
        }
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
        let rows = t.rows(0, 0);
        let mut shard = t.node(0, Role::Server, 2);
        let mut w = t.node(1, Role::Worker(0), 2);
        let install = |w: &mut TableNode, shard: &mut TableNode, held: u64| {
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
        let before: Vec<Vec<f32>> = rows.iter().map(|r| w.cache[r].clone()).collect();
        t.compute(&mut w, 0, 2, 0);
        let after: Vec<Vec<f32>> = rows.iter().map(|r| w.cache[r].clone()).collect();
        assert_ne!(before, after, "the computation changed its rows");
        // A copy without the INC (held = 0): the INC is re-applied.
        install(&mut w, &mut shard, 0);
        let again: Vec<Vec<f32>> = rows.iter().map(|r| w.cache[r].clone()).collect();
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
            for (x, y) in w.cache[r].iter().zip(a) {
                assert!((x - y).abs() < 1e-6, "{r:?}: {x} vs {y}");
            }
        }
        assert!(w.own.is_empty(), "the held INC was dropped");
    }
}
