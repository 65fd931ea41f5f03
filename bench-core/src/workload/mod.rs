//! What is trained: SVM, logistic and least-squares SGD and SAGA, matrix factorisation and LDA
//! on row tables, and each family's [`crate::learning::Learning`] (the parameter server's
//! [`NodeModel`], decentralized peers' [`PeerLearning`], ASYNC's [`AsyncLearning`], any workload
//! under ASYNC's coordinator: [`TaskLearning`], the row tables' [`TableLearning`]). A workload computes an update from a model and a worker's data,
//! and evaluates a model; drivers own the models and move them between nodes.

mod aggregation;
mod async_learning;
mod cnn;
mod lda;
mod least_squares;
mod least_squares_sgd;
mod linear_optimum;
mod mf;
mod mf_optimum;
mod mf_tables;
mod node_model;
mod peer_learning;
mod row_cache;
mod share_batches;
mod svm;
mod table_reference;
mod tables;
mod task_learning;
mod task_versions;
mod version_store;
mod weighted_average;

pub use aggregation::Aggregation;
pub use async_learning::{AsyncLearning, AsyncLearningConfig, AsyncNode, Method};
#[cfg(feature = "cnn")]
pub use cnn::{agreement, conv_kernels, cpu_level, matmul, CnnWorkload, StepTimes, EVAL_BATCH};
pub use cnn::{CnnConfig, CnnDevice, CnnModel};
pub use lda::{Lda, LdaConfig, LdaLocal, LdaTables, TOPIC_TOTAL_TABLE, WORD_TOPIC_TABLE};
pub use least_squares::{LeastSquares, Optimum};
pub use least_squares_sgd::{LeastSquaresSgd, LsSgdConfig};
pub use linear_optimum::{linear_optimum, objective as linear_objective, LinearOptimum};
pub use mf::{MatrixFactorization, MfConfig};
pub use mf_optimum::MfOptimum;
pub use mf_tables::{MfTables, ITEM_TABLE, USER_TABLE};
pub use node_model::NodeModel;
pub use peer_learning::{PeerLearning, PeerState};
pub use svm::{Loss, SvmConfig, SvmSgd, MIN_REFERENCE_LAMBDA};
pub use table_reference::{sequential_reference, SequentialReference};
pub use tables::{ClockSteps, TableLearning, TableModel, TableNode};
pub use task_learning::{CoordinatorState, TaskLearning, TaskNode, TaskWorkerState};
pub use version_store::VersionStore;

/// The trait lives in the learning layer, below drivers and workloads; re-exported here, beside
/// its implementations.
pub use crate::learning::Workload;
