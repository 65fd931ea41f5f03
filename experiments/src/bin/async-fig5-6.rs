//! async-fig5-6: SAGA vs ASAGA on least squares with one controlled-delay straggler among 8 workers
//! (async.txt §6.3, Figures 5 and 6).

use bench_core::workload::Method;
use clap::Parser;
use experiments::async_cds::{self, CdsConfig};
use experiments::CommonArgs;

const QUICK: &str = include_str!("../../configs/async-cds.quick.toml");
const PAPER: &str = include_str!("../../configs/async-cds.paper.toml");

/// ASYNC Figures 5-6: SAGA vs ASAGA under a controlled-delay straggler (one worker
/// delayed by 0, 30, 60 and 100% of its task time). Writes results/async-fig5/ (error curves,
/// time to target, claims) and results/async-fig6/ (mean wait per worker, claims), each with
/// its manifest.
#[derive(Parser)]
#[command(version)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> std::process::ExitCode {
    experiments::main_with(|| {
        let args = Args::parse();
        let cfg: CdsConfig = args.common.load_config(QUICK, PAPER)?;
        async_cds::run(
            &args.common,
            &cfg,
            Method::Saga,
            ("async-fig5", "async-fig6"),
        )
    })
}
