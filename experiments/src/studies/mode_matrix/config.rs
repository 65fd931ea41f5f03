//! The mode matrix's configuration: the workload, network, patterns and modes, the headline
//! comparisons and the sensitivity grid, and the checks that refuse an impossible one.

use crate::harness::runner::ThreadsSection;
use crate::runs::named_mode::MatrixMode;
use crate::runs::peers::PeerCnn;
use crate::studies::mode_matrix::learning::{MatrixLearning, MatrixLs, MatrixMf};
use crate::workloads::svm::SparseData;
use anyhow::{bail, Result};
use bench_core::driver::{ComputeModel, NetworkModel};
use bench_core::straggler::StragglerConfig;
use bench_core::workload::{Aggregation, SvmConfig};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Config {
    /// Workers (peers; the parameter server and the coordinator are one node besides them).
    pub(super) workers: usize,
    /// Iterations per worker: parameter-server clocks, peer iterations; the coordinator runs
    /// `workers x iterations` tasks, handed to whichever workers its barrier admits.
    pub(super) iterations: u64,
    /// Evaluate every this many updates applied (results committed; peer reduces).
    pub(super) eval_every: u64,
    /// A run reaches the target at the first evaluation whose loss is at or below it and stays
    /// there for this many evaluations after (all that remain, near the end): a noisy curve
    /// (stale modes at a large step) dipping under the target once does not count.
    pub(super) hold_evals: usize,
    /// How parameter-server and coordinator updates are combined (`mean` makes all three
    /// families take the same step per iteration; `sum` is Bösen's INC).
    pub(super) aggregation: Aggregation,
    /// The modes, as `ps/<mode>`, `async/<barrier>`, `peer/<graph>/<setting>`.
    pub(super) modes: Vec<String>,
    /// The mode every other is compared with, pattern by pattern (the heatmap's 1.0).
    pub(super) baseline: String,
    /// Straggler patterns, in column order.
    pub(super) patterns: Vec<Pattern>,
    /// Paper headlines restated inside the matrix (one claim each).
    #[serde(default)]
    pub(super) headlines: Vec<Headline>,
    /// Knobs the verdicts are re-derived over (sensitivity.csv; simulator, first seed).
    #[serde(default)]
    pub(super) sensitivity: Option<Grid>,
    /// The SVM's data (with `[svm]`: the default workload; see [`MatrixLearning`]).
    #[serde(default)]
    pub(super) data: Option<SparseData>,
    /// The SVM's loss and step (with `[data]`).
    #[serde(default)]
    pub(super) svm: Option<SvmConfig>,
    /// Least squares instead of the SVM.
    #[serde(default)]
    pub(super) ls: Option<MatrixLs>,
    /// Matrix factorisation instead of the SVM.
    #[serde(default)]
    pub(super) mf: Option<MatrixMf>,
    /// A CNN instead of the SVM (feature `cnn`).
    #[serde(default)]
    pub(super) cnn: Option<PeerCnn>,
    pub(super) compute: ComputeModel,
    pub(super) network: NetworkModel,
    pub(super) threads: ThreadsSection,
}

impl Config {
    /// The workload the sections name (`[data]` with `[svm]`, `[ls]`, `[mf]` or `[cnn]`).
    ///
    /// # Errors
    /// None of them, or more than one.
    pub(super) fn learning(&self) -> Result<MatrixLearning> {
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
pub(super) struct Grid {
    /// Step sizes to try (the workload's: `svm.eta0`, `ls.settings.step`, `mf.settings.step`
    /// or `cnn.net.lr`;
    /// the key keeps the SVM's name): stale modes gain or lose most with the step.
    #[serde(default)]
    pub(super) eta0: Vec<f64>,
    /// Log-normal jitter levels to try, set in every pattern at once.
    #[serde(default)]
    pub(super) jitter_sigma: Vec<f64>,
    /// Vary one knob at a time (each step at the configured jitter, each jitter at the
    /// configured step: 4 extra matrices for two values each) instead of every combination
    /// (8). The quick configuration does, to keep the reproduction within its time; the paper
    /// configuration crosses them, which also shows the knobs' interaction.
    #[serde(default)]
    pub(super) one_at_a_time: bool,
}

/// One straggler pattern: a column of the matrix.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Pattern {
    /// Column name (`none`, `one-slow-4x`, ...).
    pub(super) name: String,
    /// Where the pattern comes from.
    pub(super) about: String,
    /// The stragglers (the `[stragglers]` section of other experiments).
    pub(super) stragglers: StragglerConfig,
}

/// What a headline compares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Metric {
    /// Time to the target loss (a run that never reaches it is slower than any that does).
    #[default]
    TimeToTarget,
    /// Bytes sent per node over the whole run (same iterations for every mode).
    BytesPerNode,
}

/// "Under `pattern`, `mode` beats `than`": `metric(mode) / metric(than) < max_ratio`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Headline {
    /// Short name: the claim id is `mode-matrix/<name>`.
    pub(super) name: String,
    /// What the paper reports, and where.
    pub(super) paper: String,
    /// The pattern it is checked under.
    pub(super) pattern: String,
    /// The mode expected to win.
    pub(super) mode: String,
    /// The mode it is compared with.
    pub(super) than: String,
    /// What is compared.
    #[serde(default)]
    pub(super) metric: Metric,
    /// The ratio the winner must stay below (1.0: strictly better).
    #[serde(default = "one")]
    pub(super) max_ratio: f64,
    /// And above (default 0: one-sided). With both, the claim is that the two agree.
    #[serde(default)]
    pub(super) min_ratio: f64,
}

pub(super) fn one() -> f64 {
    1.0
}

pub(super) fn parse_modes(cfg: &Config) -> Result<Vec<MatrixMode>> {
    cfg.modes
        .iter()
        .map(|m| MatrixMode::parse(m, cfg.iterations))
        .collect()
}

pub(super) fn check(cfg: &Config) -> Result<()> {
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
