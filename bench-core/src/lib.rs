//! `bench-core`: the shared core of syncbench.
//!
//! * [`topology`]: communication graphs, transition matrices and spectral gaps.
//! * [`protocol`]: synchronization modes as sans-IO state machines behind one trait.
//! * [`transport`]: verbs-shaped one-sided writes with completions and notifications.
//! * [`driver`]: runs protocols in virtual time (sim) or with real threads.
//! * [`workload`]: what is trained (sparse SVM by SGD to start).
//! * [`straggler`]: compute-time perturbations.
//! * [`metrics`]: per-iteration records, CSV writers, manifests.
//! * [`data`]: dataset readers and synthetic generators.
//! * [`claims`]: evaluation of each figure's claims on measured data.

pub mod claims;
pub mod data;
pub mod driver;
pub mod error;
pub mod fuzz;
pub mod metrics;
pub mod protocol;
pub mod straggler;
pub mod topology;
pub mod transport;
pub mod workload;

pub use error::{CoreError, Result};
