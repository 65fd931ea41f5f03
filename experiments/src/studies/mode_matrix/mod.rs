//! mode-matrix: every synchronization mode of the three families on one workload, one network
//! and the same straggler patterns (not a paper figure: the table no single paper has). For
//! each (pattern, mode): time to an optimum-relative loss target, iterations, bytes per node,
//! mean wait and the largest staleness or gap observed; the time relative to a baseline mode
//! (BSP) in the same pattern, a per-pattern ranking, and claims that restate the papers'
//! headlines inside the matrix.

pub mod learning;

use crate::harness::data_source::DataSource;
use crate::harness::experiment::{self, Experiment, NoArgs, Run};
use crate::harness::parallel::map_runs;
use crate::harness::runner::{RunSettings, ThreadsSection};
use crate::judge::reference::{Reference, ReferenceRow};
use crate::judge::sensitivity::{two_knob_points, Knob, KnobValue, Sensitivity, Setting};
use crate::judge::verdict::Judge;
use crate::runs::named_mode::{mean_wait_us, MatrixMode, RunShape};
use crate::runs::peers::PeerCnn;
use crate::studies::mode_matrix::learning::{MatrixLearning, MatrixLs, MatrixMf};
use crate::workloads::svm::SparseData;
use anyhow::{bail, Result};
use bench_core::claims::Claim;
use bench_core::driver::{ComputeModel, DriverKind, NetworkModel};
use bench_core::metrics::RunRecords;
use bench_core::straggler::StragglerConfig;
use bench_core::workload::Workload;
use bench_core::workload::{Aggregation, SvmConfig};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

const FIGURE: &str = "mode-matrix";

struct ModeMatrix;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// Workers (peers; the parameter server and the coordinator are one node besides them).
    workers: usize,
    /// Iterations per worker: parameter-server clocks, peer iterations; the coordinator runs
    /// `workers x iterations` tasks, handed to whichever workers its barrier admits.
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
    /// The SVM's data (with `[svm]`: the default workload; see [`MatrixLearning`]).
    #[serde(default)]
    data: Option<SparseData>,
    /// The SVM's loss and step (with `[data]`).
    #[serde(default)]
    svm: Option<SvmConfig>,
    /// Least squares instead of the SVM.
    #[serde(default)]
    ls: Option<MatrixLs>,
    /// Matrix factorisation instead of the SVM.
    #[serde(default)]
    mf: Option<MatrixMf>,
    /// A CNN instead of the SVM (feature `cnn`).
    #[serde(default)]
    cnn: Option<PeerCnn>,
    compute: ComputeModel,
    network: NetworkModel,
    threads: ThreadsSection,
}

impl Config {
    /// The workload the sections name (`[data]` with `[svm]`, `[ls]`, `[mf]` or `[cnn]`).
    ///
    /// # Errors
    /// None of them, or more than one.
    fn learning(&self) -> Result<MatrixLearning> {
        MatrixLearning::from_sections(
            self.data.as_ref(),
            self.svm.as_ref(),
            self.ls.as_ref(),
            self.mf.as_ref(),
            self.cnn.as_ref(),
        )
    }
}

