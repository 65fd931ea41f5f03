//! Shared plumbing of the experiment binaries: common flags, configuration loading, result
//! directories with manifests, claims and progress bars.

pub mod async_cds;
pub mod async_setup;
pub mod buffered_setup;
pub mod cli;
pub mod cluster_cli;
pub mod datasets_cli;
pub mod hop_compare;
pub mod launch;
pub mod lda_convergence;
pub mod lda_setup;
pub mod mf_setup;
pub mod output;
pub mod peer_setup;
pub mod profiled;
pub mod runner;
pub mod svm_setup;
pub mod transport_bench;

pub use cli::{CommonArgs, Scale};
pub use output::ExperimentOutput;

/// Runs a binary's body, printing an error chain as one clear message and returning a non-zero
/// exit code instead of a backtrace.
pub fn main_with(body: impl FnOnce() -> anyhow::Result<()>) -> std::process::ExitCode {
    match body() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
