//! hop-fig13: decentralized training on the ring-based graph against a BSP parameter server
//! (Hop §7.3.2, Fig 13, SVM part), on the same workload, compute and network models.

use crate::harness::data_source::DataSource;
use crate::harness::experiment::{self, Experiment, NoArgs, Run};
use crate::harness::output::progress;
use crate::harness::runner::{run_ps, RunSettings};
use crate::judge::claim_id::ClaimId;
use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};
use crate::judge::format::show;
use crate::judge::reference::{Reference, ReferenceRow};
use crate::judge::sensitivity::{self, Knob, KnobValue, Sensitivity};
use crate::judge::time_to_target::TimeToTarget;
use crate::judge::verdict::Judge;
use crate::runs::peers::{graph, run_peers, seconds_per_iteration, PeerCommon};
use anyhow::bail;
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;
use bench_core::metrics::RunRecords;
use bench_core::protocol::peer::PeerSettings;
use bench_core::protocol::{ProtocolSpec, SyncMode};
use bench_core::straggler::StragglerConfig;
use bench_core::topology::Topology;
use bench_core::workload::Aggregation;
use serde::{Deserialize, Serialize};

const FIGURE: &str = "hop-fig13";

struct HopFig13;

/// Hop's Fig 13 statement on decentralized training against the parameter server: much
/// faster, so better by more than the default tolerance.
const MUCH_FASTER_THAN_PS: PaperComparison = PaperComparison {
    quote: "decentralized training in either heterogeneous or homogeneous environments converges much faster than homogeneous PS",
    source: "Hop §7.3.2, Fig 13",
    allows: Allows::Better,
    tolerance: DEFAULT_TOLERANCE,
};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// The decentralized graph.
    graph: String,
    /// How the parameter server combines the workers' updates: `mean` (synchronous SGD with
    /// averaged gradients, the PS the Hop paper compares against) or `sum` (Bösen's INC).
    #[serde(default)]
    ps_aggregation: Aggregation,
    common: PeerCommon,
    /// The knobs the verdicts are re-derived over (sensitivity.csv; first seed).
    #[serde(default)]
    sensitivity: Option<Grid>,
}

/// `[sensitivity]`: modelling knobs the Hop paper does not pin down for this comparison, each a
/// list of values besides the configured one. The verdicts are re-derived at every combination.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Grid {
    /// Parameter-server aggregations to try (`sum` moves the model N times as far per clock).
    #[serde(default)]
    ps_aggregation: Vec<Aggregation>,
    /// NIC bandwidths (Gbit/s) to try, for every node alike.
    #[serde(default)]
    bandwidth_gbps: Vec<f64>,
}

/// What both systems run on, whatever the knobs: driver, graph, seed, data and the optimum.
struct Setup<'a> {
    driver: DriverKind,
    g: &'a Topology,
    seed: u64,
    data: &'a DataSource,
    reference: Option<&'a Reference>,
}

/// The two systems' runs and what the claims read from them.
struct Comparison {
    dec: RunRecords,
    ps: RunRecords,
    target: f64,
    how: String,
    reference_rows: Vec<ReferenceRow>,
    claims: Vec<Claim>,
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
    const ABOUT: &'static str = "Hop Fig 13: decentralized SVM training (Hop's CNN with [common.cnn] and the cnn feature; standard protocol, ring-based graph) against a BSP parameter server with the same workers, workload (log loss, lr 10, synthetic webspam twin), compute and network models. Writes results/hop-fig13/: summary.csv, curves.csv, claims.csv, manifest.json.";
    const QUICK: &'static str = include_str!("../../../configs/hop-fig13.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/hop-fig13.paper.toml");
    const CNN: Option<(&'static str, &'static str)> = Some((
        include_str!("../../../configs/hop-fig13.cnn.quick.toml"),
        include_str!("../../../configs/hop-fig13.cnn.paper.toml"),
    ));
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = Config;
    type Args = NoArgs;

    fn trains_cnn(cfg: &Self::Config) -> bool {
        cfg.common.cnn.is_some()
    }

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
        let out = run.out();
        let reference = c.reference(seed, data);
        let setup = Setup {
            driver,
            g: &g,
            seed,
            data,
            reference: reference.as_ref(),
        };
        let Comparison {
            dec,
            ps,
            target,
            how,
            reference_rows,
            claims,
        } = compare(cfg, &setup, true)?;
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
        out.csv("reference.csv", &reference_rows)?;
        let headline = claims.clone();
        for claim in claims {
            out.claim(claim);
        }
        out.csv("summary.csv", &summary)?;
        out.csv("curves.csv", &curves)?;
        let mut notes: Vec<String> = reference.iter().map(|r| r.note("svm")).collect();
        notes.push(format!(
            "{} workers training {}, {} iterations each; PS: one server node plus the workers, BSP, aggregation {} ({}); decentralized: standard protocol on {} (each peer averages its in-neighbours' models), evaluated at peer 0; {how}; the CNN half: `hop-fig13 --cnn`, results/hop-fig13-cnn/",
            c.workers,
            c.learning_label(),
            c.iterations,
            cfg.ps_aggregation.label(),
            match cfg.ps_aggregation {
                Aggregation::Mean => "each clock moves the model by the mean of the workers' steps, as the synchronous SGD of Hop §7.3.2 compares against",
                Aggregation::Sum => "the server adds every worker's step, N times the decentralized peers' averaged step",
            },
            g.name()
        ));
        if let Some(grid) = &cfg.sensitivity {
            if run.seed == run.common.seed {
                let s = sensitivity(cfg, grid, &headline, &setup)?;
                s.write(run.out())?;
                notes.push(format!(
                    "sensitivity.csv (first seed): the claims re-derived at ps_aggregation in {:?} x bandwidth_gbps in {:?} (besides the configured {} and {}); verdicts that flip over the grid: {}",
                    grid.ps_aggregation.iter().map(|a| a.label()).collect::<Vec<_>>(),
                    grid.bandwidth_gbps,
                    cfg.ps_aggregation.label(),
                    c.network.bandwidth_gbps,
                    s.fragile_note()
                ));
            }
        }
        run.notes(notes);
        Ok(())
    }
}