/// `[sensitivity]`: knobs no paper pins down for this matrix, each a list of values besides
/// the configured ones.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Grid {
    /// Step sizes to try (the workload's: `svm.eta0`, `ls.settings.step`, `mf.settings.step`
    /// or `cnn.net.lr`;
    /// the key keeps the SVM's name): stale modes gain or lose most with the step.
    #[serde(default)]
    eta0: Vec<f64>,
    /// Log-normal jitter levels to try, set in every pattern at once.
    #[serde(default)]
    jitter_sigma: Vec<f64>,
    /// Vary one knob at a time (each step at the configured jitter, each jitter at the
    /// configured step: 4 extra matrices for two values each) instead of every combination
    /// (8). The quick configuration does, to keep the reproduction within its time; the paper
    /// configuration crosses them, which also shows the knobs' interaction.
    #[serde(default)]
    one_at_a_time: bool,
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
    /// And above (default 0: one-sided). With both, the claim is that the two agree.
    #[serde(default)]
    min_ratio: f64,
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
    /// Largest staleness of a read, in the family's own unit: clocks (parameter server),
    /// iterations of the oldest update reduced (peers), model versions committed since the
    /// task's (coordinator: one result per version under ASP/SSP, one round under BSP).
    max_staleness: u64,
    /// Updates dropped as late (backup workers: by the server, or by a peer of its
    /// in-neighbours').
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
        bail!(
            "workers must be >= 2 and iterations, eval_every >= 1; got workers = {}, iterations = {}, eval_every = {}",
            cfg.workers,
            cfg.iterations,
            cfg.eval_every
        );
    }
    let modes = parse_modes(cfg)?;
    let families: BTreeSet<&str> = modes.iter().map(MatrixMode::family).collect();
    // Sum is what the server families share (every update added in full); only the peers'
    // averaging moves the model by the mean.
    if cfg.aggregation == Aggregation::Sum && families.contains("peer") && families.len() > 1 {
        bail!("aggregation = \"sum\" makes the parameter server and the coordinator take {} times the peers' step, so their times are not comparable with the peers'; use \"mean\", or leave the peers out", cfg.workers);
    }
    if let Some(g) = &cfg.sensitivity {
        if let Some(e) = g.eta0.iter().find(|e| !(**e > 0.0 && e.is_finite())) {
            bail!("sensitivity.eta0 values must be > 0, got {e}");
        }
        if let Some(j) = g
            .jitter_sigma
            .iter()
            .find(|j| !(**j >= 0.0 && j.is_finite()))
        {
            bail!("sensitivity.jitter_sigma values must be >= 0, got {j}");
        }
    }
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
        if !(h.min_ratio >= 0.0 && h.min_ratio < h.max_ratio) {
            bail!(
                "{what}: min_ratio must be in [0, max_ratio = {}), got {}",
                h.max_ratio,
                h.min_ratio
            );
        }
    }
    cfg.learning()?.validate(cfg.workers)?;
    cfg.network.validate(cfg.workers + 1)?;
    Ok(())
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
    const ABOUT: &'static str = "Every synchronization mode (parameter server BSP/ASP/SSP/ESSP/DSSP/backup workers, ASYNC's coordinator with its barrier predicates, decentralized standard/NOTIFY-ACK/backup/staleness/skipping on several graphs, stochastic reduce, all-reduce) on one workload, network and set of straggler patterns. Writes results/mode-matrix/: matrix.csv (time to an optimum-relative target, iterations, bytes per node, mean wait, max staleness per mode and pattern), ranking.csv, curves.csv, reference.csv, claims.csv (paper headlines restated inside the matrix), manifest.json. Modes, patterns and headlines are configuration: run it on your own workload, network numbers and stragglers with --config.";
    const QUICK: &'static str = include_str!("../../../configs/mode-matrix.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/mode-matrix.paper.toml");
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
        out.csv("ranking.csv", &o.ranks)?;
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
                    Aggregation::Mean => "a BSP clock or round moves the model by the mean of the workers' updates; an asynchronous result by update / P, async.txt's step / P heuristic",
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

/// What a matrix runs on, whatever the driver: the workload, its reference (none: the
/// no-reference rule) and the seed.
struct Bench<'a> {
    workload: &'a Arc<dyn Workload>,
    reference: Option<&'a Reference>,
    seed: u64,
}

/// One cell of the matrix: a straggler pattern (its name) and a mode, keyed in the reference
/// rows' spans as `<pattern> <mode>`.
#[derive(Debug, Clone, PartialEq)]
struct Cell<'a> {
    pattern: &'a str,
    mode: String,
}

impl fmt::Display for Cell<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.pattern, self.mode)
    }
}

/// One cell's run: its pattern, its mode and what it recorded.
struct CellRun<'a> {
    pattern: &'a str,
    mode: &'a MatrixMode,
    rec: RunRecords,
}

