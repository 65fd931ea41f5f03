//! essp-fig3 (matrix-factorisation part): squared loss vs clock and vs time for SSP(s) and
//! ESSP(s), and the stability of both at the largest s with a large step size
//! (ESSP §"Experiments", Fig 3). With an `[lda]` section the same comparison runs on LDA (its
//! panels: lda_curves.csv).

use crate::harness::data_source::DataSource;
use crate::harness::experiment::{self, Experiment, NoArgs, Run};
use crate::harness::output::progress;
use crate::harness::parallel::map_runs;
use crate::judge::claim_id::ClaimId;
use crate::judge::reference::Reference;
use crate::judge::sensitivity::{self, Knob, Sensitivity};
use crate::judge::verdict::Judge;
use crate::papers::essp::{convergence_claims, fmt_opt, ConvergenceWords};
use crate::workloads::mf::{MfExperimentConfig as Config, MfSensitivity};
use anyhow::{bail, Context};
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;
use bench_core::metrics::RunRecords;
use bench_core::protocol::SyncMode;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

const FIGURE: &str = "essp-fig3";
/// ALS stops when a sweep lowers the objective by less than this (relative).
const ALS_TOLERANCE: f64 = 1e-10;

struct EsspFig3;

#[derive(Serialize)]
struct CurveRow {
    driver: String,
    mode: String,
    step: f64,
    time: f64,
    clock: f64,
    squared_loss: f64,
}

#[derive(Serialize)]
struct SummaryRow {
    driver: String,
    mode: String,
    step: f64,
    target_loss: f64,
    clocks_to_target: String,
    seconds_to_target: String,
    initial_loss: f64,
    final_loss: f64,
}

/// A run of the figure: a mode at a step size (the normal one, or the stability comparison's
/// large one). Named `<mode>@<step>`, and ordered as its name: the order summary.csv lists the
/// runs in.
#[derive(Debug, Clone, Copy)]
struct RunKey {
    mode: SyncMode,
    step: f64,
}

impl fmt::Display for RunKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.mode.label(), self.step)
    }
}

impl Ord for RunKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.to_string().cmp(&other.to_string())
    }
}

impl PartialOrd for RunKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for RunKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for RunKey {}

/// Converged: finite final loss below the initial one.
fn converged(r: &RunRecords) -> bool {
    match (r.progress.first(), r.progress.last()) {
        (Some(a), Some(b)) => b.loss.is_finite() && b.loss < a.loss,
        _ => false,
    }
}

/// The final loss over the initial one, the number [`converged`] reads (below 1: converged;
/// NaN without progress or once diverged).
fn final_over_initial(r: &RunRecords) -> f64 {
    match (r.progress.first(), r.progress.last()) {
        (Some(a), Some(b)) => b.loss / a.loss,
        _ => f64::NAN,
    }
}

impl Experiment for EsspFig3 {
    const BINARY: &'static str = FIGURE;
    const ABOUT: &'static str = "Convergence of SSP vs ESSP (ESSP Fig 3) on matrix factorisation and, with an `[lda]` section, on LDA. Targets are 90% of the way from the initial loss to a reference: the MF objective's ALS optimum, the level a sequential LDA sampler settles at. Writes results/essp-fig3/: curves.csv, summary.csv, lda_curves.csv, lda_summary.csv, reference.csv, claims.csv, manifest.json.";
    const QUICK: &'static str = include_str!("../../../configs/essp-fig3.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/essp-fig3.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = Config;
    type Args = NoArgs;

    fn validate(cfg: &Config, _: &NoArgs, _: &[DriverKind]) -> anyhow::Result<()> {
        cfg.modes()?;
        let Some(large_step) = cfg.large_step else {
            bail!("essp-fig3 needs large_step (the step size of the stability comparison)");
        };
        if !(large_step > 0.0 && large_step.is_finite()) {
            bail!("large_step must be > 0, got {large_step}");
        }
        if cfg.shards != 1 {
            bail!(
                "essp-fig3 compares losses, which need every row on one node: set shards = 1 \
                 (got {})",
                cfg.shards
            );
        }
        Ok(())
    }

