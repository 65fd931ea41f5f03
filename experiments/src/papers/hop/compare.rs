//! Hop experiments that compare peer settings on the same graphs under slowdown (hop-fig14-16:
//! backup workers; hop-fig17: bounded staleness; hop-fig18-19: skipping iterations): each
//! setting against the standard protocol, by time to an optimum-relative loss target (half
//! way from the initial held-out loss to the reference optimum's) and by time per iteration.

use super::step_cost::StepCost;
use crate::harness::cli::driver_tag;
use crate::harness::experiment::{Experiment, NoArgs, Run};
use crate::harness::output::progress;
use crate::judge::claim_id::ClaimId;
use crate::judge::comparison::PaperComparison;
use crate::judge::format::show;
use crate::judge::time_to_target::TimeToTarget;
use crate::judge::verdict::Judge;
use crate::runs::peers::{graph, run_peers, seconds_per_iteration, PeerCommon};
use anyhow::{bail, Result};
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;
use bench_core::metrics::RunRecords;
use bench_core::protocol::peer::{PeerMode, PeerSettings, SkipPolicy};
use bench_core::straggler::{RandomSlowdown, SlowWorker, StragglerConfig};
use serde::{Deserialize, Serialize};

/// Configuration of a comparison (`configs/hop-fig14-16.*.toml`, `configs/hop-fig17.*.toml`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareConfig {
    /// Graph names.
    pub graphs: Vec<String>,
    /// The random slowdown every run has (None: none).
    #[serde(default)]
    pub slowdown: Option<RandomSlowdown>,
    /// Workers deterministically slower by a constant factor.
    #[serde(default)]
    pub slow: Vec<SlowWorker>,
    /// Pairs `[a, b]` of setting labels: a reaches the target before b, as the figure's
    /// [`Comparison::FASTER_THAN`] words it (a figure without one refuses pairs).
    #[serde(default)]
    pub faster_than: Vec<[String; 2]>,
    /// What the paper reports for the iteration speedup, for claims.csv.
    #[serde(default)]
    pub paper_speedup: String,
    /// Settings compared with the standard protocol.
    pub settings: Vec<SettingConfig>,
    /// Iteration-time speedup over standard each compared setting must reach.
    pub min_iteration_speedup: f64,
    /// Per-step cost (Hop §7.3.3, Figs 15-16: "receiving one less update hurts the per
    /// iteration progress, the effect is insignificant compared to the gained speedup in the
    /// per iteration execution time"): when set, each non-reference setting must need more
    /// iterations than standard to reach the target, and its extra iterations (as a share of
    /// standard's) may be at most this share of its iteration speedup's gain
    /// (`step_cost::StepCost`).
    #[serde(default)]
    pub max_step_cost_share: Option<f64>,
    /// Time per iteration against a straggler-free run (Hop Fig 18): when set, standard also
    /// runs without the slow workers and random slowdown, and the claims compare iteration
    /// times with that run's.
    #[serde(default)]
    pub straggler_free: Option<StragglerFree>,
    /// Shared settings.
    pub common: PeerCommon,
}

/// `[straggler_free]`: how much the stragglers slow an iteration, against standard without them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StragglerFree {
    /// Standard's seconds per iteration with the stragglers must be at least this many times
    /// its seconds per iteration without them (the stragglers matter at all).
    pub standard_min: f64,
    /// What the paper reports for standard's slowdown.
    pub paper_standard: String,
    /// Settings whose slowdown (their seconds per iteration with the stragglers over
    /// standard's without) must stay at or below a bound.
    #[serde(default)]
    pub bounds: Vec<SlowdownBound>,
}

/// A compared setting's largest allowed slowdown against straggler-free standard.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlowdownBound {
    /// The setting's label.
    pub setting: String,
    /// The largest slowdown that passes.
    pub max: f64,
    /// What the paper reports.
    pub paper: String,
}

/// One compared setting.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingConfig {
    /// How updates are collected.
    pub mode: PeerMode,
    /// Token queues.
    #[serde(default)]
    pub max_i: Option<u64>,
    /// Skipping iterations.
    #[serde(default)]
    pub skip: Option<SkipPolicy>,
    /// Run for reference only (e.g. in `faster_than`), with no claims against standard.
    #[serde(default)]
    pub reference: bool,
}