/// Runs every (pattern, mode) of `cfg` under `driver` on `on`'s workload, in cell order.
///
/// # Errors
/// The first run that fails.
fn run_cells<'a>(
    cfg: &'a Config,
    modes: &'a [MatrixMode],
    driver: DriverKind,
    on: &Bench<'_>,
    pb: Option<&indicatif::ProgressBar>,
) -> Result<Vec<CellRun<'a>>> {
    let settings: Vec<RunSettings> = cfg
        .patterns
        .iter()
        .map(|p| RunSettings {
            network: cfg.network.clone(),
            compute: cfg.compute,
            stragglers: p.stragglers.clone(),
            eval_every: cfg.eval_every,
            threads: cfg.threads.clone(),
            iteration_ns: None,
            wire_bytes: None,
        })
        .collect();
    let cells: Vec<(usize, &MatrixMode)> = (0..cfg.patterns.len())
        .flat_map(|p| modes.iter().map(move |m| (p, m)))
        .collect();
    // Simulator cells share the cores (crate::harness::parallel), in cell order either way; cells of a
    // workload that keeps per-worker state (a CNN's momentum) share that state, so they run
    // one after another (each run starts its workers' state afresh at their update 0).
    let parallel = driver == DriverKind::Sim && !on.workload.keeps_worker_state();
    let recs = map_runs(parallel, &cells, |&(p, m)| {
        if let Some(pb) = pb {
            pb.set_message(format!(
                "{} {} {}",
                driver.label(),
                cfg.patterns[p].name,
                m.label()
            ));
        }
        let rec = m.run(
            driver,
            &RunShape {
                workers: cfg.workers,
                iterations: cfg.iterations,
                aggregation: cfg.aggregation,
            },
            &settings[p],
            on.workload,
            on.seed,
        )?;
        if let Some(pb) = pb {
            pb.inc(1);
        }
        Ok(rec)
    })?;
    Ok(cells
        .iter()
        .zip(recs)
        .map(|(&(p, mode), rec)| CellRun {
            pattern: &cfg.patterns[p].name,
            mode,
            rec,
        })
        .collect())
}

/// Ranks the rows of pattern `pattern` by time to the target (then final loss), each against
/// the baseline mode's time, into `ranks`.
fn rank(rows: &mut [MatrixRow], pattern: &str, baseline: &str, ranks: &mut Vec<RankRow>) {
    let base = rows
        .iter()
        .find(|r| r.pattern == pattern && r.mode == baseline)
        .and_then(|r| r.time_to_target_s);
    let mut in_pattern: Vec<&mut MatrixRow> =
        rows.iter_mut().filter(|r| r.pattern == pattern).collect();
    for r in in_pattern.iter_mut() {
        r.vs_baseline = match (r.time_to_target_s, base) {
            (Some(t), Some(b)) if b > 0.0 => Some(t / b),
            _ => None,
        };
    }
    in_pattern.sort_by(|a, b| {
        let key = |r: &MatrixRow| r.time_to_target_s.unwrap_or(f64::INFINITY);
        key(a)
            .total_cmp(&key(b))
            .then(a.final_loss.total_cmp(&b.final_loss))
    });
    // modes that never reached the target share the rank after the last one that did
    let reached_count = in_pattern
        .iter()
        .filter(|r| r.time_to_target_s.is_some())
        .count();
    for (i, r) in in_pattern.iter().enumerate() {
        ranks.push(RankRow {
            pattern: pattern.to_string(),
            rank: if r.time_to_target_s.is_some() {
                i + 1
            } else {
                reached_count + 1
            },
            mode: r.mode.clone(),
            time_to_target_s: r.time_to_target_s,
            vs_baseline: r.vs_baseline,
        });
    }
}

