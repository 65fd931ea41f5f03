//! mode-matrix: every synchronization mode of the three families on one workload, one network
//! and the same straggler patterns (not a paper figure: the table no single paper has). For
//! each (pattern, mode): time to an optimum-relative loss target, iterations, bytes per node,
//! mean wait and the largest staleness or gap observed; the time relative to a baseline mode
//! (BSP) in the same pattern, a per-pattern ranking, and claims that restate the papers'
//! headlines inside the matrix.

use anyhow::{bail, Result};
use bench_core::claims::Claim;
use bench_core::driver::{ComputeModel, DriverKind, NetworkModel};
use bench_core::metrics::{ProgressRow, RunRecords};
use bench_core::straggler::StragglerConfig;
use bench_core::workload::Workload;
use bench_core::workload::{Aggregation, SvmConfig};
use experiments::data_source::DataSource;
use experiments::experiment::{self, Experiment, NoArgs, Run};
use experiments::matrix_mode::{MatrixMode, RunShape};
use experiments::runner::{RunSettings, ThreadsSection};
use experiments::sensitivity::{Sensitivity, Setting};
use experiments::svm_setup::{
    comparison_target, loss_spans, near_optimum_claim, reference_rows, Reference, ReferenceRow,
    SparseData,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;

const FIGURE: &str = "mode-matrix";

struct ModeMatrix;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// Workers (peers; the parameter server and the coordinator are one node besides them).
    workers: usize,
    /// Iterations per worker: parameter-server clocks, coordinator tasks per worker, peer
    /// iterations. Every run does `workers x iterations` mini-batch updates.
    iterations: u64,
    /// Evaluate every this many updates applied (results committed; peer reduces).
    eval_every: u64,
    /// A run reaches the target at the first evaluation whose loss is at or below it and stays
    /// there for this many evaluations after (all that remain, near the end): a noisy curve
    /// (stale modes at a large step) dipping under the target once does not count.
    hold_evals: usize,
    /// How parameter-server and coordinator updates are combined (`mean` makes all three
    /// families take the same step per iteration; `sum` is Bösen's INC).
    aggregation: Aggregation,
    /// The modes, as `ps/<mode>`, `async/<barrier>`, `peer/<graph>/<setting>`.
    modes: Vec<String>,
    /// The mode every other is compared with, pattern by pattern (the heatmap's 1.0).
    baseline: String,
    /// Straggler patterns, in column order.
    patterns: Vec<Pattern>,
    /// Paper headlines restated inside the matrix (one claim each).
    #[serde(default)]
    headlines: Vec<Headline>,
    /// Knobs the verdicts are re-derived over (sensitivity.csv; simulator, first seed).
    #[serde(default)]
    sensitivity: Option<Grid>,
    data: SparseData,
    svm: SvmConfig,
    compute: ComputeModel,
    network: NetworkModel,
    threads: ThreadsSection,
}

/// `[sensitivity]`: knobs no paper pins down for this matrix, each a list of values besides
/// the configured ones.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Grid {
    /// SVM initial steps (`svm.eta0`) to try: stale modes gain or lose most with the step.
    #[serde(default)]
    eta0: Vec<f64>,
    /// Log-normal jitter levels to try, set in every pattern at once.
    #[serde(default)]
    jitter_sigma: Vec<f64>,
}

/// One straggler pattern: a column of the matrix.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pattern {
    /// Column name (`none`, `one-slow-4x`, ...).
    name: String,
    /// Where the pattern comes from.
    about: String,
    /// The stragglers (the `[stragglers]` section of other experiments).
    stragglers: StragglerConfig,
}

/// What a headline compares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Metric {
    /// Time to the target loss (a run that never reaches it is slower than any that does).
    #[default]
    TimeToTarget,
    /// Bytes sent per node over the whole run (same iterations for every mode).
    BytesPerNode,
}

/// "Under `pattern`, `mode` beats `than`": `metric(mode) / metric(than) < max_ratio`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Headline {
    /// Short name: the claim id is `mode-matrix/<name>`.
    name: String,
    /// What the paper reports, and where.
    paper: String,
    /// The pattern it is checked under.
    pattern: String,
    /// The mode expected to win.
    mode: String,
    /// The mode it is compared with.
    than: String,
    /// What is compared.
    #[serde(default)]
    metric: Metric,
    /// The ratio the winner must stay below (1.0: strictly better).
    #[serde(default = "one")]
    max_ratio: f64,
}