/// Runs the decentralized peers and the BSP parameter server of `cfg` on graph `g` and derives
/// the figure's claims; `show_progress` draws a progress bar (not inside a sensitivity sweep).
///
/// # Errors
/// Any error of the runs.
fn compare(cfg: &Config, setup: &Setup<'_>, show_progress: bool) -> anyhow::Result<Comparison> {
    let Setup {
        driver,
        g,
        seed,
        data,
        reference,
    } = *setup;
    let c = &cfg.common;
    let peers = PeerSettings::standard(c.iterations);
    peers.build(g)?;
    let none = StragglerConfig::default();
    let workload = c.workload(seed, data)?;
    let pb = if show_progress {
        progress(2, FIGURE)
    } else {
        indicatif::ProgressBar::hidden()
    };
    pb.set_message(format!("decentralized {}", g.name()));
    let dec = run_peers(driver, c, g, &peers, &none, &workload, seed)?;
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
            stragglers: none,
            eval_every: c.eval_every,
            threads: c.threads.clone(),
            iteration_ns: None,
            wire_bytes: None,
        },
        &cfg.ps_aggregation.wrap(workload),
        seed,
    )?;
    pb.finish_and_clear();
    let judged = Judge::new(reference).judge([
        ("decentralized", &dec.progress[..]),
        ("ps-bsp", &ps.progress[..]),
    ]);
    let (target, how) = (judged.target, judged.rule.clone());
    let mut claims = vec![judged.near_optimum_claim(format!("{FIGURE}/best-run-near-optimum"))];
    claims.push(judged.every_run_reaches_claim(format!("{FIGURE}/every-run-reaches-target")));
    let reference_rows = judged.reference_rows("svm");
    // Three outcomes, as the paper words it: "much faster" is better by more than the tolerance.
    claims.extend(
        judged.time_claims(
            TimeToTarget::new(
                ClaimId::new(FIGURE, "", "decentralized-before-ps"),
                &MUCH_FASTER_THAN_PS,
                "decentralized",
                "ps-bsp",
            )
            .stated(format!(
                "decentralized training reaches loss {target:.4} {}",
                MUCH_FASTER_THAN_PS.before("the BSP parameter server")
            )),
        ),
    );
    Ok(Comparison {
        dec,
        ps,
        target,
        how,
        reference_rows,
        claims,
    })
}

/// The claims re-derived over `grid` (aggregation x bandwidth) on `setup`; the configured
/// point is `headline`'s claims, not run again.
///
/// # Errors
/// Any error of the runs.
fn sensitivity(
    cfg: &Config,
    grid: &Grid,
    headline: &[Claim],
    setup: &Setup<'_>,
) -> anyhow::Result<Sensitivity> {
    let mut aggregations = vec![cfg.ps_aggregation];
    aggregations.extend(
        grid.ps_aggregation
            .iter()
            .filter(|a| **a != cfg.ps_aggregation),
    );
    let configured = cfg.common.network.bandwidth_gbps;
    let mut bandwidths = vec![configured];
    bandwidths.extend(grid.bandwidth_gbps.iter().filter(|b| **b != configured));
    let points = sensitivity::two_knob_points(
        Knob {
            name: "ps_aggregation",
            values: &aggregations,
            configured: cfg.ps_aggregation,
        },
        Knob {
            name: "bandwidth_gbps",
            values: &bandwidths,
            configured,
        },
        false,
    );
    Sensitivity::sweep(
        "hop-fig13 sensitivity",
        setup.driver == DriverKind::Sim,
        points,
        headline,
        |&(aggregation, bandwidth), _| {
            let mut c = cfg.clone();
            c.ps_aggregation = aggregation;
            c.common.network.bandwidth_gbps = bandwidth;
            Ok(compare(&c, setup, false)?.claims)
        },
    )
}

/// An aggregation as the grid's setting names it.
impl KnobValue for Aggregation {
    fn setting(&self) -> String {
        self.label().to_string()
    }
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<HopFig13>()
}

#[cfg(test)]
mod cnn_config_tests {
    use super::*;

    /// The CNN half's configurations (`make fig-hop-fig13-cnn`) parse and validate in every
    /// build.
    #[test]
    fn the_cnn_configurations_parse_and_validate() {
        for text in [
            include_str!("../../../configs/hop-fig13.cnn.quick.toml"),
            include_str!("../../../configs/hop-fig13.cnn.paper.toml"),
        ] {
            let cfg: Config = toml::from_str(text).unwrap();
            HopFig13::validate(&cfg, &NoArgs::default(), &[DriverKind::Sim]).unwrap();
            assert!(cfg.common.cnn.is_some());
        }
    }
}
