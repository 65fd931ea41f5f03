//! hop-fig12: how much random slowdown slows standard decentralized training on ring,
//! ring-based and double-ring graphs (Hop §7.3.1, Fig 12, SVM part).

use crate::harness::cli::driver_tag;
use crate::harness::experiment::{self, Experiment, NoArgs, Run};
use crate::harness::output::progress;
use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};
use crate::judge::verdict::Judge;
use crate::runs::peers::{graph, run_peers, seconds_per_iteration, PeerCommon};
use anyhow::bail;
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;
use bench_core::protocol::peer::PeerSettings;
use bench_core::straggler::{RandomSlowdown, StragglerConfig};
use serde::{Deserialize, Serialize};

const FIGURE: &str = "hop-fig12";

struct HopFig12;

/// Hop's Fig 12 statement that every graph is slowed: seconds per iteration without the
/// slowdown better than with it by more than the default tolerance.
const NOT_IMMUNE: PaperComparison = PaperComparison {
    quote: "None of the graphs is immune to the slowdown",
    source: "Hop §7.3.1, Fig 12",
    allows: Allows::Better,
    tolerance: DEFAULT_TOLERANCE,
};

/// Hop's Fig 12 statement on sparser graphs: they suffer less, so the ring's slowdown ratio
/// better (lower) than the double ring's by more than the default tolerance.
const SPARSER_SUFFER_LESS: PaperComparison = PaperComparison {
    quote: "Moreover, we see that sparser graphs suffer less to random slowdown",
    source: "Hop §7.3.1, Fig 12",
    allows: Allows::Better,
    tolerance: DEFAULT_TOLERANCE,
};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    graphs: Vec<String>,
    slowdown: RandomSlowdown,
    common: PeerCommon,
}

#[derive(Serialize)]
struct SummaryRow {
    graph: String,
    slowdown: bool,
    seconds_per_iteration: f64,
    slowdown_ratio: f64,
    final_loss: f64,
}

#[derive(Serialize)]
struct CurveRow {
    graph: String,
    slowdown: bool,
    time: f64,
    iteration: f64,
    loss: f64,
}