#[derive(Serialize)]
struct SummaryRow {
    graph: String,
    setting: String,
    seconds_per_iteration: f64,
    seconds_to_target: String,
    target_loss: f64,
    final_loss: f64,
    final_accuracy: f64,
    dropped_updates: u64,
    max_staleness: u64,
}

#[derive(Serialize)]
struct CurveRow {
    graph: String,
    setting: String,
    time: f64,
    iteration: f64,
    loss: f64,
}

/// One of Hop's comparison figures: what differs between them is the binary, its text and its
/// configurations.
pub trait Comparison {
    /// The binary's name (and its figure id).
    const BINARY: &'static str;
    /// What it compares and writes, for `--help`.
    const ABOUT: &'static str;
    /// The built-in quick-scale configuration.
    const QUICK: &'static str;
    /// The built-in paper-scale configuration.
    const PAPER: &'static str;
    /// The paper's statement that each compared setting reaches the target before standard
    /// (`{setting}-time-to-target`).
    const BEFORE_STANDARD: PaperComparison;
    /// The paper's statement the configuration's `faster_than` pairs read
    /// (`{a}-not-slower-than-{b}`); none where the paper compares no two settings.
    const FASTER_THAN: Option<PaperComparison> = None;
    /// The built-in configurations of the figure's CNN half (quick, paper; `--cnn`, into
    /// `<figure>-cnn/`): the Hop paper trains its CNN in Figs 14-19 (Figs 14, 15 and 19 on the SVM
    /// as well; Figs 16, 17 and 18 on the CNN only).
    const CNN: Option<(&'static str, &'static str)> = None;
}

/// The experiment of comparison `C`.
pub struct Compare<C>(std::marker::PhantomData<C>);

impl<C: Comparison> Experiment for Compare<C> {
    const BINARY: &'static str = C::BINARY;
    const ABOUT: &'static str = C::ABOUT;
    const QUICK: &'static str = C::QUICK;
    const PAPER: &'static str = C::PAPER;
    const CNN: Option<(&'static str, &'static str)> = C::CNN;
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = CompareConfig;
    type Args = NoArgs;

    fn trains_cnn(cfg: &CompareConfig) -> bool {
        cfg.common.cnn.is_some()
    }

    fn validate(cfg: &CompareConfig, _: &NoArgs, _: &[DriverKind]) -> Result<()> {
        validate(cfg)?;
        if !cfg.faster_than.is_empty() && C::FASTER_THAN.is_none() {
            bail!(
                "faster_than: {} has no paper statement comparing two settings; remove the pairs",
                C::BINARY
            );
        }
        Ok(())
    }

    fn run(run: &mut Run<'_, Self>) -> Result<()> {
        self::run(run, C::BEFORE_STANDARD, C::FASTER_THAN)
    }
}

/// Checks a comparison's configuration.
///
/// # Errors
/// A peer setting out of range, or no graph or setting to compare.
pub fn validate(cfg: &CompareConfig) -> Result<()> {
    cfg.common.validate()?;
    if cfg.graphs.is_empty() || cfg.settings.is_empty() {
        bail!("graphs and settings must be non-empty");
    }
    if cfg.max_step_cost_share == Some(0.0) {
        bail!("max_step_cost_share must be above 0: at 0 a setting that needs more iterations (the hurt) always costs too much");
    }
    if let Some(free) = &cfg.straggler_free {
        let labels: Vec<String> = cfg
            .settings
            .iter()
            .map(|s| {
                PeerSettings {
                    serial: false,
                    mode: s.mode,
                    max_i: s.max_i,
                    iterations: cfg.common.iterations,
                    skip: s.skip,
                }
                .label()
            })
            .collect();
        for b in &free.bounds {
            if b.setting == "standard" || !labels.contains(&b.setting) {
                bail!(
                    "straggler_free.bounds: no compared setting is labelled {} (the settings: {}; standard has its own claim)",
                    b.setting,
                    labels.join(", ")
                );
            }
        }
    }
    Ok(())
}

