//! essp-fig3's LDA panels: the negative word log-likelihood per token vs clock and vs time,
//! BSP, SSP(s) and ESSP(s), and the claim that ESSP reaches a target in no more clocks and no
//! more time than SSP at each s.
//!
//! The target is relative to a reference, not to what the compared runs reached: a sequential
//! collapsed Gibbs sampler on the same corpus (one worker, every read fresh) run for
//! `reference_clocks`, whose settled level (the mean over its last quarter) stands where an
//! optimum stands for the convex workloads. A run is near it when it has covered 90% of the
//! way from the initial loss to that level.

use crate::harness::output::ExperimentOutput;
use crate::harness::runner::ThreadsSection;
use crate::judge::claim_id::ClaimId;
use crate::judge::reference::{Reference, ReferenceRow, ReferenceWords};
use crate::judge::verdict::Judge;
use crate::papers::essp::{convergence_claims, fmt_opt, ConvergenceWords};
use crate::workloads::lda::LdaPart;
use anyhow::{Context, Result};
use bench_core::driver::DriverKind;
use bench_core::metrics::RunRecords;
use bench_core::straggler::StragglerConfig;
use bench_core::workload::{sequential_reference, LdaTables};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Serialize)]
struct CurveRow {
    driver: String,
    mode: String,
    time: f64,
    clock: f64,
    neg_log_likelihood_per_token: f64,
}

#[derive(Serialize)]
struct SummaryRow {
    driver: String,
    mode: String,
    target: f64,
    clocks_to_target: String,
    seconds_to_target: String,
    initial: f64,
    last: f64,
}

/// What [`run`] tells the figure: its row of `reference.csv` and its manifest notes.
pub struct LdaOutcome {
    /// The reference level as `reference.csv`'s `lda` row.
    pub reference: Vec<ReferenceRow>,
    /// Manifest notes.
    pub notes: Vec<String>,
}

/// Runs the LDA part on `tables` (built by [`LdaPart::tables`]) under every driver; writes
/// lda_curves.csv and lda_summary.csv and the `{figure}/{driver}/lda-*` claims (`figure`: `out`'s).
///
/// # Errors
/// Any configuration or run error, or a failed write.
pub fn run(
    out: &mut ExperimentOutput,
    part: &LdaPart,
    tables: &Arc<LdaTables>,
    drivers: &[DriverKind],
    stragglers: &StragglerConfig,
    threads: &ThreadsSection,
    seed: u64,
) -> Result<LdaOutcome> {
    let figure = out.figure().to_string();
    let modes = part.modes(stragglers)?;
    let clocks = part.reference_run_clocks();
    let seq = (clocks > 0).then(|| sequential_reference(tables.model(), clocks));
    let reference = seq.as_ref().map(|seq| Reference {
        objective: seq.level,
        test_loss: seq.level,
        test_accuracy: f64::NAN,
        certificate: seq.drift,
        passes: seq.losses.len() - 1,
        objective_gap: f64::NAN,
        way: crate::judge::reference::DEFAULT_WAY,
    });
    let judge = Judge::new(reference.as_ref()).with_words(ReferenceWords {
        loss: "negative word log-likelihood per token",
        reference: "settled sequential sampler",
        short: "level",
    });
    let mut target_note = String::new();
    let mut reference_rows = Vec::new();
    let pb = crate::harness::output::progress((drivers.len() * modes.len()) as u64, "lda");
    let (mut curves, mut summary) = (Vec::new(), Vec::new());
    for &driver in drivers {
        let d = driver.label();
        let mut runs: BTreeMap<String, RunRecords> = BTreeMap::new();
        let recs =
            crate::harness::parallel::map_runs(driver == DriverKind::Sim, &modes, |&mode| {
                pb.set_message(format!("lda {d} {}", mode.label()));
                let rec = part
                    .run(driver, mode, tables, stragglers, threads, seed)
                    .with_context(|| format!("LDA {} under {d}", mode.label()))?;
                pb.inc(1);
                Ok(rec)
            })?;
        for (&mode, rec) in modes.iter().zip(recs) {
            for p in &rec.progress {
                curves.push(CurveRow {
                    driver: d.into(),
                    mode: mode.label(),
                    time: p.time,
                    clock: p.iteration,
                    neg_log_likelihood_per_token: p.loss,
                });
            }
            runs.insert(mode.label(), rec);
        }
        let judged = judge.judge(runs.iter().map(|(m, r)| (m.clone(), r.progress.as_slice())));
        let target = judged.target;
        target_note = judged.rule.clone();
        if reference_rows.is_empty() {
            reference_rows = judged.reference_rows("lda");
        }
        out.claim(judged.near_optimum_claim(format!("{figure}/{d}/lda-best-run-near-reference")));
        for r in &judged.runs {
            let hit = r.crossing;
            summary.push(SummaryRow {
                driver: d.into(),
                mode: r.key.clone(),
                target,
                clocks_to_target: fmt_opt(hit.map(|h| h.iteration)),
                seconds_to_target: fmt_opt(hit.map(|h| h.time)),
                initial: r.span.0,
                last: r.span.1,
            });
        }
        for &s in &part.staleness {
            let words = ConvergenceWords {
                ids: [
                    ClaimId::new(figure.as_str(), d, format!("lda-clocks-s{s}")),
                    ClaimId::new(figure.as_str(), d, format!("lda-time-s{s}")),
                ],
                statements: [
                    format!(
                        "LDA: ESSP reaches the target {target:.4} (negative word log-likelihood per token) in fewer or comparable clocks than SSP at s = {s}"
                    ),
                    format!(
                        "LDA: ESSP reaches the target in less or comparable time than SSP at s = {s}"
                    ),
                ],
            };
            for c in convergence_claims(&judged, format!("ssp{s}"), format!("essp{s}"), words) {
                out.claim(c);
            }
        }
    }
    pb.finish_and_clear();
    out.csv("lda_curves.csv", &curves)?;
    out.csv("lda_summary.csv", &summary)?;
    let reference_note = seq.map_or_else(
        || "lda reference: none (reference_clocks = 0)".to_string(),
        |seq| {
            format!(
                "lda reference: a sequential collapsed Gibbs sampler on the same corpus (one worker, every read fresh) for {} clocks (about {:.0} sweeps) settles at {:.4} from {:.4} (the mean of its last quarter of clocks; that mean differs from the quarter before's by {:.1}% of the whole drop){}",
                seq.losses.len() - 1,
                (seq.losses.len() - 1) as f64 * part.lda.minibatch_fraction,
                seq.level,
                seq.losses[0],
                seq.drift * 100.0,
                if part.corpus.documents.is_multiple_of(part.workers) {
                    String::new()
                } else {
                    format!("; the runs leave out the last {} documents (an uneven split over {} workers), the reference samples them too", part.corpus.documents % part.workers, part.workers)
                }
            )
        },
    );
    Ok(LdaOutcome {
        reference: reference_rows,
        notes: vec![
            reference_note,
            format!("lda {target_note} (reference.csv, part lda)"),
        ],
    })
}
