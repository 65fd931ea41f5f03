//! A model learned through row-level parameter-server tables (ESSP's Bösen), for any
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

mod inc;
mod learning;
mod read_my_writes;
mod steps;
#[cfg(test)]
mod tests;

use crate::error::Result;
use crate::protocol::table::RowKey;
use std::ops::Range;

pub use learning::{TableLearning, TableNode};
pub use steps::ClockSteps;

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