/// Runs the comparison into the run's (one) figure: each compared setting against standard
/// read in `before_standard`'s words, the configuration's `faster_than` pairs in
/// `faster_than`'s.
///
/// # Errors
/// Bad configuration (among it, `faster_than` pairs with no `faster_than` words to read them)
/// or a failed run; nothing is written then.
pub fn run<E: Experiment<Config = CompareConfig>>(
    run: &mut Run<'_, E>,
    before_standard: PaperComparison,
    faster_than: Option<PaperComparison>,
) -> Result<()> {
    let (cfg, seed, data) = (run.cfg, run.seed, run.data);
    let pair_words = match (cfg.faster_than.is_empty(), faster_than) {
        (_, Some(words)) => words,
        // No pairs to read: never used.
        (true, None) => before_standard,
        (false, None) => bail!("faster_than pairs need the paper's words comparing two settings"),
    };
    let drivers = run.drivers.to_vec();
    let mk = |mode, max_i, skip| PeerSettings {
        serial: false,
        mode,
        max_i,
        iterations: cfg.common.iterations,
        skip,
    };
    let standard = mk(PeerMode::Standard, None, None);
    let compared: Vec<PeerSettings> = cfg
        .settings
        .iter()
        .map(|s| mk(s.mode, s.max_i, s.skip))
        .collect();
    let graphs = cfg
        .graphs
        .iter()
        .map(|g| graph(g, cfg.common.workers, seed))
        .collect::<Result<Vec<_>>>()?;
    for g in &graphs {
        for s in std::iter::once(&standard).chain(&compared) {
            s.build(g)
                .map_err(|e| anyhow::anyhow!("{} on {}: {e}", s.label(), g.name()))?;
        }
    }
    let stragglers = StragglerConfig {
        slow: cfg.slow.clone(),
        jitter_sigma: 0.0,
        production: None,
        random: cfg.slowdown,
        trace: None,
    };
    stragglers.factors(cfg.common.workers)?;
    let workload = cfg.common.workload(seed, data)?;
    let reference = cfg.common.reference(seed, data);
    let judge = Judge::new(reference.as_ref());
    let (mut ref_rows, mut target_notes) = (Vec::new(), Vec::<String>::new());
    let mut way_rows = Vec::new();
    let out = run.out();
    let figure = out.figure().to_string();
    let pb = progress(
        (drivers.len()
            * graphs.len()
            * (1 + compared.len() + usize::from(cfg.straggler_free.is_some()))) as u64,
        &format!("{figure} seed {seed}"),
    );
    let (mut summary, mut curves) = (Vec::new(), Vec::new());
    for &driver in &drivers {
        for g in &graphs {
            let mut runs: Vec<(PeerSettings, RunRecords)> = Vec::new();
            for s in std::iter::once(&standard).chain(&compared) {
                pb.set_message(format!("{} {}", s.label(), g.name()));
                let r = run_peers(driver, &cfg.common, g, s, &stragglers, &workload, seed)?;
                pb.inc(1);
                runs.push((*s, r));
            }
            let judged = judge.judge(runs.iter().map(|(s, r)| (s.label(), &r.progress[..])));
            let target = judged.target;
            if !target_notes.contains(&judged.rule) {
                target_notes.push(judged.rule.clone());
            }
            let tag = driver_tag(g.name(), "/", driver, &drivers);
            ref_rows.extend(judged.reference_rows(&tag));
            way_rows.extend(judged.way_rows(&tag));
            out.claim(judged.near_optimum_claim(format!("{figure}/{tag}/best-run-near-optimum")));
            out.claim(
                judged.every_run_reaches_claim(format!("{figure}/{tag}/every-run-reaches-target")),
            );
            for (s, r) in &runs {
                let last = r.progress.last();
                summary.push(SummaryRow {
                    graph: tag.clone(),
                    setting: s.label(),
                    seconds_per_iteration: seconds_per_iteration(r, cfg.common.iterations),
                    seconds_to_target: show(r.time_to_loss(target)),
                    target_loss: target,
                    final_loss: last.map_or(f64::NAN, |p| p.loss),
                    final_accuracy: last.map_or(f64::NAN, |p| p.accuracy),
                    dropped_updates: r.dropped_updates,
                    max_staleness: r.iterations.iter().map(|x| x.staleness).max().unwrap_or(0),
                });
                for p in &r.progress {
                    curves.push(CurveRow {
                        graph: tag.clone(),
                        setting: s.label(),
                        time: p.time,
                        iteration: p.iteration,
                        loss: p.loss,
                    });
                }
            }
            let (_, base) = &runs[0];
            let base_it = seconds_per_iteration(base, cfg.common.iterations);
            for ((s, r), sc) in runs[1..].iter().zip(&cfg.settings) {
                if sc.reference {
                    continue;
                }
                // Three outcomes, in the paper's words (a run that never gets there loses to
                // one that does).
                for c in judged.time_claims(TimeToTarget::new(
                    ClaimId::new(
                        figure.as_str(),
                        tag.as_str(),
                        format!("{}-time-to-target", s.label()),
                    ),
                    &before_standard,
                    s.label(),
                    standard.label(),
                )) {
                    out.claim(c);
                }
                let speedup = base_it / seconds_per_iteration(r, cfg.common.iterations);
                if let Some(share) = cfg.max_step_cost_share {
                    let label = s.label();
                    let cost = StepCost {
                        id: format!("{figure}/{tag}/{label}"),
                        label: &label,
                        target,
                        share,
                        its: iterations_to_loss(&r.progress, target),
                        standard: iterations_to_loss(&base.progress, target),
                        speedup,
                    };
                    for c in cost.claims() {
                        out.claim(c);
                    }
                }
                out.claim(
                    Claim::check(
                        format!("{figure}/{tag}/{}-iteration-speedup", s.label()),
                        format!(
                            "{} runs iterations >= {}x faster than standard",
                            s.label(),
                            cfg.min_iteration_speedup
                        ),
                        cfg.paper_speedup.clone(),
                        format!("{speedup:.2}x"),
                        speedup >= cfg.min_iteration_speedup,
                    )
                    .with_value(speedup),
                );
            }
            for [a, b] in &cfg.faster_than {
                let run = |l: &str| runs.iter().any(|(s, _)| s.label() == l);
                if !(run(a) && run(b)) {
                    bail!("faster_than names a setting that is not run: {a} or {b}");
                }
                for c in judged.time_claims(TimeToTarget::new(
                    ClaimId::new(
                        figure.as_str(),
                        tag.as_str(),
                        format!("{a}-not-slower-than-{b}"),
                    ),
                    &pair_words,
                    a.clone(),
                    b.clone(),
                )) {
                    out.claim(c);
                }
            }
            if let Some(free) = &cfg.straggler_free {
                pb.set_message(format!("standard without stragglers {}", g.name()));
                let none = StragglerConfig::default();
                let r = run_peers(driver, &cfg.common, g, &standard, &none, &workload, seed)?;
                let free_it = seconds_per_iteration(&r, cfg.common.iterations);
                summary.push(SummaryRow {
                    graph: tag.clone(),
                    setting: "standard-without-stragglers".into(),
                    seconds_per_iteration: free_it,
                    seconds_to_target: show(r.time_to_loss(target)),
                    target_loss: target,
                    final_loss: r.progress.last().map_or(f64::NAN, |p| p.loss),
                    final_accuracy: r.progress.last().map_or(f64::NAN, |p| p.accuracy),
                    dropped_updates: r.dropped_updates,
                    max_staleness: r.iterations.iter().map(|x| x.staleness).max().unwrap_or(0),
                });
                for claim in slowdown_claims(&figure, &tag, free, free_it, &runs, cfg)? {
                    out.claim(claim);
                }
            }
        }
    }
    pb.finish_and_clear();
    out.csv("summary.csv", &summary)?;
    out.csv("curves.csv", &curves)?;
    out.csv("reference.csv", &ref_rows)?;
    out.csv("ways.csv", &way_rows)?;
    let mut notes: Vec<String> = reference.iter().map(|r| r.note("svm")).collect();
    notes.extend(target_notes);
    notes.extend([
        format!(
            "{} peers, {} iterations; random slowdown {:?} (probability None = 1/n); slow workers {:?}; {}",
            cfg.common.workers,
            cfg.common.iterations,
            cfg.slowdown,
            cfg.slow,
            match &cfg.common.cnn {
                Some(_) => format!("{} (the workload line above)", cfg.common.learning_label()),
                None => format!(
                    "{} on a synthetic twin ({} x {}, {} non-zeros per row)",
                    cfg.common.learning_label(),
                    cfg.common.data.train_rows,
                    cfg.common.data.features,
                    cfg.common.data.nnz_per_row
                ),
            }
        ),
        "loss is peer 0's model on the held-out rows; a run that never reaches the target has no time to it".into(),
    ]);
    run.notes(notes);
    Ok(())
}

