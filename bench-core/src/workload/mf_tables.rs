//! Matrix factorisation on row-level parameter-server tables (ESSP's MF on Bösen).
//!
//! Table 0 holds the user factors `L` (one row per user), table 1 the item factors `R` (one
//! row per item), each row K floats, sharded by [`RowKey::shard`]. At clock `c` a worker goes
//! through its mini-batch (its next ratings) in read-compute steps (by default one per rating):
//! each step GETs the user and item rows of its ratings, runs sequential SGD on its local
//! copies, and INCs each touched row by the change it made; the INCs of a clock are coalesced
//! and sent with CLOCK to every shard ([`crate::protocol::table`]).
//!
//! Shards lay the rows out as [`MatrixFactorization`]'s model (`L` then `R`). The loss is the
//! held-out mean squared error of shard 0's rows (NaN with several shards: see
//! [`super::tables`]).

use super::tables::{TableLearning, TableModel};
use super::{MatrixFactorization, Workload};
use crate::error::{CoreError, Result};
use crate::protocol::table::RowKey;
use std::ops::Range;

/// The user-factor table.
pub const USER_TABLE: u32 = 0;
/// The item-factor table.
pub const ITEM_TABLE: u32 = 1;

/// Matrix factorisation learned through row tables.
pub type MfTables = TableLearning<MatrixFactorization>;

impl TableModel for MatrixFactorization {
    type Local = ();

    fn row_len(&self) -> usize {
        self.rank()
    }

    fn rows_total(&self) -> usize {
        self.users() + self.items()
    }

    fn offset(&self, key: RowKey) -> Result<usize> {
        let k = self.rank();
        let row = key.row as usize;
        match key.table {
            USER_TABLE if row < self.users() => Ok(row * k),
            ITEM_TABLE if row < self.items() => Ok((self.users() + row) * k),
            _ => Err(CoreError::Config(format!(
                "row {} of table {} is out of range: the MF tables hold {} user rows (table \
                 {USER_TABLE}) and {} item rows (table {ITEM_TABLE})",
                key.row,
                key.table,
                self.users(),
                self.items()
            ))),
        }
    }

    fn initial_values(&self, _workers: usize) -> Vec<f32> {
        self.initial_model()
    }

    fn local(&self, _worker: usize, _workers: usize) {}

    fn examples_per_clock(&self, workers: usize) -> usize {
        Workload::batch_size(self, workers)
    }

    fn rows(&self, worker: usize, workers: usize, clock: u64, part: Range<usize>) -> Vec<RowKey> {
        let mut rows: Vec<RowKey> = self
            .minibatch_part(worker, workers, clock, part.clone())
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

    fn compute(
        &self,
        _local: &mut (),
        rows: &[RowKey],
        values: &mut [f32],
        worker: usize,
        workers: usize,
        clock: u64,
        part: Range<usize>,
    ) {
        let k = self.rank();
        let index = |key: RowKey| rows.binary_search(&key).expect("the step's rows");
        for r in self.minibatch_part(worker, workers, clock, part.clone()) {
            let u = index(RowKey {
                table: USER_TABLE,
                row: r.user,
            });
            let i = index(RowKey {
                table: ITEM_TABLE,
                row: r.item,
            });
            // User rows sort before item rows, so u < i.
            let (left, right) = values.split_at_mut(i * k);
            self.sgd_step(&mut left[u * k..(u + 1) * k], &mut right[..k], r.value);
        }
    }

    fn evaluate(&self, values: &[f32]) -> (f64, f64) {
        Workload::evaluate(self, values)
    }

    fn batch_size(&self, workers: usize) -> usize {
        Workload::batch_size(self, workers)
    }
}
