//! `bench-core`: the shared core of syncbench.
//!
//! * [`topology`]: communication graphs, transition matrices and spectral gaps.
//! * [`protocol`]: synchronization modes as sans-IO state machines behind one trait.
//! * [`transport`]: verbs-shaped one-sided writes with completions and notifications.
//! * [`learning`]: the bottom layer of learning (what a driver needs of a run's learning, the
//!   payloads messages carry, the parameter-server [`learning::Workload`]).
//! * [`driver`]: runs protocols in virtual time (sim), with real threads, or as one process per
//!   rank (cluster); also the seeded schedule search of the simulator.
//! * [`workload`]: what is trained (SVM, logistic and least-squares SGD and SAGA, matrix
//!   factorisation, LDA) and each family's learning.
//! * [`straggler`]: compute-time perturbations.
//! * [`metrics`]: per-iteration records, CSV writers, manifests.
//! * [`data`]: dataset readers and synthetic generators.
//! * [`claims`]: evaluation of each figure's claims on measured data.

pub mod claims;
pub mod data;
pub mod driver;
pub mod error;
pub mod fuzz;
pub mod learning;
pub mod metrics;
mod node_id;
pub mod protocol;
pub mod straggler;
pub mod topology;
pub mod transport;
pub mod workload;

pub use error::{CoreError, Result, TransportFault};
pub use node_id::NodeId;