fn one() -> f64 {
    1.0
}

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
    /// Largest staleness (parameter server, coordinator) or iteration gap (peers) of a read.
    max_staleness: u64,
    /// Updates the server dropped as late (backup workers).
    dropped_updates: u64,
}

/// Per pattern, the modes from fastest to slowest to the target.
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

fn parse_modes(cfg: &Config) -> Result<Vec<MatrixMode>> {
    cfg.modes
        .iter()
        .map(|m| MatrixMode::parse(m, cfg.iterations))
        .collect()
}

fn check(cfg: &Config) -> Result<()> {
    if cfg.workers < 2 || cfg.iterations == 0 || cfg.eval_every == 0 {
        bail!("workers must be >= 2, iterations and eval_every >= 1");
    }
    let modes = parse_modes(cfg)?;
    let labels: Vec<String> = modes.iter().map(MatrixMode::label).collect();
    let mut seen = BTreeSet::new();
    for (m, l) in modes.iter().zip(&labels) {
        if !seen.insert(l.clone()) {
            bail!("modes: {l} is listed twice");
        }
        m.validate(cfg.workers, cfg.iterations)?;
    }
    let known = |m: &str, what: &str| -> Result<()> {
        let l = MatrixMode::parse(m, cfg.iterations)?.label();
        if !labels.contains(&l) {
            bail!("{what}: mode {m} is not among the modes");
        }
        Ok(())
    };
    known(&cfg.baseline, "baseline")?;
    let mut names = BTreeSet::new();
    if cfg.patterns.is_empty() {
        bail!("patterns: at least one straggler pattern is needed");
    }
    for p in &cfg.patterns {
        if !names.insert(p.name.as_str()) {
            bail!("patterns: {} is listed twice", p.name);
        }
        for w in 0..cfg.workers {
            p.stragglers
                .sampler(cfg.workers, w, 0)
                .map_err(|e| anyhow::anyhow!("pattern {}: {e}", p.name))?;
        }
    }
    let mut ids = BTreeSet::new();
    for h in &cfg.headlines {
        let what = format!("headline {}", h.name);
        if !ids.insert(h.name.as_str()) {
            bail!("{what} is listed twice");
        }
        if !names.contains(h.pattern.as_str()) {
            bail!("{what}: pattern {} is not among the patterns", h.pattern);
        }
        known(&h.mode, &what)?;
        known(&h.than, &what)?;
        if !(h.max_ratio > 0.0 && h.max_ratio.is_finite()) {
            bail!("{what}: max_ratio must be > 0, got {}", h.max_ratio);
        }
    }
    cfg.data.validate(cfg.workers)?;
    cfg.svm.validate()?;
    cfg.network.validate(cfg.workers + 1)?;
    Ok(())
}

/// Mean wait per iteration in microseconds: the coordinator's workers wait for tasks, the
/// other families' for models or updates.
fn mean_wait_us(r: &RunRecords) -> f64 {
    if !r.waits.is_empty() {
        return r.waits.iter().map(|w| w.wait as f64).sum::<f64>() / r.waits.len() as f64 * 1e-3;
    }
    r.mean_wait() * 1e-3
}

