//! `syncbench`: the harness's general command line (graphs today; datasets, launch and
//! transport benchmarks join as they land).

use anyhow::{Context, Result};
use bench_core::topology::{read_edge_list, GraphReport, TopologyKind};
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
enum DatasetsCommand {
    /// Parse a local LIBSVM file and print rows, features, non-zeros, label counts and parse
    /// time. (list / fetch / verify / pin / path come with datasets.lock support.)
    Inspect {
        /// The file (LIBSVM / SVMlight text).
        file: PathBuf,
        /// Declared feature count: indices beyond it are errors. Default: the largest index.
        #[arg(long)]
        features: Option<usize>,
        /// Print one JSON object with keys rows, features, nnz, labels, parse_seconds.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum Command {
    /// Work with datasets.
    Datasets {
        #[command(subcommand)]
        command: DatasetsCommand,
    },
    /// Analyse a communication graph: nodes, edges, degrees, regularity, connectivity,
    /// shortest paths and both spectral gaps (ASAP's 1 - sigma_2(P), Hop's |l1| - |l2|).
    Graph {
        /// A named family: complete, star, root-expander, chain, ring, ring-based,
        /// double-ring, malt or malt-K.
        #[arg(long, conflicts_with = "file", required_unless_present = "file")]
        kind: Option<String>,
        /// Node count for --kind.
        #[arg(long, default_value_t = 8)]
        nodes: usize,
        /// An edge-list file: one 'src dst [weight]' per line (src sends to dst), '#'
        /// comments, optional 'nodes N' first.
        #[arg(long)]
        file: Option<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> std::process::ExitCode {
    experiments::main_with(run)
}

fn run() -> Result<()> {
    match Cli::parse().command {
        Command::Datasets {
            command:
                DatasetsCommand::Inspect {
                    file,
                    features,
                    json,
                },
        } => inspect(&file, features, json),
        Command::Graph {
            kind,
            nodes,
            file,
            json,
        } => {
            let topo = match (kind, file) {
                (_, Some(f)) => read_edge_list(&f)?,
                (Some(k), None) => TopologyKind::parse(&k)?.build(nodes)?,
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
                println!("convention: {}", r.convention);
            }
            Ok(())
        }
    }
}

fn inspect(file: &std::path::Path, features: Option<usize>, json: bool) -> Result<()> {
    let f = std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    let t0 = std::time::Instant::now();
    let m = bench_core::data::read_libsvm(std::io::BufReader::new(f), file, features)?;
    let secs = t0.elapsed().as_secs_f64();
    let mut labels: std::collections::BTreeMap<String, usize> = Default::default();
    for l in &m.labels {
        *labels.entry(format!("{l}")).or_default() += 1;
    }
    if json {
        let v = serde_json::json!({
            "file": file.display().to_string(),
            "rows": m.rows(),
            "features": m.cols,
            "nnz": m.nnz(),
            "labels": labels,
            "parse_seconds": secs,
        });
        println!("{}", serde_json::to_string(&v)?);
    } else {
        println!("file:      {}", file.display());
        println!("rows:      {}", m.rows());
        println!("features:  {}", m.cols);
        println!(
            "non-zeros: {} ({:.1} per row)",
            m.nnz(),
            m.nnz() as f64 / m.rows().max(1) as f64
        );
        println!("labels:    {labels:?}");
        println!("parsed in  {secs:.3} s");
    }
    Ok(())
}