    fn run(run: &mut Run<'_, Self>) -> anyhow::Result<()> {
        let (cfg, seed, data) = (run.cfg, run.seed, run.data);
        let drivers = run.drivers.to_vec();
        let modes = cfg.modes()?;
        let large_step = cfg.large_step.expect("checked by validate");
        let workload = cfg.tables(seed, data)?;
        // The objective does not depend on the step size: one optimum serves both steps.
        // With lambda = 0 a row with fewer than K ratings has a singular normal matrix: no
        // unique optimum, so no reference.
        let opt = (cfg.reference_sweeps() > 0 && cfg.mf.lambda > 0.0).then(|| {
            workload
                .model()
                .reference_optimum(cfg.reference_sweeps(), ALS_TOLERANCE)
        });
        let reference = opt.as_ref().map(Reference::of_mf);
        let mut reference_csv = Vec::new();
        let mut target_note = String::new();
        let mut big = cfg.mf;
        big.step = large_step;
        let big_workload = cfg.tables_with(big, seed, data)?;
        let s_max = *cfg.staleness.iter().max().expect("non-empty");
        // BSP at the large step is the comparison's reference: staleness can only be blamed
        // for instability that BSP does not show.
        let big_modes = [SyncMode::bsp(), SyncMode::ssp(s_max), SyncMode::essp(s_max)];

        let out = run.out();
        let pb = progress((drivers.len() * (modes.len() + 3)) as u64, FIGURE);
        let (mut curves, mut summary) = (Vec::new(), Vec::new());
        let mut headline = None;
        let judge = Judge::new(reference.as_ref());
        for &driver in &drivers {
            let d = driver.label();
            let mut runs: BTreeMap<RunKey, RunRecords> = BTreeMap::new();
            let jobs: Vec<_> = modes
                .iter()
                .map(|m| (*m, cfg.mf.step, &workload))
                .chain(big_modes.iter().map(|m| (*m, large_step, &big_workload)))
                .collect();
            // Simulator runs share the cores (crate::harness::parallel); the rows are written in
            // the jobs' order either way.
            let recs = map_runs(driver == DriverKind::Sim, &jobs, |&(mode, step, w)| {
                pb.set_message(format!("{d} {} step {step}", mode.label()));
                let rec = cfg
                    .run(driver, mode, w, seed)
                    .with_context(|| format!("{} (step {step}) under {d}", mode.label()))?;
                pb.inc(1);
                Ok(rec)
            })?;
            for (&(mode, step, _), rec) in jobs.iter().zip(recs) {
                for p in &rec.progress {
                    curves.push(CurveRow {
                        driver: d.into(),
                        mode: mode.label(),
                        step,
                        time: p.time,
                        clock: p.iteration,
                        squared_loss: p.loss,
                    });
                }
                runs.insert(RunKey { mode, step }, rec);
            }
            // Target: 90% of the way from the initial held-out loss to the optimum's.
            // Without a reference the shared fallback (half the way to the best loss) is taken over
            // every run at the normal step; the large step's runs may diverge.
            let normal = |k: &RunKey| k.step == cfg.mf.step && modes.contains(&k.mode);
            let judged = judge.judge_by(runs.iter().map(|(k, r)| (*k, &r.progress[..])), normal);
            let target = judged.target;
            target_note = judged.rule.clone();
            if reference_csv.is_empty() {
                reference_csv = judged.reference_rows("mf");
            }
            out.claim(judged.near_optimum_claim(format!("{FIGURE}/{d}/mf-best-run-near-optimum")));
            for r in &judged.runs {
                let hit = r.crossing;
                summary.push(SummaryRow {
                    driver: d.into(),
                    mode: r.key.mode.label(),
                    step: r.key.step,
                    target_loss: target,
                    clocks_to_target: fmt_opt(hit.map(|h| h.iteration)),
                    seconds_to_target: fmt_opt(hit.map(|h| h.time)),
                    initial_loss: r.span.0,
                    final_loss: r.span.1,
                });
            }
            for &s in &cfg.staleness {
                let at_step = |mode| RunKey {
                    mode,
                    step: cfg.mf.step,
                };
                let words = ConvergenceWords {
                    ids: [
                        ClaimId::new(FIGURE, d, format!("mf-clocks-s{s}")),
                        ClaimId::new(FIGURE, d, format!("mf-time-s{s}")),
                    ],
                    statements: [
                        format!(
                            "ESSP reaches the target loss {target:.4} in fewer or comparable clocks than SSP at s = {s}"
                        ),
                        format!(
                            "ESSP reaches the target loss in less or comparable time than SSP at s = {s}"
                        ),
                    ],
                };
                let (ssp, essp) = (at_step(SyncMode::ssp(s)), at_step(SyncMode::essp(s)));
                for c in convergence_claims(&judged, ssp, essp, words) {
                    out.claim(c);
                }
            }
            let big = |mode| {
                &runs[&RunKey {
                    mode,
                    step: large_step,
                }]
            };
            let derived = large_step_claims(
                d,
                s_max,
                large_step,
                [
                    big(SyncMode::bsp()),
                    big(SyncMode::ssp(s_max)),
                    big(SyncMode::essp(s_max)),
                ],
            );
            if driver == DriverKind::Sim {
                headline = Some(derived.clone());
            }
            for c in derived {
                out.claim(c);
            }
        }
        pb.finish_and_clear();
        let mut lda_notes = Vec::new();
        if let Some(lda) = &cfg.lda {
            let outcome = crate::papers::essp::lda_convergence::run(
                out,
                lda,
                &lda.tables(seed, data)?,
                &drivers,
                &cfg.stragglers,
                &cfg.threads,
                seed,
            )?;
            reference_csv.extend(outcome.reference);
            lda_notes = outcome.notes;
        } else {
            out.claim(Claim::not_applicable(
                format!("{FIGURE}/lda"),
                "LDA (NYTimes): ESSP converges faster per iteration and per second",
                "ESSP faster (LDA)",
                "this configuration has no [lda] section",
            ));
        }
        out.csv("curves.csv", &curves)?;
        out.csv("summary.csv", &summary)?;
        if !reference_csv.is_empty() {
            out.csv("reference.csv", &reference_csv)?;
        }
        let mut notes = vec![
            opt.as_ref().map_or_else(
                || "mf reference optimum: not computed (reference_sweeps = 0, or lambda = 0, where rows with fewer than rank ratings have no unique least-squares solution)".to_string(),
                |opt| format!(
                    "mf reference optimum: ALS-WR (bench_core::workload::mf_optimum) on the objective the SGD step descends, 1/n sum over training ratings of 1/2 e^2 + lambda/2 (|L_u|^2 + |R_i|^2), from the runs' initial factors: F = {:.5}, training MSE {:.5}, held-out MSE {:.5} after {} sweeps (gradient norm {:.1e} of its initial value; the objective is not convex, so this is a stationary point, not a certified global minimum)",
                    opt.objective, opt.train_loss, opt.test_loss, opt.sweeps, opt.certificate
                ),
            ),
            format!("mf {target_note} (the same target for both step sizes; reference.csv, part mf)"),
            "'converged' = finite final squared loss below the initial one; otherwise 'unstable'".into(),
            "matrix factorisation on Netflix-shaped ratings, partitioned over workers by user".into(),
            "LDA (when the config has [lda]): collapsed Gibbs sampling on row tables (word-topic and topic-total rows on one shard, topic assignments on the workers); loss = negative word log-likelihood per token, the part of the log-likelihood the server holds; target: the lda target line below; lda_curves.csv, lda_summary.csv".into(),
            "row-level parameter-server tables (L and R rows, GET/INC/CLOCK, per-row client cache, ESSP pushes of changed rows) on one shard".into(),
            cfg.reads_note(),
        ];
        notes.extend(cfg.lda.as_ref().map(|l| l.reads_note()));
        notes.extend(lda_notes);
        notes.push(format!("the stability comparison runs BSP, SSP({s_max}) and ESSP({s_max}) at step {large_step}; BSP is its reference"));
        if let (Some(grid), Some(headline)) = (&cfg.sensitivity, headline) {
            if run.seed == run.common.seed {
                let s = sensitivity(cfg, grid, headline, seed, data)?;
                s.write(run.out())?;
                let steps = MfSensitivity::grid(&grid.large_step, large_step);
                let jitters = MfSensitivity::grid(&grid.jitter_sigma, cfg.stragglers.jitter_sigma);
                let points = if grid.one_at_a_time {
                    format!(
                        "large_step in {steps:?} at jitter_sigma {}, and jitter_sigma in {jitters:?} at large_step {large_step} (one knob at a time)",
                        cfg.stragglers.jitter_sigma
                    )
                } else {
                    format!("every combination of large_step in {steps:?} and jitter_sigma in {jitters:?}")
                };
                notes.push(format!(
                    "sensitivity.csv (first seed, sim driver): the stability claims re-derived at {points}; verdicts that flip over the grid: {}",
                    s.fragile_note()
                ));
            }
        }
        run.notes(notes);
        Ok(())
    }
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<EsspFig3>()
}