/// The evaluation at which `progress` reaches `target` and holds it for `hold` more
/// evaluations (or all that remain).
fn reached(progress: &[ProgressRow], target: f64, hold: usize) -> Option<&ProgressRow> {
    (0..progress.len())
        .find(|&i| {
            progress[i..progress.len().min(i + 1 + hold)]
                .iter()
                .all(|p| p.loss <= target)
        })
        .map(|i| &progress[i])
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
    let statement = match h.metric {
        Metric::TimeToTarget => format!(
            "under {}, {} reaches the target in less than {} x the time of {}",
            h.pattern, h.mode, h.max_ratio, h.than
        ),
        Metric::BytesPerNode => format!(
            "under {}, {} sends less than {} x the bytes per node of {}",
            h.pattern, h.mode, h.max_ratio, h.than
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
        r.is_some_and(|r| r < h.max_ratio),
    );
    match r {
        Some(r) if r.is_finite() => c.with_value(r),
        _ => c,
    }
}

impl Experiment for ModeMatrix {
    const BINARY: &'static str = FIGURE;
    const ABOUT: &'static str = "Every synchronization mode (parameter server BSP/ASP/SSP/ESSP/DSSP/backup workers, ASYNC's coordinator with its barrier predicates, decentralized standard/NOTIFY-ACK/backup/staleness/skipping on several graphs, stochastic reduce, all-reduce) on one workload, network and set of straggler patterns. Writes results/mode-matrix/: matrix.csv (time to an optimum-relative target, iterations, bytes per node, mean wait, max staleness per mode and pattern), ranking.csv, curves.csv, reference.csv, claims.csv (paper headlines restated inside the matrix), manifest.json. Modes, patterns and headlines are configuration: run it on your own workload, network numbers and stragglers with --config.";
    const QUICK: &'static str = include_str!("../../configs/mode-matrix.quick.toml");
    const PAPER: &'static str = include_str!("../../configs/mode-matrix.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = Config;
    type Args = NoArgs;

    fn validate(cfg: &Config, _: &NoArgs, drivers: &[DriverKind]) -> Result<()> {
        if drivers.contains(&DriverKind::Cluster) {
            bail!("mode-matrix runs under the sim and threads drivers (one process runs every mode; use the per-figure binaries for cluster runs)");
        }
        check(cfg)
    }

    fn run(run: &mut Run<'_, Self>) -> Result<()> {
        let (cfg, seed) = (run.cfg, run.seed);
        let drivers = run.drivers.to_vec();
        let workload = cfg.data.svm_workload(cfg.svm, seed, run.data)?;
        let reference = cfg.data.reference(cfg.svm, seed, run.data);
        let pb = run.progress((drivers.len() * cfg.modes.len() * cfg.patterns.len()) as u64);
        let mut o = Outcome::default();
        for &driver in &drivers {
            matrix(
                cfg,
                driver,
                &workload,
                reference.as_ref(),
                seed,
                drivers.len() > 1,
                Some(&pb),
                &mut o,
            )?;
        }
        pb.finish_and_clear();
        let mut notes = o.notes.clone();
        if let Some(grid) = &cfg.sensitivity {
            if run.seed == run.common.seed && drivers == [DriverKind::Sim] {
                let s = sensitivity(cfg, grid, &o.claims, seed, run.data)?;
                s.write(run.out())?;
                notes.push(format!(
                    "sensitivity.csv (first seed): the claims re-derived at svm.eta0 in {:?} and jitter_sigma (every pattern) in {:?}, besides the configured {} and each pattern's own; verdicts that flip over the grid: {}",
                    grid.eta0,
                    grid.jitter_sigma,
                    cfg.svm.eta0,
                    s.fragile_note()
                ));
            }
        }
        let out = run.out();
        out.csv("matrix.csv", &o.rows)?;
        out.csv("ranking.csv", &o.ranks)?;
        out.csv("curves.csv", &o.curves)?;
        out.csv("reference.csv", &o.ref_rows)?;
        for c in o.claims {
            out.claim(c);
        }
        notes.extend(reference.iter().map(|r| r.note("svm")));
        notes.extend([
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
                    Aggregation::Mean => "a BSP clock or round moves the model by the mean of the workers' updates; an asynchronous result by update / P, async.txt's step / P heuristic",
                    Aggregation::Sum => "every update is added in full (Bösen's INC), so the server families take P times the peers' step",
                }
            ),
            "ASYNC coordinator: async/bsp collects one round per step (SGD), every other barrier one result per step (ASGD); results are not weighted by staleness".into(),
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
}

/// What one matrix (every driver's) produced.
#[derive(Default)]
struct Outcome {
    rows: Vec<MatrixRow>,
    ranks: Vec<RankRow>,
    curves: Vec<CurveRow>,
    ref_rows: Vec<ReferenceRow>,
    claims: Vec<Claim>,
    notes: Vec<String>,
}

/// Runs every (pattern, mode) of `cfg` under `driver` on `workload` and adds the rows, the
/// ranking, the curves and the claims to `o` (claim ids get the driver's name when
/// `by_driver`).
///
/// # Errors
/// The first run that fails.
#[allow(clippy::too_many_arguments)]
fn matrix(
    cfg: &Config,
    driver: DriverKind,
    workload: &Arc<dyn Workload>,
    reference: Option<&Reference>,
    seed: u64,
    by_driver: bool,
    pb: Option<&indicatif::ProgressBar>,
    o: &mut Outcome,
) -> Result<()> {
    let modes = parse_modes(cfg)?;
    let baseline = MatrixMode::parse(&cfg.baseline, cfg.iterations)?.label();
    let mut runs: Vec<(String, String, RunRecords)> = Vec::new();
    for p in &cfg.patterns {
        let settings = RunSettings {
            network: cfg.network.clone(),
            compute: cfg.compute,
            stragglers: p.stragglers.clone(),
            eval_every: cfg.eval_every,
            threads: cfg.threads.clone(),
            iteration_ns: None,
            wire_bytes: None,
        };
        for m in &modes {
            if let Some(pb) = pb {
                pb.set_message(format!("{} {} {}", driver.label(), p.name, m.label()));
            }
            let rec = m.run(
                driver,
                &RunShape {
                    workers: cfg.workers,
                    iterations: cfg.iterations,
                    aggregation: cfg.aggregation,
                },
                &settings,
                workload,
                seed,
            )?;
            runs.push((p.name.clone(), m.label(), rec));
            if let Some(pb) = pb {
                pb.inc(1);
            }
        }
    }
    let progress: Vec<&[_]> = runs.iter().map(|r| &r.2.progress[..]).collect();
    let (target, how) = comparison_target(reference, &progress);
    let spans = loss_spans(
        runs.iter()
            .map(|r| (format!("{} {}", r.0, r.1), &r.2.progress[..])),
    );
    o.ref_rows
        .extend(reference_rows(driver.label(), reference, &spans));
    let mut rows = Vec::new();
    for (pattern, label, rec) in &runs {
        let m = modes
            .iter()
            .find(|m| &m.label() == label)
            .expect("every run is of a configured mode");
        let hit = reached(&rec.progress, target, cfg.hold_evals);
        rows.push(MatrixRow {
            pattern: pattern.clone(),
            mode: label.clone(),
            family: m.family(),
            time_to_target_s: hit.map(|p| p.time),
            vs_baseline: None,
            iterations_to_target: hit.map(|p| p.iteration),
            makespan_s: rec.makespan as f64 * 1e-9,
            final_loss: rec.progress.last().map_or(f64::NAN, |p| p.loss),
            bytes_per_node: rec.bytes_sent.iter().sum::<u64>() as f64 / m.nodes(cfg.workers) as f64,
            mean_wait_us: mean_wait_us(rec),
            max_staleness: rec
                .iterations
                .iter()
                .map(|r| r.staleness)
                .max()
                .unwrap_or(0),
            dropped_updates: rec.dropped_updates,
        });
        o.curves.extend(rec.progress.iter().map(|p| CurveRow {
            pattern: pattern.clone(),
            mode: label.clone(),
            time: p.time,
            iteration: p.iteration,
            loss: p.loss,
        }));
    }
    let suffix = |id: String| {
        if by_driver {
            format!("{id}/{}", driver.label())
        } else {
            id
        }
    };
    for p in &cfg.patterns {
        let base = rows
            .iter()
            .find(|r| r.pattern == p.name && r.mode == baseline)
            .and_then(|r| r.time_to_target_s);
        let mut in_pattern: Vec<&mut MatrixRow> =
            rows.iter_mut().filter(|r| r.pattern == p.name).collect();
        for r in in_pattern.iter_mut() {
            r.vs_baseline = match (r.time_to_target_s, base) {
                (Some(t), Some(b)) if b > 0.0 => Some(t / b),
                _ => None,
            };
        }
        in_pattern.sort_by(|a, b| {
            let key = |r: &MatrixRow| r.time_to_target_s.unwrap_or(f64::INFINITY);
            key(a).total_cmp(&key(b))
        });
        for (i, r) in in_pattern.iter().enumerate() {
            o.ranks.push(RankRow {
                pattern: p.name.clone(),
                rank: i + 1,
                mode: r.mode.clone(),
                time_to_target_s: r.time_to_target_s,
                vs_baseline: r.vs_baseline,
            });
        }
        let in_p = loss_spans(
            runs.iter()
                .filter(|r| r.0 == p.name)
                .map(|r| (r.1.clone(), &r.2.progress[..])),
        );
        o.claims.push(near_optimum_claim(
            suffix(format!("{FIGURE}/best-run-near-optimum/{}", p.name)),
            reference,
            &in_p,
        ));
    }
    for h in &cfg.headlines {
        let mut c = headline_claim(h, &rows, &format!("loss {target:.4}"));
        c.claim_id = suffix(c.claim_id);
        o.claims.push(c);
    }
    o.notes.push(format!(
        "{}: {how} = {target:.5}; a run reaches it at the first evaluation at or below it that the next {} evaluations stay at or below",
        driver.label(),
        cfg.hold_evals
    ));
    o.rows.extend(rows);
    Ok(())
}

/// Re-derives the claims (simulator, first seed) at every combination of the grid's step sizes
/// and jitter levels.
///
/// # Errors
/// Any run's error.
fn sensitivity(
    cfg: &Config,
    grid: &Grid,
    headline: &[Claim],
    seed: u64,
    data: &DataSource,
) -> Result<Sensitivity> {
    let mut etas = vec![None];
    etas.extend(
        grid.eta0
            .iter()
            .filter(|&&e| e != cfg.svm.eta0)
            .map(|&e| Some(e)),
    );
    let mut jitters = vec![None];
    jitters.extend(grid.jitter_sigma.iter().map(|&j| Some(j)));
    let mut points = Vec::new();
    for &eta in &etas {
        for &jitter in &jitters {
            let setting: Setting<'_> = vec![
                ("eta0", eta.unwrap_or(cfg.svm.eta0).to_string()),
                (
                    "jitter_sigma",
                    jitter.map_or("configured".to_string(), |j| j.to_string()),
                ),
            ];
            points.push((setting, eta.is_none() && jitter.is_none(), (eta, jitter)));
        }
    }
    Sensitivity::sweep(
        "mode-matrix sensitivity",
        points,
        headline,
        |&(eta, jitter), _| {
            let mut c = cfg.clone();
            if let Some(e) = eta {
                c.svm.eta0 = e;
            }
            if let Some(j) = jitter {
                for p in &mut c.patterns {
                    p.stragglers.jitter_sigma = j;
                }
            }
            let workload = c.data.svm_workload(c.svm, seed, data)?;
            let reference = c.data.reference(c.svm, seed, data);
            let mut o = Outcome::default();
            matrix(
                &c,
                DriverKind::Sim,
                &workload,
                reference.as_ref(),
                seed,
                false,
                None,
                &mut o,
            )?;
            Ok(o.claims)
        },
    )
}

