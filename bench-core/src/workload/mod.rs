//! What is trained. A workload computes an update from a model and a worker's data, and
//! evaluates a model; drivers own the models and move them between nodes.

mod async_learning;
mod lda;
mod least_squares;
mod mf;
mod mf_tables;
mod peer_learning;
mod probe;
mod svm;
mod tables;
mod version_store;

pub use async_learning::{AsyncLearning, AsyncLearningConfig, AsyncNode, Method};
pub use lda::{Lda, LdaConfig, LdaLocal, LdaTables, TOPIC_TOTAL_TABLE, WORD_TOPIC_TABLE};
pub use least_squares::{LeastSquares, Optimum};
pub use mf::{MatrixFactorization, MfConfig};
pub use mf_tables::{MfTables, ITEM_TABLE, USER_TABLE};
pub use peer_learning::{PeerLearning, PeerState};
pub use probe::CountingProbe;
pub use svm::{Loss, SvmConfig, SvmSgd};
pub use tables::{TableLearning, TableModel, TableNode};
pub use version_store::VersionStore;

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
    /// Examples one worker consumes per update when the run has `workers` workers (the
    /// compute-time model charges per example).
    fn batch_size(&self, workers: usize) -> usize;
    /// `(loss, accuracy)` of `model` on the held-out evaluation set.
    fn evaluate(&self, model: &[f32]) -> (f64, f64);
}
