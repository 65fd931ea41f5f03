//! async-fig5-6: SAGA vs ASAGA on least squares with one controlled-delay straggler among 8 workers
//! (async.txt §6.3, Figures 5 and 6).

use bench_core::driver::DriverKind;
use bench_core::workload::Method;
use experiments::async_cds::{self, CdsConfig};
use experiments::experiment::{self, Experiment, NoArgs, Run};

struct AsyncFig5To6;

impl Experiment for AsyncFig5To6 {
    const BINARY: &'static str = "async-fig5-6";
    const ABOUT: &'static str = "ASYNC Figures 5-6: SAGA vs ASAGA under a controlled-delay straggler (one worker delayed by 0, 30, 60 and 100% of its task time). Writes results/async-fig5/ (error curves, time to target, claims) and results/async-fig6/ (mean wait per worker, claims), each with its manifest.";
    const QUICK: &'static str = include_str!("../../configs/async-cds.quick.toml");
    const PAPER: &'static str = include_str!("../../configs/async-cds.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = CdsConfig;
    type Args = NoArgs;

    fn figures(_: &NoArgs) -> Vec<&'static str> {
        vec!["async-fig5", "async-fig6"]
    }

    fn validate(cfg: &CdsConfig, _: &NoArgs, _: &[DriverKind]) -> anyhow::Result<()> {
        cfg.validate()
    }

    fn run(run: &mut Run<'_, Self>) -> anyhow::Result<()> {
        async_cds::run(run, Method::Saga, ("async-fig5", "async-fig6"))
    }
}

fn main() -> std::process::ExitCode {
    experiment::main::<AsyncFig5To6>()
}