fn stability(r: &RunRecords) -> String {
    format!(
        "{:.4} ({})",
        r.progress.last().map_or(f64::NAN, |p| p.loss),
        if converged(r) {
            "converged"
        } else {
            "unstable"
        }
    )
}

/// The stability comparison at the large step from its BSP, SSP(s_max) and ESSP(s_max) runs.
fn large_step_claims(
    d: &str,
    s_max: i64,
    large_step: f64,
    [bsp, ssp, essp]: [&RunRecords; 3],
) -> Vec<Claim> {
    vec![
        Claim::check(
            format!("{FIGURE}/{d}/mf-large-step-bsp-reference"),
            format!("BSP converges at step {large_step}: the stability comparison's reference"),
            "the large step is one BSP takes (instability is staleness's doing)",
            format!("BSP final {}", stability(bsp)),
            converged(bsp),
        )
        .with_value(final_over_initial(bsp)),
        Claim::check(
            format!("{FIGURE}/{d}/mf-large-step-s{s_max}"),
            format!("at s = {s_max} with step {large_step}: SSP unstable while ESSP converges"),
            "SSP MF diverges or shakes at high s; ESSP robust",
            format!(
                "SSP final {}, ESSP final {}",
                stability(ssp),
                stability(essp)
            ),
            !converged(ssp) && converged(essp),
        )
        .with_value(final_over_initial(ssp)),
    ]
}

