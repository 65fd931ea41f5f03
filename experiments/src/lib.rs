//! The experiment binaries' code, in rooms by role. Each room may use the rooms before it, never
//! one after it (`tests/layers.rs` checks this from the imports, and that no two files import
//! each other, directly or in a circle):
//!
//! 1. [`harness`]: what every run needs: the experiment spec and runner, common flags and
//!    configuration ranges, result directories with manifests, parallel runs, interrupts, the
//!    figure catalogue, the data source, the cluster session and the driver runner.
//! 2. [`judge`]: reading runs against the paper: reference optima, comparison targets and
//!    claims, sensitivity grids, number formatting.
//! 3. [`workloads`]: what each family trains (SVM, matrix factorisation, LDA, CNNs, ASYNC's
//!    least squares), on synthetic twins or the real datasets.
//! 4. [`runs`]: how each family runs (parameter-server modes on a time profile, peers on a
//!    graph, receive buffers, a mode of any family named in one word).
//! 5. [`papers`] (one folder per paper, one file per figure, the paper's shared parts beside
//!    them) and [`studies`] (the harness's own experiments: mode matrix, ps-modes,
//!    sim-validation, bench-scale).
//! 6. [`tools`]: the `syncbench` dispatcher and its subcommands (datasets, launch,
//!    transport-bench, profile, twins, faults, regress).
//!
//! `src/bin/<binary>.rs` only calls its module's `main`: the generic runner, drivers, serde and
//! clap code are compiled once in the library for every binary.

pub mod harness;
pub mod judge;
pub mod papers;
pub mod runs;
pub mod studies;
pub mod tools;
pub mod workloads;

pub use harness::cli::{CommonArgs, Scale};
pub use harness::output::ExperimentOutput;
