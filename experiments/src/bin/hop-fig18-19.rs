//! hop-fig18-19: Skipping iterations (maximum jump 2 and 10) against the standard protocol with one worker deterministically 4x slower (hop.txt Figs 18-19).

use clap::Parser;
use experiments::hop_compare::{self, CompareConfig};
use experiments::CommonArgs;

const QUICK: &str = include_str!("../../configs/hop-fig18-19.quick.toml");
const PAPER: &str = include_str!("../../configs/hop-fig18-19.paper.toml");

/// Hop: Skipping iterations (maximum jump 2 and 10) against the standard protocol with one worker deterministically 4x slower (hop.txt Figs 18-19). SVM with log loss on a synthetic webspam twin, 16 peers, worker 0 4x slower
/// throughout. Writes results/hop-fig18-19/: summary.csv (time per iteration, time
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
        hop_compare::run(&args.common, &cfg, "hop-fig18-19")
    })
}