/// The stability claims re-derived (sim driver) over large_step x jitter_sigma; the
/// configured point is `headline`'s claims, not run again.
fn sensitivity(
    cfg: &Config,
    grid: &MfSensitivity,
    headline: Vec<Claim>,
    seed: u64,
    data: &DataSource,
) -> anyhow::Result<Sensitivity> {
    let configured = cfg.large_step.expect("checked by validate");
    let steps = MfSensitivity::grid(&grid.large_step, configured);
    let jitters = MfSensitivity::grid(&grid.jitter_sigma, cfg.stragglers.jitter_sigma);
    let s_max = *cfg.staleness.iter().max().expect("non-empty");
    // Jitter is the outer loop of the grid (sensitivity.csv's row order), the step the first
    // knob of each setting.
    let points = sensitivity::two_knob_points(
        Knob {
            name: "jitter_sigma",
            values: &jitters,
            configured: cfg.stragglers.jitter_sigma,
        },
        Knob {
            name: "large_step",
            values: &steps,
            configured,
        },
        grid.one_at_a_time,
    )
    .into_iter()
    .map(|(mut setting, is_headline, (jitter, step))| {
        setting.reverse();
        (setting, is_headline, (step, jitter))
    })
    .collect();
    Sensitivity::sweep(
        "essp-fig3 sensitivity",
        true,
        points,
        &headline,
        |&(step, jitter), _| {
            let mut c = cfg.clone();
            c.stragglers.jitter_sigma = jitter;
            let mut mf = c.mf;
            mf.step = step;
            let tables = c.tables_with(mf, seed, data)?;
            let modes = [SyncMode::bsp(), SyncMode::ssp(s_max), SyncMode::essp(s_max)];
            let runs = map_runs(true, &modes, |&m| c.run(DriverKind::Sim, m, &tables, seed))?;
            Ok(large_step_claims(
                "sim",
                s_max,
                step,
                [&runs[0], &runs[1], &runs[2]],
            ))
        },
    )
}
