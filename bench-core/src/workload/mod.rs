//! What is trained. A workload computes an update from a model and a worker's data, and
//! evaluates a model; drivers own the models and move them between nodes.

mod svm;

pub use svm::{Loss, SvmConfig, SvmSgd};

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
    /// Examples consumed by one update.
    fn batch_size(&self) -> usize;
    /// `(loss, accuracy)` of `model` on the held-out evaluation set.
    fn evaluate(&self, model: &[f32]) -> (f64, f64);
}
