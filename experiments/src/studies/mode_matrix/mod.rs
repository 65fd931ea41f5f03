//! mode-matrix: every synchronization mode of the three families on one workload, one network
//! and the same straggler patterns (not a paper figure: the table no single paper has). For
//! each (pattern, mode): time to an optimum-relative loss target, iterations, bytes per node,
//! mean wait and the largest staleness or gap observed; the time relative to a baseline mode
//! (BSP) in the same pattern, a per-pattern ranking (each seed's, and the median over the
//! run's seeds that the heatmap draws), and claims that restate the papers' headlines inside
//! the matrix.

mod cells;
mod config;
pub mod learning;
mod ranking;
mod sensitivity;

use cells::*;
use config::*;
use sensitivity::*;

use crate::harness::experiment::{self, Experiment, NoArgs, Run};
use crate::harness::output::ExperimentOutput;
use crate::runs::named_mode::MatrixMode;
use anyhow::{bail, Result};
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;
use bench_core::workload::Aggregation;
use serde::Serialize;

const FIGURE: &str = "mode-matrix";

struct ModeMatrix;

/// One cell of the matrix (one seed).
#[derive(Debug, Clone, Serialize)]
struct MatrixRow {
    pattern: String,
    mode: String,
    family: &'static str,
    /// Seconds (virtual under the simulator) to the target loss; empty when never reached.
    time_to_target_s: Option<f64>,
    /// That time over the baseline's in the same pattern (empty when either never reached).
    vs_baseline: Option<f64>,
    /// Updates applied per worker when the target was reached.
    iterations_to_target: Option<f64>,
    makespan_s: f64,
    final_loss: f64,
    /// Bytes every node sent, over the node count (the server or coordinator included).
    bytes_per_node: f64,
    /// Mean time a worker waited per iteration (for a task, under the coordinator).
    mean_wait_us: f64,
    /// Largest staleness of a read, in the family's own unit: clocks (parameter server),
    /// iterations of the oldest update reduced (peers), model versions committed since the
    /// task's (coordinator: one result per version under ASP/SSP, one round under BSP).
    max_staleness: u64,
    /// Updates dropped as late (backup workers: by the server, or by a peer of its
    /// in-neighbours').
    dropped_updates: u64,
}

/// Per pattern, the modes from fastest to slowest to the target, in one seed.
#[derive(Debug, Clone, Serialize)]
struct RankRow {
    pattern: String,
    rank: usize,
    mode: String,
    time_to_target_s: Option<f64>,
    vs_baseline: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
struct CurveRow {
    pattern: String,
    mode: String,
    time: f64,
    iteration: f64,
    #[serde(with = "bench_core::metrics::float_text")]
    loss: f64,
}

/// `a / b` where a run that never reached the target counts as infinitely slow: None when
/// neither reached it.
fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        (Some(_), None) => Some(0.0),
        (None, Some(_)) => Some(f64::INFINITY),
        _ => None,
    }
}

fn headline_claim(h: &Headline, rows: &[MatrixRow], target_how: &str) -> Claim {
    let id = format!("{FIGURE}/{}", h.name);
    let row = |m: &str| {
        rows.iter().find(|r| {
            r.pattern == h.pattern && MatrixMode::parse(m, 1).is_ok_and(|p| p.label() == r.mode)
        })
    };
    let within = if h.min_ratio > 0.0 {
        format!("between {} and {}", h.min_ratio, h.max_ratio)
    } else {
        format!("less than {}", h.max_ratio)
    };
    let statement = match h.metric {
        Metric::TimeToTarget => format!(
            "under {}, {} reaches the target in {within} x the time of {}",
            h.pattern, h.mode, h.than
        ),
        Metric::BytesPerNode => format!(
            "under {}, {} sends {within} x the bytes per node of {}",
            h.pattern, h.mode, h.than
        ),
    };
    let (Some(a), Some(b)) = (row(&h.mode), row(&h.than)) else {
        return Claim::check(id, statement, h.paper.clone(), "a mode did not run", false);
    };
    let show = |t: Option<f64>| t.map_or("never".to_string(), |t| format!("{t:.3} s"));
    let (r, measured) = match h.metric {
        Metric::TimeToTarget => (
            ratio(a.time_to_target_s, b.time_to_target_s),
            format!(
                "{} vs {} to the target ({target_how})",
                show(a.time_to_target_s),
                show(b.time_to_target_s)
            ),
        ),
        Metric::BytesPerNode => (
            Some(a.bytes_per_node / b.bytes_per_node.max(1.0)),
            format!(
                "{:.2} vs {:.2} MB per node",
                a.bytes_per_node * 1e-6,
                b.bytes_per_node * 1e-6
            ),
        ),
    };
    let measured = match r {
        Some(r) if r.is_finite() => format!("{measured}: ratio {r:.3}"),
        _ => measured,
    };
    let c = Claim::check(
        id,
        statement,
        h.paper.clone(),
        measured,
        r.is_some_and(|r| r < h.max_ratio && (h.min_ratio == 0.0 || r > h.min_ratio)),
    );
    match r {
        Some(r) if r.is_finite() => c.with_value(r),
        _ => c,
    }
}

