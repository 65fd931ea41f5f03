//! `syncbench`: the harness's general command line: datasets, transport benchmarks, graphs, and
//! launching the ranks of a cluster-driver run on one machine.

use crate::tools::datasets::DatasetsCommand;
use anyhow::{Context, Result};
use bench_core::topology::{read_edge_list, GraphReport};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "syncbench",
    version,
    about = "Benchmark and reproduction harness for synchronization modes in distributed ML"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Work with the datasets of datasets.lock: list, fetch, verify, pin, path, and inspect
    /// local files. The cache is $SYNCBENCH_DATA, else $XDG_CACHE_HOME/syncbench, else
    /// ~/.cache/syncbench.
    Datasets {
        /// The lock file. Default: ./datasets.lock, else the repository's.
        #[arg(long, global = true)]
        lock: Option<PathBuf>,
        #[command(subcommand)]
        command: DatasetsCommand,
    },
    /// Measure the transport backends like perftest: one-way latency (min, median, average,
    /// p99, p99.9) and bandwidth (average, peak) for message sizes from 2 B to 8 MiB, beside
    /// memcpy, a raw loopback socket and a cache-line ping-pong measured in the same run, with
    /// the ratios to them (threads vs memcpy, tcp vs the raw socket).
    TransportBench(crate::tools::transport_bench::BenchArgs),
    /// Start N ranks of an experiment binary on this machine for `--driver cluster` (as
    /// torchrun does, where there is no mpirun): `syncbench launch --ranks 4 -- ps-modes
    /// --driver cluster`. Ranks find each other through a free loopback port; only rank 0
    /// writes results.
    Launch(crate::tools::launch::LaunchArgs),
    /// Run the fault matrix: a 4-rank ps-modes job over tcp with one fault each (a rank
    /// killed at each phase, a rank stopped, strangers on rank 0's port, rank 0's port taken)
    /// and what the other ranks did: exit codes, messages, time to stop, and whether results
    /// stayed intact. Writes <out>/faults/REPORT.md.
    Faults {
        /// Results root.
        #[arg(long, default_value = "results")]
        out: PathBuf,
    },
    /// How learnable the SVM experiments' synthetic twins are: for every twin in the quick
    /// configurations, the exact optimum of its objective (dual coordinate descent for hinge
    /// loss, Newton-CG for log loss) and the best test accuracy a linear model reaches on it,
    /// beside the real dataset's published linear-SVM figure.
    Twins {
        /// Seed the twins are generated from (the experiments' first seed is 1).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Also write the SVM table as CSV to this file, and the least-squares table beside it
        /// (`<stem>-least-squares.csv`).
        #[arg(long)]
        csv: Option<PathBuf>,
        /// Try another share of flipped labels in every twin (calibrating a generator).
        #[arg(long)]
        label_noise: Option<f64>,
        /// Try another informative share in every twin.
        #[arg(long)]
        informative: Option<f64>,
        /// Try another topic share in every twin.
        #[arg(long)]
        topic_share: Option<f64>,
        /// Only twins of this dataset (a datasets.lock name for the SVM twins, or an ASYNC
        /// twin's configured name: mnist8m, epsilon, rcv1_full).
        #[arg(long)]
        dataset: Option<String>,
    },
    /// Measure a CNN's training step (warm-up, then timed steps split into forward, backward
    /// and optimizer) and write a time profile the simulator's profiled experiments read
    /// (seconds per batch with its spread, bytes per update, where and how it was measured).
    /// Needs the `cnn` feature.
    Profile(crate::tools::profile::ProfileArgs),
    /// List the devices CNN workloads can run on here (cpu; torch-cpu and cuda:N with the
    /// `cuda` feature), and with `--compare DEVICE` check that one computes the CPU backend's
    /// gradients and evaluations for every model (what scripts/gpu-check.sh runs on a GPU).
    Devices(crate::tools::devices::DevicesArgs),
    /// Compare a results directory with a committed baseline (`baselines/<testbed>.json`):
    /// exact (the SHA-256 of every CSV a sim-only figure wrote: any change fails and is named),
    /// claims (a claim that passed and does not now fails), bounds (counted staleness and gap
    /// violations must be 0, any driver), ratio (transport and simulator numbers over in-run
    /// references, 5 rounds, one-sided Mann-Whitney and a tolerance, confirmed by a second
    /// measurement) and absolute (Gb/s, ns, events/s; gated only on the baseline's testbed).
    /// Writes regress.json and regress.md (and BMF JSON with --bencher). `accept` writes the
    /// baseline from a confirmed run; `selftest` measures the false-alarm rate and an injected
    /// regression. Exit codes: 0 ok, 1 regressed, 2 usage or infrastructure error, 3 only
    /// noisy findings, 4 the device --require names is absent.
    Regress(crate::tools::regress::RegressArgs),
    /// Analyse a communication graph: nodes, edges, degrees, regularity, connectivity,
    /// shortest paths and both spectral gaps (ASAP's 1 - sigma_2(P), Hop's |l1| - |l2|).
    Graph {
        /// A named family: complete, star, root-expander, chain, ring, ring-based,
        /// double-ring, malt or malt-K; or random-regular-D (a random D-regular graph drawn
        /// from --seed, built exactly as the experiments build it: a figure's graph is
        /// `--kind <its graph> --nodes <its workers> --seed <its seed>`).
        #[arg(long, conflicts_with = "file", required_unless_present = "file")]
        kind: Option<String>,
        /// Node count for --kind.
        #[arg(long, default_value_t = 8)]
        nodes: usize,
        /// Seed of a random graph (random-regular-D); the named families ignore it.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// An edge-list file: one 'src dst [weight]' per line (src sends to dst), '#'
        /// comments, optional 'nodes N' first.
        #[arg(long)]
        file: Option<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// The binary's `main`; started under an experiment's name, that experiment
/// ([`crate::tools::multicall`]).
pub fn main() -> std::process::ExitCode {
    if let Some(experiment) = crate::tools::multicall::started_as() {
        return experiment();
    }
    crate::harness::exit::end_quietly_on_broken_pipe();
    let cli = Cli::parse();
    if let Command::Launch(args) = cli.command {
        return match crate::tools::launch::run(args) {
            Ok(code) => std::process::ExitCode::from(code.clamp(0, 255) as u8),
            Err(e) => {
                eprintln!("error: {}", crate::harness::exit::error_text(&e));
                std::process::ExitCode::FAILURE
            }
        };
    }
    if let Command::Regress(args) = &cli.command {
        return match crate::tools::regress::run(args) {
            Ok(code) => std::process::ExitCode::from(code),
            Err(e) => {
                eprintln!("error: {}", crate::harness::exit::error_text(&e));
                std::process::ExitCode::from(crate::tools::regress::EXIT_ERROR)
            }
        };
    }
    crate::harness::exit::main_with(|| run(cli))
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Launch(_) | Command::Regress(_) => unreachable!("handled in main"),
        Command::Datasets { lock, command } => crate::tools::datasets::run(command, lock),
        Command::TransportBench(args) => crate::tools::transport_bench::run(args),
        Command::Profile(args) => crate::tools::profile::run(&args),
        Command::Devices(args) => crate::tools::devices::run(&args),
        Command::Faults { out } => {
            let exe = crate::tools::launch::resolve("ps-modes");
            let path = crate::tools::faults::run_all(&exe, &out)?;
            println!("{}", std::fs::read_to_string(&path)?);
            eprintln!("fault matrix: {}", path.display());
            Ok(())
        }
        Command::Twins {
            seed,
            csv,
            label_noise,
            informative,
            topic_share,
            dataset,
        } => twins(seed, csv, [label_noise, informative, topic_share], dataset),
        Command::Graph {
            kind,
            nodes,
            seed,
            file,
            json,
        } => {
            let topo = match (kind, file) {
                (_, Some(f)) => read_edge_list(&f)?,
                (Some(k), None) => crate::runs::peers::graph(&k, nodes, seed)?,
                (None, None) => unreachable!("clap requires --kind or --file"),
            };
            let r = GraphReport::of(&topo).context("graph analysis failed")?;
            if json {
                let mut v = serde_json::to_value(&r)?;
                v["edge_list"] = serde_json::to_value(topo.edges())?;
                println!("{}", serde_json::to_string(&v)?);
            } else {
                println!("graph:            {}", r.name);
                println!("nodes:            {}", r.nodes);
                println!(
                    "edges:            {} (directed, self-loops excluded)",
                    r.edges
                );
                println!("in-degrees:       {:?} (incl. self-loop)", r.in_degrees);
                println!("out-degrees:      {:?} (incl. self-loop)", r.out_degrees);
                println!("regular:          {}", r.regular);
                println!("strongly connected: {}", r.connected);
                println!(
                    "shortest paths:   diameter {}, mean {:.3}, unreachable pairs {}",
                    r.paths.diameter, r.paths.mean, r.paths.unreachable_pairs
                );
                println!(
                    "spectral gap (ASAP, 1 - sigma2(P)):   {:.6}  (sigma1 {:.6}, sigma2 {:.6})",
                    r.spectral_gap_sv, r.sigma[0], r.sigma[1]
                );
                println!(
                    "spectral gap (Hop, |l1| - |l2|):      {:.6}  (|l1| {:.6}, |l2| {:.6})",
                    r.spectral_gap_eig, r.lambda_abs[0], r.lambda_abs[1]
                );
                match r.spectral_gap_laplacian {
                    Some(g) => println!("spectral gap (Hop Fig 21, 1 - Re l2(D^-1 A)): {g:.6}"),
                    None => println!(
                        "spectral gap (Hop Fig 21, 1 - Re l2(D^-1 A)): undefined (a node has no neighbour)"
                    ),
                }
                println!("convention: {}", r.convention);
            }
            Ok(())
        }
    }
}