impl Experiment for HopFig12 {
    const BINARY: &'static str = FIGURE;
    const ABOUT: &'static str = "Hop Fig 12: standard decentralized SVM training (log loss, lr 10, synthetic webspam twin; Hop's CNN with [common.cnn] and the cnn feature) on 16 peers over ring, ring-based and double-ring graphs, with and without random slowdown (every computation 6x slower with probability 1/n). Writes results/hop-fig12/: summary.csv (time per iteration and slowdown ratio per graph), curves.csv, reference.csv (the SVM's reference optimum and near-optimum line), claims.csv, manifest.json.";
    const QUICK: &'static str = include_str!("../../../configs/hop-fig12.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/hop-fig12.paper.toml");
    const CNN: Option<(&'static str, &'static str)> = Some((
        include_str!("../../../configs/hop-fig12.cnn.quick.toml"),
        include_str!("../../../configs/hop-fig12.cnn.paper.toml"),
    ));
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = Config;
    type Args = NoArgs;

    fn trains_cnn(cfg: &Self::Config) -> bool {
        cfg.common.cnn.is_some()
    }

    fn validate(cfg: &Config, _: &NoArgs, _: &[DriverKind]) -> anyhow::Result<()> {
        cfg.common.validate()?;
        if cfg.graphs.is_empty() {
            bail!("graphs must list at least one graph");
        }
        Ok(())
    }

    fn run(run: &mut Run<'_, Self>) -> anyhow::Result<()> {
        let (cfg, seed, data) = (run.cfg, run.seed, run.data);
        let drivers = run.drivers.to_vec();
        let settings = PeerSettings::standard(cfg.common.iterations);
        let graphs = cfg
            .graphs
            .iter()
            .map(|g| graph(g, cfg.common.workers, seed))
            .collect::<anyhow::Result<Vec<_>>>()?;
        for g in &graphs {
            settings.build(g)?;
        }
        let workload = cfg.common.workload(seed, data)?;
        let reference = cfg.common.reference(seed, data);
        let judge = Judge::new(reference.as_ref());
        let mut ref_rows = Vec::new();
        let mut way_rows = Vec::new();
        let out = run.out();
        let pb = progress((drivers.len() * graphs.len() * 2) as u64, FIGURE);
        let (mut summary, mut curves) = (Vec::new(), Vec::new());
        for &driver in &drivers {
            let mut ratios = Vec::new();
            for g in &graphs {
                let mut per_iter = [0.0f64; 2];
                let mut progress = Vec::new();
                let tag = driver_tag(g.name(), "/", driver, &drivers);
                for (k, slowed) in [false, true].into_iter().enumerate() {
                    let stragglers = StragglerConfig {
                        slow: vec![],
                        jitter_sigma: 0.0,
                        production: None,
                        random: slowed.then_some(cfg.slowdown),
                        trace: None,
                    };
                    pb.set_message(format!("{} slowdown={slowed}", g.name()));
                    let r = run_peers(
                        driver,
                        &cfg.common,
                        g,
                        &settings,
                        &stragglers,
                        &workload,
                        seed,
                    )?;
                    pb.inc(1);
                    per_iter[k] = seconds_per_iteration(&r, cfg.common.iterations);
                    let name = if slowed { "slowed" } else { "standard" };
                    progress.push((name, r.progress.clone()));
                    summary.push(SummaryRow {
                        graph: tag.clone(),
                        slowdown: slowed,
                        seconds_per_iteration: per_iter[k],
                        slowdown_ratio: per_iter[k] / per_iter[0],
                        final_loss: r.progress.last().map_or(f64::NAN, |p| p.loss),
                    });
                    for p in &r.progress {
                        curves.push(CurveRow {
                            graph: tag.clone(),
                            slowdown: slowed,
                            time: p.time,
                            iteration: p.iteration,
                            loss: p.loss,
                        });
                    }
                }
                // The slowdown changes time per iteration, not what an iteration learns: the
                // claim guards against comparing times of curves that never left their start.
                let judged = judge.judge(progress.iter().map(|(n, p)| (*n, &p[..])));
                ref_rows.extend(judged.reference_rows(&tag));
                way_rows.extend(judged.way_rows(&tag));
                out.claim(
                    judged.near_optimum_claim(format!("{FIGURE}/{tag}/best-run-near-optimum")),
                );
                // Hop's Fig 12 draws both curves reaching the same loss, the slowed one later.
                out.claim(
                    judged.every_run_reaches_claim(format!(
                        "{FIGURE}/{tag}/every-run-reaches-target"
                    )),
                );
                ratios.push((g.name().to_string(), per_iter[1] / per_iter[0]));
            }
            let dl = driver_tag("", "/", driver, &drivers);
            for (g, r) in &ratios {
                // Seconds per iteration without the slowdown (1, the ratio's unit) against
                // with it.
                let (holds, how) = NOT_IMMUNE.judge(Some(1.0), Some(*r));
                out.claim(
                    Claim::check(
                        format!("{FIGURE}/{g}{dl}/slowed"),
                        format!(
                            "random slowdown makes iterations slower, by more than {:.0}% of their slowed time",
                            100.0 * NOT_IMMUNE.tolerance
                        ),
                        NOT_IMMUNE.cite(),
                        format!("slowdown ratio {r:.2}; without against with: {how}"),
                        holds,
                    )
                    .with_value(*r),
                );
            }
            let find = |p: &str| ratios.iter().find(|(g, _)| g.starts_with(p)).map(|x| x.1);
            if let (Some(ring), Some(double)) = (find("ring-"), find("double-ring")) {
                let (holds, how) = SPARSER_SUFFER_LESS.judge(Some(ring), Some(double));
                out.claim(
                    Claim::check(
                        format!("{FIGURE}/ring-vs-double-ring{dl}"),
                        format!(
                            "the sparser ring suffers less than the double ring: its slowdown ratio lower by more than {:.0}% of the double ring's",
                            100.0 * SPARSER_SUFFER_LESS.tolerance
                        ),
                        SPARSER_SUFFER_LESS.cite(),
                        format!("ring {ring:.2}, double-ring {double:.2}: {how}"),
                        holds,
                    )
                    .with_value(ring / double),
                );
            }
        }
        pb.finish_and_clear();
        out.csv("summary.csv", &summary)?;
        out.csv("curves.csv", &curves)?;
        out.csv("reference.csv", &ref_rows)?;
        out.csv("ways.csv", &way_rows)?;
        let mut notes: Vec<String> = reference.iter().map(|r| r.note("svm")).collect();
        notes.push(format!(
            "{} peers training {}, {} iterations, standard protocol; slowdown: every computation {}x slower with probability {}; slowdown ratio = seconds per iteration with slowdown / without; the CNN half: `hop-fig12 --cnn`, results/hop-fig12-cnn/",
            cfg.common.workers,
            cfg.common.learning_label(),
            cfg.common.iterations,
            cfg.slowdown.factor,
            cfg.slowdown.probability.map_or("1/n".to_string(), |p| p.to_string())
        ));
        run.notes(notes);
        Ok(())
    }
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<HopFig12>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CNN half's configurations (`make fig-hop-fig12-cnn`) parse and validate in every
    /// build.
    #[test]
    fn the_cnn_configurations_parse_and_validate() {
        for text in [
            include_str!("../../../configs/hop-fig12.cnn.quick.toml"),
            include_str!("../../../configs/hop-fig12.cnn.paper.toml"),
        ] {
            let cfg: Config = toml::from_str(text).unwrap();
            HopFig12::validate(&cfg, &NoArgs::default(), &[DriverKind::Sim]).unwrap();
            assert!(cfg.common.cnn.is_some());
        }
    }
}