fn main() -> std::process::ExitCode {
    experiment::main::<ModeMatrix>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_count_a_run_that_never_reached_as_slowest() {
        assert_eq!(ratio(Some(1.0), Some(2.0)), Some(0.5));
        assert_eq!(ratio(Some(1.0), None), Some(0.0));
        assert_eq!(ratio(None, Some(1.0)), Some(f64::INFINITY));
        assert_eq!(ratio(None, None), None);
    }

    #[test]
    fn a_dip_under_the_target_is_not_reaching_it() {
        let p: Vec<ProgressRow> = [0.9, 0.4, 0.8, 0.45, 0.4, 0.42, 0.3]
            .iter()
            .enumerate()
            .map(|(i, &loss)| ProgressRow {
                time: i as f64,
                iteration: i as f64,
                loss,
                accuracy: f64::NAN,
            })
            .collect();
        assert_eq!(reached(&p, 0.5, 0).map(|p| p.time), Some(1.0));
        assert_eq!(reached(&p, 0.5, 2).map(|p| p.time), Some(3.0));
        // near the end, what remains must stay under
        assert_eq!(reached(&p, 0.35, 5).map(|p| p.time), Some(6.0));
        assert_eq!(reached(&p, 0.2, 1), None);
    }

    #[test]
    fn the_built_in_configs_pass_their_checks() {
        for text in [ModeMatrix::QUICK, ModeMatrix::PAPER] {
            let cfg: Config = toml::from_str(text).unwrap();
            check(&cfg).unwrap();
        }
    }
}