impl Experiment for ModeMatrix {
    const BINARY: &'static str = FIGURE;
    const ABOUT: &'static str = "Every synchronization mode (parameter server BSP/ASP/SSP/ESSP/DSSP/backup workers, ASYNC's coordinator with its barrier predicates, decentralized standard/NOTIFY-ACK/backup/staleness/skipping on several graphs, stochastic reduce, all-reduce) on one workload, network and set of straggler patterns. Writes results/mode-matrix/: matrix.csv (time to an optimum-relative target, iterations, bytes per node, mean wait, max staleness per mode and pattern), ranking.csv (per pattern, the median over the seeds of each mode's time over the baseline's: what the heatmap draws; seed-ranking.csv is each seed's own), curves.csv, reference.csv, claims.csv (paper headlines restated inside the matrix), manifest.json. Modes, patterns and headlines are configuration: run it on your own workload, network numbers and stragglers with --config.";
    const QUICK: &'static str = include_str!("../../../configs/mode-matrix.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/mode-matrix.paper.toml");
    const OTHER_COMMITTED: &'static [&'static str] = &[
        include_str!("../../../configs/mode-matrix.cnn.quick.toml"),
        include_str!("../../../configs/mode-matrix.cnn.paper.toml"),
    ];
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = Config;
    type Args = NoArgs;

    fn validate(cfg: &Config, _: &NoArgs, drivers: &[DriverKind]) -> Result<()> {
        if drivers.contains(&DriverKind::Cluster) || drivers.len() != 1 {
            bail!("mode-matrix runs under one driver, sim (default) or threads: one process runs every mode, and its CSVs hold one driver's matrix (use the per-figure binaries for cluster runs)");
        }
        check(cfg)
    }

    fn run(run: &mut Run<'_, Self>) -> Result<()> {
        let (cfg, seed) = (run.cfg, run.seed);
        let drivers = run.drivers.to_vec();
        let learning = cfg.learning()?;
        let (workload, reference) = learning.build(cfg.workers, seed, run.data)?;
        let pb = run.progress((drivers.len() * cfg.modes.len() * cfg.patterns.len()) as u64);
        let mut o = Outcome::default();
        let on = Bench {
            workload: &workload,
            reference: reference.as_ref(),
            seed,
        };
        for &driver in &drivers {
            matrix(cfg, driver, &on, Some(&pb), &mut o)?;
        }
        pb.finish_and_clear();
        let out = run.out();
        out.csv("matrix.csv", &o.rows)?;
        out.csv("seed-ranking.csv", &o.ranks)?;
        out.csv("curves.csv", &o.curves)?;
        out.csv("reference.csv", &o.ref_rows)?;
        let mut notes = o.notes.clone();
        if let Some(grid) = &cfg.sensitivity {
            if drivers != [DriverKind::Sim] {
                notes.push(
                    "sensitivity: not run (the grid is re-derived with the simulator only)".into(),
                );
            } else if run.seed == run.common.seed {
                let s = sensitivity(cfg, &learning, grid, &o.claims, seed, run.data)?;
                s.write(run.out())?;
                notes.push(format!(
                    "sensitivity.csv (first seed): the claims re-derived at {} in {:?} and jitter_sigma (every pattern) in {:?}, {}, besides the configured {} and each pattern's own; verdicts that flip over the grid: {}",
                    learning.step_key(),
                    grid.eta0,
                    grid.jitter_sigma,
                    if grid.one_at_a_time { "one knob at a time" } else { "every combination" },
                    learning.step(),
                    s.fragile_note()
                ));
            }
        }
        for c in o.claims {
            run.out().claim(c);
        }
        notes.extend(reference.iter().map(|r| learning.reference_note(r)));
        notes.extend([
            format!("workload: {}", learning.label()),
            format!(
                "{} workers, {} iterations each ({} mini-batch updates per run, every family alike); baseline {}",
                cfg.workers,
                cfg.iterations,
                cfg.workers as u64 * cfg.iterations,
                cfg.baseline
            ),
            format!(
                "comparability: parameter-server and coordinator updates are combined by {} ({}); peers apply their own update and average with their in-neighbours, which moves the peers' average by the mean update; every family uses the same workload, mini-batches and step schedule",
                cfg.aggregation.label(),
                match cfg.aggregation {
                    Aggregation::Mean => "a BSP clock or round moves the model by the mean of the workers' updates; an asynchronous result by update / P, the step / P heuristic of ASYNC §6.1",
                    Aggregation::Sum => "every update is added in full (Bösen's INC), so the server families take P times the peers' step",
                }
            ),
            "ASYNC coordinator: async/bsp collects one round per step (SGD), every other barrier one result per step (ASGD); results are not weighted by staleness".into(),
            "max_staleness is in each family's unit: clocks (parameter server), iterations of the oldest update reduced (peers), versions committed since the task's (coordinator: one result per version under ASP/SSP/min-available, so async/ssp3 bounds results, not clocks)".into(),
            "bytes_per_node: bytes sent by all nodes over the node count (the server or coordinator counts as a node); backup workers' dropped updates are sent and counted".into(),
            "patterns: ".to_string()
                + &cfg
                    .patterns
                    .iter()
                    .map(|p| format!("{} ({})", p.name, p.about))
                    .collect::<Vec<_>>()
                    .join("; "),
            "sim driver: virtual time; the same seed gives the same CSV bytes".into(),
        ]);
        run.notes(notes);
        Ok(())
    }

    fn across_seeds(out: &mut ExperimentOutput) -> Result<()> {
        let mut seeds = Vec::new();
        for seed in out.seeds() {
            match out.seed_csv::<ranking::SeedCell>(seed, "matrix.csv")? {
                Some(rows) => seeds.push(rows),
                None => return Ok(()),
            }
        }
        out.csv("ranking.csv", &ranking::across_seeds(&seeds))
    }
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<ModeMatrix>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::sensitivity::Setting;
    use crate::studies::mode_matrix::learning::MatrixLearning;

    #[test]
    fn the_grid_crosses_its_knobs_or_varies_one_at_a_time() {
        let mut g = Grid {
            eta0: vec![25.0, 50.0, 100.0],
            jitter_sigma: vec![0.0, 0.2],
            one_at_a_time: false,
        };
        let values = |points: Vec<(Setting<'static>, bool, (Step, Jitter))>| {
            points
                .into_iter()
                .map(|(_, _, (s, j))| (s.value, j.0))
                .collect::<Vec<_>>()
        };
        // 50 is the configured step: not repeated
        let all = grid_points(50.0, &g);
        assert_eq!(all.len(), 9);
        assert!(all[0].1, "the headline first");
        assert_eq!(
            all[0].0,
            vec![
                ("eta0", "50".to_string()),
                ("jitter_sigma", "configured".to_string())
            ]
        );
        let all = values(all);
        assert_eq!(all[0], (None, None));
        assert!(all.contains(&(Some(25.0), Some(0.2))));
        g.one_at_a_time = true;
        let one = values(grid_points(50.0, &g));
        assert_eq!(
            one,
            vec![
                (None, None),
                (None, Some(0.0)),
                (None, Some(0.2)),
                (Some(25.0), None),
                (Some(100.0), None)
            ]
        );
    }

    #[test]
    fn ratios_count_a_run_that_never_reached_as_slowest() {
        assert_eq!(ratio(Some(1.0), Some(2.0)), Some(0.5));
        assert_eq!(ratio(Some(1.0), None), Some(0.0));
        assert_eq!(ratio(None, Some(1.0)), Some(f64::INFINITY));
        assert_eq!(ratio(None, None), None);
    }

    fn row(mode: &str, time: Option<f64>) -> MatrixRow {
        MatrixRow {
            pattern: "p".into(),
            mode: mode.into(),
            family: "ps",
            time_to_target_s: time,
            vs_baseline: None,
            iterations_to_target: None,
            makespan_s: 1.0,
            final_loss: 0.5,
            bytes_per_node: 1.0,
            mean_wait_us: 0.0,
            max_staleness: 0,
            dropped_updates: 0,
        }
    }

    /// A two-sided headline fails on either side, and when the compared mode never got there.
    #[test]
    fn two_sided_headlines_check_both_sides() {
        let h = Headline {
            name: "same".into(),
            paper: "-".into(),
            pattern: "p".into(),
            mode: "async/bsp".into(),
            than: "ps/bsp".into(),
            metric: Metric::TimeToTarget,
            max_ratio: 1.1,
            min_ratio: 0.909,
        };
        let verdict = |a: Option<f64>, b: Option<f64>| {
            headline_claim(&h, &[row("async/bsp", a), row("ps/bsp", b)], "t").verdict
        };
        use bench_core::claims::Verdict;
        assert_eq!(verdict(Some(1.0), Some(1.05)), Verdict::Pass);
        assert_eq!(verdict(Some(1.0), Some(2.0)), Verdict::Fail);
        assert_eq!(verdict(Some(2.0), Some(1.0)), Verdict::Fail);
        assert_eq!(verdict(Some(1.0), None), Verdict::Fail);
        let one_sided = Headline {
            min_ratio: 0.0,
            max_ratio: 1.0,
            ..h.clone()
        };
        let c = headline_claim(
            &one_sided,
            &[row("async/bsp", Some(1.0)), row("ps/bsp", None)],
            "t",
        );
        assert_eq!(
            c.verdict,
            Verdict::Pass,
            "a mode that gets there beats one that never does"
        );
    }

    #[test]
    fn the_built_in_configs_pass_their_checks() {
        for text in [ModeMatrix::QUICK, ModeMatrix::PAPER] {
            let cfg: Config = toml::from_str(text).unwrap();
            check(&cfg).unwrap();
            assert!(matches!(cfg.learning(), Ok(MatrixLearning::Svm { .. })));
        }
    }

    /// The other workloads' configurations (`make fig-mode-matrix CONFIG=...` for least
    /// squares and MF, `make fig-mode-matrix-cnn` for the CNN) pass their checks in every build.
    #[test]
    fn the_ls_mf_and_cnn_configs_pass_their_checks() {
        let ls: Config =
            toml::from_str(include_str!("../../../configs/mode-matrix.ls.quick.toml")).unwrap();
        check(&ls).unwrap();
        assert!(matches!(ls.learning(), Ok(MatrixLearning::Ls(_))));
        let mf: Config =
            toml::from_str(include_str!("../../../configs/mode-matrix.mf.quick.toml")).unwrap();
        check(&mf).unwrap();
        assert!(matches!(mf.learning(), Ok(MatrixLearning::Mf(_))));
        for text in [
            include_str!("../../../configs/mode-matrix.cnn.quick.toml"),
            include_str!("../../../configs/mode-matrix.cnn.paper.toml"),
        ] {
            let cnn: Config = toml::from_str(text).unwrap();
            check(&cnn).unwrap();
            assert!(matches!(cnn.learning(), Ok(MatrixLearning::Cnn(_))));
        }
    }
}
