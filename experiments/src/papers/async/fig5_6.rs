//! async-fig5-6: SAGA vs ASAGA on least squares with one controlled-delay straggler among 8 workers
//! (ASYNC §6.3, Figures 5 and 6).

use crate::harness::experiment;
use crate::papers::r#async::cds::{Cds, CdsFigures};
use bench_core::workload::Method;

struct AsyncFig5To6;

impl CdsFigures for AsyncFig5To6 {
    const BINARY: &'static str = "async-fig5-6";
    const ABOUT: &'static str = "ASYNC Figures 5-6: SAGA vs ASAGA under a controlled-delay straggler (one worker delayed by 0, 30, 60 and 100% of its task time). Writes results/async-fig5/ (error curves, time to target, claims) and results/async-fig6/ (mean wait per worker, claims), each with its manifest.";
    const METHOD: Method = Method::Saga;
    const FIGURES: (&'static str, &'static str) = ("async-fig5", "async-fig6");
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<Cds<AsyncFig5To6>>()
}
