//! hop-fig13: decentralized training on the ring-based graph against a BSP parameter server
//! (hop.txt Fig 13, SVM part), on the same workload, compute and network models.

use anyhow::bail;
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;
use bench_core::protocol::peer::PeerSettings;
use bench_core::protocol::{ProtocolSpec, SyncMode};
use bench_core::straggler::StragglerConfig;
use bench_core::workload::Aggregation;
use experiments::experiment::{self, Experiment, NoArgs, Run};
use experiments::output::progress;
use experiments::peer_setup::{graph, run_peers, seconds_per_iteration, PeerCommon};
use experiments::profiled::show;
use experiments::runner::{run_ps, RunSettings};
use experiments::svm_setup::{comparison_target, loss_spans, near_optimum_claim, reference_rows};
use serde::{Deserialize, Serialize};

const FIGURE: &str = "hop-fig13";

struct HopFig13;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// The decentralized graph.
    graph: String,
    /// How the parameter server combines the workers' updates: `mean` (synchronous SGD with
    /// averaged gradients, the PS hop.txt compares against) or `sum` (Bösen's INC).
    #[serde(default)]
    ps_aggregation: Aggregation,
    common: PeerCommon,
}

#[derive(Serialize)]
struct SummaryRow {
    system: String,
    seconds_per_iteration: f64,
    seconds_to_target: String,
    target_loss: f64,
    final_loss: f64,
    final_accuracy: f64,
    busiest_node_mb: f64,
}

#[derive(Serialize)]
struct CurveRow {
    system: String,
    time: f64,
    loss: f64,
}

impl Experiment for HopFig13 {
    const BINARY: &'static str = FIGURE;
    const ABOUT: &'static str = "Hop Fig 13: decentralized SVM training (standard protocol, ring-based graph) against a BSP parameter server with the same workers, workload (log loss, lr 10, synthetic webspam twin), compute and network models. Writes results/hop-fig13/: summary.csv, curves.csv, claims.csv, manifest.json.";
    const QUICK: &'static str = include_str!("../../configs/hop-fig13.quick.toml");
    const PAPER: &'static str = include_str!("../../configs/hop-fig13.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = Config;
    type Args = NoArgs;

    fn validate(cfg: &Config, _: &NoArgs, drivers: &[DriverKind]) -> anyhow::Result<()> {
        cfg.common.validate()?;
        if drivers.len() != 1 {
            bail!("hop-fig13 compares two systems under one driver; pass one --driver");
        }
        Ok(())
    }

    fn run(run: &mut Run<'_, Self>) -> anyhow::Result<()> {
        let (cfg, seed, data) = (run.cfg, run.seed, run.data);
        let drivers = run.drivers.to_vec();
        let driver = drivers[0];
        let c = &cfg.common;
        let g = graph(&cfg.graph, c.workers, seed)?;
        let peers = PeerSettings::standard(c.iterations);
        peers.build(&g)?;
        let none = StragglerConfig::default();
        let workload = c.workload(seed, data)?;
        let out = run.out();
        let pb = progress(2, FIGURE);
        pb.set_message(format!("decentralized {}", g.name()));
        let dec = run_peers(driver, c, &g, &peers, &none, &workload, seed)?;
        pb.inc(1);
        pb.set_message("parameter server BSP");
        let ps = run_ps(
            driver,
            ProtocolSpec {
                mode: SyncMode::bsp(),
                workers: c.workers,
                iterations: c.iterations,
            },
            &RunSettings {
                network: c.network.clone(),
                compute: c.compute,
                stragglers: none.clone(),
                eval_every: c.eval_every,
                threads: c.threads.clone(),
                iteration_ns: None,
                wire_bytes: None,
            },
            &cfg.ps_aggregation.wrap(workload.clone()),
            seed,
        )?;
        pb.finish_and_clear();
        let reference = c.reference(seed, data);
        let (target, how) =
            comparison_target(reference.as_ref(), &[&dec.progress[..], &ps.progress[..]]);
        let mut summary = Vec::new();
        let mut curves = Vec::new();
        for (name, r) in [
            (format!("decentralized {}", g.name()), &dec),
            ("ps-bsp".to_string(), &ps),
        ] {
            let last = r.progress.last();
            summary.push(SummaryRow {
                system: name.clone(),
                seconds_per_iteration: seconds_per_iteration(r, c.iterations),
                seconds_to_target: show(r.time_to_loss(target)),
                target_loss: target,
                final_loss: last.map_or(f64::NAN, |p| p.loss),
                final_accuracy: last.map_or(f64::NAN, |p| p.accuracy),
                busiest_node_mb: r.bytes_sent.iter().copied().max().unwrap_or(0) as f64 / 1e6,
            });
            for p in &r.progress {
                curves.push(CurveRow {
                    system: name.clone(),
                    time: p.time,
                    loss: p.loss,
                });
            }
        }
        let finals = loss_spans(
            [("decentralized", &dec), ("ps-bsp", &ps)]
                .iter()
                .map(|(name, r)| (name.to_string(), &r.progress[..])),
        );
        out.csv(
            "reference.csv",
            &reference_rows("svm", reference.as_ref(), &finals),
        )?;
        out.claim(near_optimum_claim(
            format!("{FIGURE}/best-run-near-optimum"),
            reference.as_ref(),
            &finals,
        ));
        let (td, tp) = (dec.time_to_loss(target), ps.time_to_loss(target));
        out.claim(
            Claim::check(
                format!("{FIGURE}/decentralized-before-ps"),
                format!(
                "decentralized training reaches loss {target:.4} before the BSP parameter server"
            ),
                "decentralized converges faster",
                format!("decentralized {} s, PS BSP {} s", show(td), show(tp)),
                matches!((td, tp), (Some(a), Some(b)) if a < b) || (td.is_some() && tp.is_none()),
            )
            .with_value(match (td, tp) {
                (Some(a), Some(b)) if a > 0.0 => b / a,
                _ => f64::NAN,
            }),
        );
        out.csv("summary.csv", &summary)?;
        out.csv("curves.csv", &curves)?;
        let mut notes: Vec<String> = reference.iter().map(|r| r.note("svm")).collect();
        notes.push(format!(
            "{} workers, {} iterations each; PS: one server node plus the workers, BSP, aggregation {} ({}); decentralized: standard protocol on {} (each peer averages its in-neighbours' models), evaluated at peer 0; {how}; CNN part n.a.",
            c.workers,
            c.iterations,
            cfg.ps_aggregation.label(),
            match cfg.ps_aggregation {
                Aggregation::Mean => "each clock moves the model by the mean of the workers' steps, as the synchronous SGD hop.txt compares against",
                Aggregation::Sum => "the server adds every worker's step, N times the decentralized peers' averaged step",
            },
            g.name()
        ));
        run.notes(notes);
        Ok(())
    }
}

fn main() -> std::process::ExitCode {
    experiment::main::<HopFig13>()
}
