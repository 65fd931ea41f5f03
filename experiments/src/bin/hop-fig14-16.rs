//! hop-fig14-16: Backup workers (1, with token queues) against the standard protocol on ring-based and double-ring graphs under random slowdown (hop.txt Figs 14-16).

use clap::Parser;
use experiments::hop_compare::{self, CompareConfig};
use experiments::CommonArgs;

const QUICK: &str = include_str!("../../configs/hop-fig14-16.quick.toml");
const PAPER: &str = include_str!("../../configs/hop-fig14-16.paper.toml");

/// Hop: Backup workers (1, with token queues) against the standard protocol on ring-based and double-ring graphs under random slowdown (hop.txt Figs 14-16). SVM with log loss on a synthetic webspam twin, 16 peers, every computation 6x
/// slower with probability 1/16. Writes results/hop-fig14-16/: summary.csv (time per iteration, time
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
        hop_compare::run(&args.common, &cfg, "hop-fig14-16")
    })
}
