//! What the parameter-server family trains: a model updated by data-parallel SGD-like steps.

use super::ScaledParts;

/// A model trained by data-parallel SGD-like steps.
pub trait Workload: Send + Sync {
    /// Number of parameters.
    fn dim(&self) -> usize;
    /// The initial model every node starts from.
    fn initial_model(&self) -> Vec<f32> {
        vec![0.0; self.dim()]
    }
    /// The additive update worker `worker` (of `workers`) computes at iteration `iter` from
    /// `model`: the node applies it as `model += update`.
    fn update(&self, model: &[f32], worker: usize, workers: usize, iter: u64) -> Vec<f32>;
    /// The same update as [`Workload::update`], offered as a multiple of `model` plus exact
    /// entries ([`ScaledParts`]) by workloads whose update is mostly a scaled copy of the model
    /// (an L2 term beside a sparse gradient), so the parameter-server family can move and
    /// apply it without a dense vector. Its dense form must be bit for bit `update`'s, and it
    /// is called instead of `update` (once per update, so a workload with per-worker state
    /// steps it there too). Default: not offered.
    fn scaled_update(
        &self,
        _model: &[f32],
        _worker: usize,
        _workers: usize,
        _iter: u64,
    ) -> Option<ScaledParts> {
        None
    }
    /// Examples one worker consumes per update when the run has `workers` workers (the
    /// compute-time model charges per example).
    fn batch_size(&self, workers: usize) -> usize;
    /// `(loss, accuracy)` of `model` on the held-out evaluation set.
    fn evaluate(&self, model: &[f32]) -> (f64, f64);
    /// The training objective `F(model)` on the training rows, where the workload minimises
    /// one ([`crate::learning::Learning::objective`]). Default: none.
    fn objective(&self, _model: &[f32]) -> Option<f64> {
        None
    }
    /// Whether `update` keeps state per worker between calls (a CNN's momentum buffers): runs
    /// that share such a workload must then run one after another, since concurrent runs would
    /// interleave their workers' state. Default: no state.
    fn keeps_worker_state(&self) -> bool {
        false
    }
}