/// How near (a share) standard's slowdown may come to the configured straggler's factor before
/// the slowdown claim is taken as restating the configuration.
const SLOWDOWN_IS_THE_FACTOR: f64 = 0.01;

/// Hop Fig 18's claims: how much the stragglers slow standard's iterations, and how little
/// they slow each bounded setting's, against standard's seconds per iteration without them
/// (`free_it`).
///
/// # Errors
/// A bound names a setting that is not run.
fn slowdown_claims(
    figure: &str,
    tag: &str,
    free: &StragglerFree,
    free_it: f64,
    runs: &[(PeerSettings, RunRecords)],
    cfg: &CompareConfig,
) -> Result<Vec<Claim>> {
    let it = |r: &RunRecords| seconds_per_iteration(r, cfg.common.iterations);
    let standard = it(&runs[0].1) / free_it;
    let slowed = Claim::check(
        format!("{figure}/{tag}/standard-iteration-slowdown"),
        format!(
            "the stragglers slow standard's iterations >= {}x",
            free.standard_min
        ),
        free.paper_standard.clone(),
        format!(
            "{standard:.2}x ({:.4} s against {free_it:.4} s without stragglers)",
            it(&runs[0].1)
        ),
        standard >= free.standard_min,
    )
    .with_value(standard);
    // Standard waits for every in-neighbour's update each iteration, so a deterministic
    // straggler k times slower paces it at k times its iteration when compute dominates: a
    // slowdown equal to the configured factor restates the configuration.
    // Only a deterministic straggler (no random slowdown) whose factor would pass the claim:
    // a factor below the bound fails it by construction, which stays a failure.
    let factor = cfg.slow.iter().map(|s| s.factor).fold(f64::NAN, f64::max);
    let restated = cfg.slowdown.is_none()
        && factor >= free.standard_min
        && (standard / factor - 1.0).abs() < SLOWDOWN_IS_THE_FACTOR;
    let mut claims = vec![if restated {
        slowed.not_exercised(format!(
            "true by construction: the slowdown is the configured straggler's factor {factor}x \
             (standard waits for its every update)"
        ))
    } else {
        slowed
    }];
    for b in &free.bounds {
        let Some((_, r)) = runs.iter().find(|(s, _)| s.label() == b.setting) else {
            bail!(
                "straggler_free.bounds names a setting that is not run: {}",
                b.setting
            );
        };
        let slowdown = it(r) / free_it;
        claims.push(
            Claim::check(
                format!("{figure}/{tag}/{}-iteration-slowdown", b.setting),
                format!(
                    "with the stragglers, {} iterates within {}x of standard without them",
                    b.setting, b.max
                ),
                b.paper.clone(),
                format!("{slowdown:.2}x ({:.4} s against {free_it:.4} s)", it(r)),
                slowdown <= b.max,
            )
            .with_value(slowdown),
        );
    }
    Ok(claims)
}

/// The iteration at which `progress` first reaches `target` (the run's mean iterations per
/// worker at the evaluation of peer 0's model that first reaches it).
pub fn iterations_to_loss(
    progress: &[bench_core::metrics::ProgressRow],
    target: f64,
) -> Option<f64> {
    progress
        .iter()
        .find(|p| p.loss <= target)
        .map(|p| p.iteration)
}
