//! A worker's INC buffer: the coalesced row deltas of one clock, indexed by the row's dense
//! index (an array for small models, a hash map for large ones).

use crate::protocol::table::RowKey;
use rustc_hash::FxHashMap;

/// A worker's coalesced INCs of one clock: its rows in the order first written, K deltas per
/// row, and where each row's deltas are. Steps add to it one after another; a row written by
/// several steps keeps one entry whose deltas are summed in step order.
#[derive(Debug, Default)]
pub(super) struct Inc {
    pub(super) rows: Vec<RowKey>,
    pub(super) deltas: Vec<f32>,
    pub(super) at: EntryIndex,
}

/// Models of at most this many rows index an INC's entries by a dense array (4 bytes a row);
/// larger ones (the paper-scale Netflix twin's 498k rows, with a dozen live INCs per worker)
/// by a hash map.
pub(super) const DENSE_INDEX_ROWS: usize = 1 << 16;

/// Where each row's entry is in an [`Inc`], by the row's dense index (its offset over the row
/// length). Why not a hash map of `RowKey` everywhere: an LDA clock adds a step per document,
/// thousands of word rows each, and hashing them was a tenth of essp-fig2-breakdown's time.
#[derive(Debug, Default)]
pub(super) enum EntryIndex {
    #[default]
    Unset,
    Dense(Vec<u32>),
    Sparse(FxHashMap<usize, u32>),
}

pub(super) const NO_ENTRY: u32 = u32::MAX;

impl EntryIndex {
    pub(super) fn get(&self, row: usize) -> Option<usize> {
        match self {
            EntryIndex::Unset => None,
            EntryIndex::Dense(v) => match v.get(row) {
                Some(&e) if e != NO_ENTRY => Some(e as usize),
                _ => None,
            },
            EntryIndex::Sparse(m) => m.get(&row).map(|&e| e as usize),
        }
    }

    pub(super) fn insert(&mut self, row: usize, entry: usize, rows_total: usize) {
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
    pub(super) fn add(
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
    pub(super) fn get(&self, row: usize, k: usize) -> Option<&[f32]> {
        self.at.get(row).map(|i| &self.deltas[i * k..(i + 1) * k])
    }

    /// Entry indices in row order (an INC message lists its rows sorted).
    pub(super) fn sorted(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.rows.len()).collect();
        order.sort_unstable_by_key(|&i| self.rows[i]);
        order
    }
}