/// Runs every (pattern, mode) of `cfg` under `driver` on `on` and adds the rows, the ranking,
/// the curves and the claims to `o`.
///
/// # Errors
/// The first run that fails.
fn matrix(
    cfg: &Config,
    driver: DriverKind,
    on: &Bench<'_>,
    pb: Option<&indicatif::ProgressBar>,
    o: &mut Outcome,
) -> Result<()> {
    let modes = parse_modes(cfg)?;
    let baseline = MatrixMode::parse(&cfg.baseline, cfg.iterations)?.label();
    let runs = run_cells(cfg, &modes, driver, on, pb)?;
    let judge = Judge::new(on.reference).holding(cfg.hold_evals);
    let judged = judge.judge(runs.iter().map(|r| {
        let cell = Cell {
            pattern: r.pattern,
            mode: r.mode.label(),
        };
        (cell, &r.rec.progress[..])
    }));
    let target = judged.target;
    o.ref_rows.extend(judged.reference_rows(driver.label()));
    let mut rows = Vec::new();
    for (run, j) in runs.iter().zip(&judged.runs) {
        let (m, rec, hit) = (run.mode, &run.rec, j.crossing);
        rows.push(MatrixRow {
            pattern: run.pattern.to_string(),
            mode: j.key.mode.clone(),
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
            pattern: run.pattern.to_string(),
            mode: j.key.mode.clone(),
            time: p.time,
            iteration: p.iteration,
            loss: p.loss,
        }));
    }
    for p in &cfg.patterns {
        rank(&mut rows, &p.name, &baseline, &mut o.ranks);
        let in_pattern = judge.judge(
            runs.iter()
                .filter(|r| r.pattern == p.name)
                .map(|r| (r.mode.label(), &r.rec.progress[..])),
        );
        o.claims.push(
            in_pattern.near_optimum_claim(format!("{FIGURE}/best-run-near-optimum/{}", p.name)),
        );
    }
    for h in &cfg.headlines {
        o.claims
            .push(headline_claim(h, &rows, &format!("loss {target:.4}")));
    }
    o.notes.push(format!(
        "{}: {} = {target:.5}; a run reaches it at the first evaluation at or below it that the next {} evaluations stay at or below",
        driver.label(),
        judged.rule,
        cfg.hold_evals
    ));
    o.rows.extend(rows);
    Ok(())
}

/// A step size of the grid: the workload's configured one (`value` None) or another.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Step {
    value: Option<f64>,
    configured: f64,
}

impl KnobValue for Step {
    fn setting(&self) -> String {
        self.value.unwrap_or(self.configured).to_string()
    }
}

/// A jitter level of the grid: each pattern's own (None) or one set in every pattern at once.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Jitter(Option<f64>);

impl KnobValue for Jitter {
    fn setting(&self) -> String {
        self.0.map_or("configured".to_string(), |j| j.to_string())
    }
}

/// The grid's points: every combination of the step sizes and jitter levels, or with
/// `one_at_a_time` each knob varied alone; the configured point (the headline) first.
fn grid_points(configured: f64, grid: &Grid) -> Vec<(Setting<'static>, bool, (Step, Jitter))> {
    let step = |value| Step { value, configured };
    let mut steps = vec![step(None)];
    steps.extend(
        grid.eta0
            .iter()
            .filter(|&&e| e != configured)
            .map(|&e| step(Some(e))),
    );
    let mut jitters = vec![Jitter(None)];
    jitters.extend(grid.jitter_sigma.iter().map(|&j| Jitter(Some(j))));
    two_knob_points(
        Knob {
            name: "eta0",
            values: &steps,
            configured: step(None),
        },
        Knob {
            name: "jitter_sigma",
            values: &jitters,
            configured: Jitter(None),
        },
        grid.one_at_a_time,
    )
}

/// Re-derives the claims (simulator, first seed) at the grid's step sizes and jitter levels.
///
/// # Errors
/// Any run's error.
fn sensitivity(
    cfg: &Config,
    learning: &MatrixLearning,
    grid: &Grid,
    headline: &[Claim],
    seed: u64,
    data: &DataSource,
) -> Result<Sensitivity> {
    let points = grid_points(learning.step(), grid);
    Sensitivity::sweep(
        "mode-matrix sensitivity",
        true,
        points,
        headline,
        |&(step, Jitter(jitter)), _| {
            let mut c = cfg.clone();
            let l = step
                .value
                .map_or_else(|| learning.clone(), |e| learning.with_step(e));
            if let Some(j) = jitter {
                for p in &mut c.patterns {
                    p.stragglers.jitter_sigma = j;
                }
            }
            let (workload, reference) = l.build(c.workers, seed, data)?;
            let mut o = Outcome::default();
            let on = Bench {
                workload: &workload,
                reference: reference.as_ref(),
                seed,
            };
            matrix(&c, DriverKind::Sim, &on, None, &mut o)?;
            Ok(o.claims)
        },
    )
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<ModeMatrix>()
}

#[cfg(test)]
mod tests {
    use super::*;

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