/// Writes `rows` as CSV to `path`.
fn write_rows<T: serde::Serialize>(path: &std::path::Path, rows: &[T]) -> Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    for r in rows {
        w.serialize(r)?;
    }
    w.flush()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// The ASYNC least-squares twins' table (the SVM options do not apply to them): held-out
/// accuracy of the sign of the exact least-squares fit against the published figure.
fn print_ls_twins(
    seed: u64,
    only: Option<&str>,
    [label_noise, informative, topic_share]: [Option<f64>; 3],
) -> Result<Vec<crate::tools::twins::least_squares::LsCalibrationRow>> {
    use crate::tools::twins::least_squares::{calibrate_ls, ls_cases, ASYNC_QUICK_CONFIGS};
    use crate::workloads::least_squares::TwinShape;
    let mut cases = ls_cases(ASYNC_QUICK_CONFIGS)?;
    cases.retain(|c| only.is_none_or(|d| c.dataset.name == d));
    for c in &mut cases {
        match &mut c.dataset.shape {
            TwinShape::Sparse(s) => {
                s.label_noise = label_noise.unwrap_or(s.label_noise);
                s.informative = informative.unwrap_or(s.informative);
                s.topic_share = topic_share.unwrap_or(s.topic_share);
            }
            TwinShape::Dense(d) => d.label_noise = label_noise.unwrap_or(d.label_noise),
        }
    }
    let mut rows = Vec::new();
    if cases.is_empty() {
        return Ok(rows);
    }
    println!(
        "\nASYNC least-squares twins (accuracy of sign(x.w*) on held-out rows):\n{:<16} {:>6} {:>6} {:>7} {:>9} {:>9} {:>9} {:>9}  origin",
        "twin", "rows", "test", "feat", "accuracy", "published", "gap", "F*"
    );
    for c in &cases {
        let r = calibrate_ls(c, seed)?;
        let fmt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        println!(
            "{:<16} {:>6} {:>6} {:>7} {:>9.3} {:>9} {:>9} {:>9.4}  {}",
            r.twin,
            r.rows,
            r.test_rows,
            r.features,
            r.accuracy,
            fmt(r.published),
            fmt(r.gap),
            r.optimum,
            r.origin
        );
        if r.published.is_none() {
            println!("  {}: {}", r.twin, r.source);
        }
        if let Some((_, why)) = crate::tools::twins::least_squares::NOT_CALIBRATED
            .iter()
            .find(|(t, _)| *t == r.twin)
        {
            println!("  {}: not calibrated: {why}", r.twin);
        }
        rows.push(r);
    }
    Ok(rows)
}

