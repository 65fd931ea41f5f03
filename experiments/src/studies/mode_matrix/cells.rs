//! Running the matrix: every (pattern, mode) cell under each driver, the per-pattern ranking
//! against the baseline mode, and the rows, curves and claims a matrix yields.

use super::*;
use crate::harness::parallel::map_runs;
use crate::harness::runner::RunSettings;
use crate::judge::reference::{Reference, ReferenceRow};
use crate::judge::verdict::Judge;
use crate::runs::named_mode::{mean_wait_us, MatrixMode, RunShape};
use anyhow::Result;
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;
use bench_core::metrics::seconds;
use bench_core::metrics::RunRecords;
use bench_core::workload::Workload;
use std::fmt;
use std::sync::Arc;

/// What one matrix (every driver's) produced.
#[derive(Default)]
pub(super) struct Outcome {
    pub(super) rows: Vec<MatrixRow>,
    pub(super) ranks: Vec<RankRow>,
    pub(super) curves: Vec<CurveRow>,
    pub(super) ref_rows: Vec<ReferenceRow>,
    pub(super) claims: Vec<Claim>,
    pub(super) notes: Vec<String>,
}

/// What a matrix runs on, whatever the driver: the workload, its reference (none: the
/// no-reference rule) and the seed.
pub(super) struct Bench<'a> {
    pub(super) workload: &'a Arc<dyn Workload>,
    pub(super) reference: Option<&'a Reference>,
    pub(super) seed: u64,
}

/// One cell of the matrix: a straggler pattern (its name) and a mode, keyed in the reference
/// rows' spans as `<pattern> <mode>`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Cell<'a> {
    pub(super) pattern: &'a str,
    pub(super) mode: String,
}

impl fmt::Display for Cell<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.pattern, self.mode)
    }
}

/// One cell's run: its pattern, its mode and what it recorded.
pub(super) struct CellRun<'a> {
    pub(super) pattern: &'a str,
    pub(super) mode: &'a MatrixMode,
    pub(super) rec: RunRecords,
}

/// Runs every (pattern, mode) of `cfg` under `driver` on `on`'s workload, in cell order.
///
/// # Errors
/// The first run that fails.
pub(super) fn run_cells<'a>(
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
pub(super) fn rank(
    rows: &mut [MatrixRow],
    pattern: &str,
    baseline: &str,
    ranks: &mut Vec<RankRow>,
) {
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
pub(super) fn matrix(
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
            makespan_s: seconds(rec.makespan),
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
            in_pattern.near_optimum_claim(format!("{FIGURE}/{}/best-run-near-optimum", p.name)),
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
