//! hop-fig17: Bounded staleness (s = 5) against the standard protocol on the ring-based graph under random slowdown (hop.txt Fig 17).

use bench_core::driver::DriverKind;
use experiments::experiment::{self, Experiment, NoArgs, Run};
use experiments::hop_compare::{self, CompareConfig};

struct HopFig17;

impl Experiment for HopFig17 {
    const BINARY: &'static str = "hop-fig17";
    const ABOUT: &'static str = "Hop: Bounded staleness (s = 5) against the standard protocol on the ring-based graph under random slowdown (hop.txt Fig 17). SVM with log loss on a synthetic webspam twin, 16 peers, every computation 6x slower with probability 1/16. Writes results/hop-fig17/: summary.csv (time per iteration, time to a common loss target), curves.csv, claims.csv, manifest.json.";
    const QUICK: &'static str = include_str!("../../configs/hop-fig17.quick.toml");
    const PAPER: &'static str = include_str!("../../configs/hop-fig17.paper.toml");
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
    experiment::main::<HopFig17>()
}
