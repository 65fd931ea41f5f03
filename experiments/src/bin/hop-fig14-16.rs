//! hop-fig14-16: Backup workers (1, with token queues) against the standard protocol on ring-based and double-ring graphs under random slowdown (hop.txt Figs 14-16).

use bench_core::driver::DriverKind;
use experiments::experiment::{self, Experiment, NoArgs, Run};
use experiments::hop_compare::{self, CompareConfig};

struct HopFig14To16;

impl Experiment for HopFig14To16 {
    const BINARY: &'static str = "hop-fig14-16";
    const ABOUT: &'static str = "Hop: Backup workers (1, with token queues) against the standard protocol on ring-based and double-ring graphs under random slowdown (hop.txt Figs 14-16). SVM with log loss on a synthetic webspam twin, 16 peers, every computation 6x slower with probability 1/16. Writes results/hop-fig14-16/: summary.csv (time per iteration, time to a common loss target), curves.csv, claims.csv, manifest.json.";
    const QUICK: &'static str = include_str!("../../configs/hop-fig14-16.quick.toml");
    const PAPER: &'static str = include_str!("../../configs/hop-fig14-16.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = CompareConfig;
    type Args = NoArgs;

    fn validate(cfg: &CompareConfig, _: &NoArgs, _: &[DriverKind]) -> anyhow::Result<()> {
        hop_compare::validate(cfg)
    }

    fn run(run: &mut Run<'_, Self>) -> anyhow::Result<()> {
        hop_compare::run(run)
    }
}

fn main() -> std::process::ExitCode {
    experiment::main::<HopFig14To16>()
}
