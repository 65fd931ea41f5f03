//! async-fig3-4: SGD vs ASGD on least squares with one controlled-delay straggler among 8 workers
//! (async.txt §6.3, Figures 3 and 4).

use bench_core::driver::DriverKind;
use bench_core::workload::Method;
use experiments::async_cds::{self, CdsConfig};
use experiments::experiment::{self, Experiment, NoArgs, Run};

struct AsyncFig3To4;

impl Experiment for AsyncFig3To4 {
    const BINARY: &'static str = "async-fig3-4";
    const ABOUT: &'static str = "ASYNC Figures 3-4: SGD vs ASGD under a controlled-delay straggler (one worker delayed by 0, 30, 60 and 100% of its task time). Writes results/async-fig3/ (error curves, time to target, claims) and results/async-fig4/ (mean wait per worker, claims), each with its manifest.";
    const QUICK: &'static str = include_str!("../../configs/async-cds.quick.toml");
    const PAPER: &'static str = include_str!("../../configs/async-cds.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = CdsConfig;
    type Args = NoArgs;

    fn figures(_: &NoArgs) -> Vec<&'static str> {
        vec!["async-fig3", "async-fig4"]
    }

    fn validate(cfg: &CdsConfig, _: &NoArgs, _: &[DriverKind]) -> anyhow::Result<()> {
        cfg.validate()
    }

    fn run(run: &mut Run<'_, Self>) -> anyhow::Result<()> {
        async_cds::run(run, Method::Sgd, ("async-fig3", "async-fig4"))
    }
}

fn main() -> std::process::ExitCode {
    experiment::main::<AsyncFig3To4>()
}
