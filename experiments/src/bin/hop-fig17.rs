//! hop-fig17: Bounded staleness (s = 5) against the standard protocol on the ring-based graph under random slowdown (hop.txt Fig 17).

use clap::Parser;
use experiments::hop_compare::{self, CompareConfig};
use experiments::CommonArgs;

const QUICK: &str = include_str!("../../configs/hop-fig17.quick.toml");
const PAPER: &str = include_str!("../../configs/hop-fig17.paper.toml");

/// Hop: Bounded staleness (s = 5) against the standard protocol on the ring-based graph under random slowdown (hop.txt Fig 17). SVM with log loss on a synthetic webspam twin, 16 peers, every computation 6x
/// slower with probability 1/16. Writes results/hop-fig17/: summary.csv (time per iteration, time
/// to a common loss target), curves.csv, claims.csv, manifest.json.
#[derive(Parser)]
#[command(version)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> std::process::ExitCode {
    experiments::main_with(|| {
        let args = Args::parse();
        let cfg: CompareConfig = args.common.load_config(QUICK, PAPER)?;
        hop_compare::run(&args.common, &cfg, "hop-fig17")
    })
}