fn twins(
    seed: u64,
    csv: Option<PathBuf>,
    [label_noise, informative, topic_share]: [Option<f64>; 3],
    dataset: Option<String>,
) -> Result<()> {
    use crate::tools::twins::svm::{calibrate, cases, QUICK_CONFIGS, TOLERANCE};
    let mut cases = cases(QUICK_CONFIGS)?;
    cases.retain(|c| dataset.is_none() || c.data.dataset == dataset);
    for c in &mut cases {
        c.data.label_noise = label_noise.unwrap_or(c.data.label_noise);
        c.data.informative = informative.unwrap_or(c.data.informative);
        c.data.topic_share = topic_share.unwrap_or(c.data.topic_share);
    }
    println!(
        "{:<16} {:>6} {:>6} {:>7} {:>9} {:>9} {:>9} {:>9}  origin",
        "dataset", "train", "test", "feat", "best acc", "published", "gap", "F*"
    );
    let mut rows = Vec::new();
    for c in &cases {
        let r = calibrate(c, seed);
        let fmt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        println!(
            "{:<16} {:>6} {:>6} {:>7} {:>9.3} {:>9} {:>9} {:>9.4}  {}",
            r.dataset,
            r.train_rows,
            r.test_rows,
            r.features,
            r.best_accuracy,
            fmt(r.published),
            fmt(r.gap),
            r.optimum,
            r.origin
        );
        rows.push(r);
    }
    println!(
        "(a twin passes when |gap| <= {TOLERANCE}; F* is the optimum of the configured objective)"
    );
    let ls_rows = print_ls_twins(
        seed,
        dataset.as_deref(),
        [label_noise, informative, topic_share],
    )?;
    if let Some(path) = csv {
        write_rows(&path, &rows)?;
        // The least-squares table beside it: <stem>-least-squares.csv.
        let stem = path
            .file_stem()
            .map_or("twins".into(), |s| s.to_string_lossy().into_owned());
        let ls_path = path.with_file_name(format!("{stem}-least-squares.csv"));
        write_rows(&ls_path, &ls_rows)?;
        println!("wrote {} and {}", path.display(), ls_path.display());
    }
    Ok(())
}
