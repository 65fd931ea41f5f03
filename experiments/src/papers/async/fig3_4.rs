//! async-fig3-4: SGD vs ASGD on least squares with one controlled-delay straggler among 8 workers
//! (ASYNC §6.3, Figures 3 and 4).

use crate::harness::experiment;
use crate::papers::r#async::cds::{Cds, CdsFigures};
use bench_core::workload::Method;

struct AsyncFig3To4;

impl CdsFigures for AsyncFig3To4 {
    const BINARY: &'static str = "async-fig3-4";
    const ABOUT: &'static str = "ASYNC Figures 3-4: SGD vs ASGD under a controlled-delay straggler (one worker delayed by 0, 30, 60 and 100% of its task time). Writes results/async-fig3/ (error curves, time to target, claims) and results/async-fig4/ (mean wait per worker, claims), each with its manifest.";
    const METHOD: Method = Method::Sgd;
    const FIGURES: (&'static str, &'static str) = ("async-fig3", "async-fig4");
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<Cds<AsyncFig3To4>>()
}
