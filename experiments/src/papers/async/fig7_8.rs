//! async-fig7-8: SGD vs ASGD and SAGA vs ASAGA on 32 workers with production-cluster
//! stragglers (ASYNC §6.3, Figures 7 and 8, Table 3).

use crate::harness::cli::driver_tag;
use crate::harness::experiment::{self, Experiment, NoArgs, Run};
use crate::harness::output::progress;
use crate::harness::parallel::map_runs;
use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};
use crate::judge::format::show;
use crate::judge::sensitivity::Sensitivity;
use crate::workloads::least_squares::{
    mean_wait_ms, run_variant, AsyncCommon, AsyncDataset, Variant,
};
use crate::ExperimentOutput;
use anyhow::bail;
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;
use bench_core::metrics::seconds;
use bench_core::metrics::{ProgressRow, RunRecords};
use bench_core::straggler::{ProductionStragglers, StragglerConfig};
use bench_core::workload::Method;
use serde::{Deserialize, Serialize};

const FIG7: &str = "async-fig7";
const FIG8: &str = "async-fig8";
const TABLE3: &str = "async-table3";

struct AsyncFig7To8;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// The straggler pattern.
    production: ProductionStragglers,
    /// Log-normal jitter of every task time.
    jitter_sigma: f64,
    /// Speedup (time to target, sync / async) the claims require.
    min_speedup: f64,
    common: AsyncCommon,
    datasets: Vec<AsyncDataset>,
    /// Table 3's claims re-derived over knobs the ASYNC paper does not give (async-table3's
    /// sensitivity.csv; first seed, sim driver).
    #[serde(default)]
    sensitivity: Option<Grid>,
}

/// `[sensitivity]` of Table 3.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Grid {
    /// Per-message software cost in ns (`[common.network] send_overhead_ns`), tried besides the
    /// configured one: Spark's per-task dispatch, inside ASYNC's waits (from a result's
    /// submission to the next task's arrival) and absent from a constant-latency model.
    send_overhead_ns: Vec<u64>,
}

#[derive(Serialize)]
struct CurveRow {
    dataset: String,
    variant: String,
    time: f64,
    error: f64,
}

#[derive(Serialize)]
struct SummaryRow {
    dataset: String,
    variant: String,
    seconds_to_target: String,
    target_error: f64,
    final_error: f64,
    makespan_s: f64,
    tasks: usize,
    max_staleness: u64,
    mean_wait_ms: f64,
}

#[derive(Serialize)]
struct TableRow {
    dataset: String,
    sgd_wait_ms: f64,
    asgd_wait_ms: f64,
    saga_wait_ms: f64,
    asaga_wait_ms: f64,
    paper: String,
}

#[derive(Serialize)]
struct StragglerRow {
    worker: usize,
    kind: String,
    delay_range: String,
}

/// Table 3 of the paper: mean wait per iteration (SGD, ASGD, SAGA, ASAGA), in ms.
fn paper_waits(dataset: &str) -> &'static str {
    match dataset {
        "mnist8m" => "42.8367 / 9.8125 / 6.4433 / 3.5745 ms",
        "epsilon" => "6.9926 / 1.1721 / 5.3112 / 1.4165 ms",
        _ => "n/a",
    }
}

impl Experiment for AsyncFig7To8 {
    const BINARY: &'static str = "async-fig7-8";
    const ABOUT: &'static str = "ASYNC Figures 7-8 and Table 3: synchronous vs asynchronous SGD and SAGA on 32 workers under production-cluster stragglers (25% of workers straggle: 80% of them 1.5-2.5x the task time longer, 20% long-tail 2.5-10x; fixed seed). Writes results/async-fig7/ (SGD, ASGD), results/async-fig8/ (SAGA, ASAGA) and results/async-table3/ (mean waits), each with claims and a manifest.";
    const QUICK: &'static str = include_str!("../../../configs/async-pcs.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/async-pcs.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = Config;
    type Args = NoArgs;

    fn figures(_: &NoArgs) -> Vec<&'static str> {
        vec![FIG7, FIG8, TABLE3]
    }

    fn validate(cfg: &Config, _: &NoArgs, _: &[DriverKind]) -> anyhow::Result<()> {
        cfg.common.validate()?;
        cfg.production.validate()?;
        if cfg.datasets.is_empty() {
            bail!("datasets must list at least one dataset");
        }
        for d in &cfg.datasets {
            d.validate(cfg.common.workers)?;
        }
        Ok(())
    }

    fn run(run: &mut Run<'_, Self>) -> anyhow::Result<()> {
        let (cfg, seed) = (run.cfg, run.seed);
        let drivers = run.drivers.to_vec();
        let stragglers = StragglerConfig {
            slow: vec![],
            jitter_sigma: cfg.jitter_sigma,
            production: Some(cfg.production),
            random: None,
            trace: None,
        };
        let pb = progress(
            (drivers.len() * cfg.datasets.len() * 4) as u64,
            "async-fig7-8",
        );
        let (mut curves7, mut curves8, mut summary, mut rows) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut headline: Vec<Claim> = Vec::new();
        let mut notes = vec![format!(
            "{} workers; production-cluster stragglers {:?} drawn per task from seed {seed}; async barrier '{}', async step = sync step / {}",
            cfg.common.workers, cfg.production, cfg.common.async_barrier, cfg.common.workers
        )];
        for &driver in &drivers {
            for ds in &cfg.datasets {
                let data = ds.prepare(seed)?;
                let tag = driver_tag(&data.name, "/", driver, &drivers);
                let mut waits = [0.0f64; 4];
                // The four (method, variant) runs; simulator runs share the cores
                // (crate::harness::parallel), the rows are written in this order either way.
                let jobs: Vec<Variant> = [Method::Sgd, Method::Saga]
                    .into_iter()
                    .flat_map(|method| [true, false].map(|sync| Variant { method, sync }))
                    .collect();
                let recs = map_runs(driver == DriverKind::Sim, &jobs, |&variant| {
                    pb.set_message(format!("{} {}", data.name, variant.label()));
                    let r = run_variant(
                        driver,
                        &cfg.common,
                        &data,
                        &ds.settings(variant.method),
                        variant,
                        &stragglers,
                        seed,
                    )?;
                    pb.inc(1);
                    Ok(r)
                })?;
                let mut recs = recs.into_iter();
                for (k, method) in [Method::Sgd, Method::Saga].into_iter().enumerate() {
                    let settings = ds.settings(method);
                    let target = settings.target_relative_error * data.initial_error;
                    notes.push(format!(
                        "{} {method:?}: twin {} x {} ({} non-zeros), optimum {:.6}, initial error {:.4}, target {:.5}, b = {}",
                        data.name, data.shape.0, data.shape.1, data.shape.2,
                        data.optimum.objective, data.initial_error, target, settings.sampling_rate
                    ));
                    let mut runs: Vec<(Variant, RunRecords)> = Vec::new();
                    for sync in [true, false] {
                        let variant = Variant { method, sync };
                        let r = recs.next().expect("one run per (method, variant)");
                        waits[2 * k + usize::from(!sync)] = mean_wait_ms(&r);
                        let curves = if method == Method::Sgd {
                            &mut curves7
                        } else {
                            &mut curves8
                        };
                        for p in &r.progress {
                            curves.push(CurveRow {
                                dataset: tag.clone(),
                                variant: variant.label().into(),
                                time: p.time,
                                error: p.loss,
                            });
                        }
                        summary.push(SummaryRow {
                            dataset: tag.clone(),
                            variant: variant.label().into(),
                            seconds_to_target: show(r.time_to_loss(target)),
                            target_error: target,
                            final_error: r.progress.last().map_or(f64::NAN, |p| p.loss),
                            makespan_s: seconds(r.makespan),
                            tasks: r.iterations.len(),
                            max_staleness: r
                                .iterations
                                .iter()
                                .map(|x| x.staleness)
                                .max()
                                .unwrap_or(0),
                            mean_wait_ms: mean_wait_ms(&r),
                        });
                        runs.push((variant, r));
                    }
                    let out = run.out_for(if method == Method::Sgd { FIG7 } else { FIG8 });
                    speedup_claim(out, &tag, &runs, target, cfg.min_speedup);
                }
                let claims = wait_claims(&tag, &waits);
                if driver == DriverKind::Sim {
                    headline.extend(claims.iter().cloned());
                }
                for claim in claims {
                    run.out_for(TABLE3).claim(claim);
                }
                rows.push(TableRow {
                    dataset: tag,
                    sgd_wait_ms: waits[0],
                    asgd_wait_ms: waits[1],
                    saga_wait_ms: waits[2],
                    asaga_wait_ms: waits[3],
                    paper: paper_waits(&data.name).into(),
                });
            }
        }
        pb.finish_and_clear();
        let assignment: Vec<StragglerRow> = cfg
            .production
            .assignment(cfg.common.workers, seed)
            .iter()
            .enumerate()
            .map(|(worker, r)| StragglerRow {
                worker,
                kind: match r {
                    None => "none".into(),
                    Some(x) if *x == cfg.production.long_tail => "long-tail".into(),
                    Some(_) => "moderate".into(),
                },
                delay_range: r.map_or_else(String::new, |[lo, hi]| format!("{lo}-{hi}")),
            })
            .collect();
        run.out_for(FIG7).csv("curves.csv", &curves7)?;
        run.out_for(FIG8).csv("curves.csv", &curves8)?;
        for fig in [FIG7, FIG8, TABLE3] {
            run.out_for(fig).csv("summary.csv", &summary)?;
            run.out_for(fig).csv("stragglers.csv", &assignment)?;
        }
        run.out_for(TABLE3).csv("table.csv", &rows)?;
        notes.push("error = objective - optimum (least squares, CGLS optimum); waits are worker-side, from a result's submission to the next task's arrival".into());
        notes.push(format!(
            "every message pays {} ns of sender-side software cost before the NIC (send_overhead_ns; Spark's per-task dispatch, serialised at the coordinator)",
            cfg.common.network.send_overhead_ns
        ));
        if let Some(grid) = &cfg.sensitivity {
            if seed == run.common.seed && drivers.contains(&DriverKind::Sim) && !headline.is_empty()
            {
                let s = table3_sensitivity(cfg, grid, &headline, &stragglers, seed)?;
                s.write(run.out_for(TABLE3))?;
                let note = format!(
                    "async-table3 sensitivity.csv (first seed, sim driver): Table 3's claims re-derived at send_overhead_ns in {:?} (besides the configured {}); verdicts that flip over the grid: {}",
                    grid.send_overhead_ns,
                    cfg.common.network.send_overhead_ns,
                    s.fragile_note()
                );
                notes.push(note);
            }
        }
        run.notes(notes);
        Ok(())
    }
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<AsyncFig7To8>()
}

/// Table 3's claims at every `send_overhead_ns` of `grid` (sim driver, every dataset, the four
/// variants each); the configured value takes `headline`'s claims.
///
/// # Errors
/// Any error of the runs.
fn table3_sensitivity(
    cfg: &Config,
    grid: &Grid,
    headline: &[Claim],
    stragglers: &StragglerConfig,
    seed: u64,
) -> anyhow::Result<Sensitivity> {
    let configured = cfg.common.network.send_overhead_ns;
    let mut values = grid.send_overhead_ns.clone();
    values.push(configured);
    values.sort_unstable();
    values.dedup();
    let points = values
        .into_iter()
        .map(|v| {
            (
                vec![("send_overhead_ns", v.to_string())],
                v == configured,
                v,
            )
        })
        .collect();
    let jobs: Vec<Variant> = [Method::Sgd, Method::Saga]
        .into_iter()
        .flat_map(|method| [true, false].map(|sync| Variant { method, sync }))
        .collect();
    Sensitivity::sweep(
        "async-table3 sensitivity",
        true,
        points,
        headline,
        |&v, _| {
            let mut common = cfg.common.clone();
            common.network.send_overhead_ns = v;
            let mut claims = Vec::new();
            for ds in &cfg.datasets {
                let data = ds.prepare(seed)?;
                let tag = driver_tag(&data.name, "/", DriverKind::Sim, &[DriverKind::Sim]);
                let mut waits = [0.0f64; 4];
                for (i, variant) in jobs.iter().enumerate() {
                    let r = run_variant(
                        DriverKind::Sim,
                        &common,
                        &data,
                        &ds.settings(variant.method),
                        *variant,
                        stragglers,
                        seed,
                    )?;
                    waits[i] = mean_wait_ms(&r);
                }
                claims.extend(wait_claims(&tag, &waits));
            }
            Ok(claims)
        },
    )
}

/// How far a measured speedup may lie from the paper's, as a factor on either side. The paper
/// states its speedups as whole or half numbers read off its curves at a target it does not
/// give (ASYNC §6.3: 3x and 4x, 3.5x and 4x); its own two datasets differ by a factor of 4/3
/// for the same method, so a factor of 1.5 allows that spread and a little more.
const SPEEDUP_BAND: f64 = 1.5;

fn speedup_claim(
    out: &mut ExperimentOutput,
    tag: &str,
    runs: &[(Variant, RunRecords)],
    target: f64,
    min: f64,
) {
    let (s, a) = (&runs[0], &runs[1]);
    let (st, at) = (s.1.time_to_loss(target), a.1.time_to_loss(target));
    let speedup = match (st, at) {
        (Some(x), Some(y)) => x / y,
        (None, Some(_)) => f64::INFINITY,
        _ => 0.0,
    };
    let fig = if s.0.method == Method::Sgd {
        "async-fig7"
    } else {
        "async-fig8"
    };
    let paper = match (s.0.method, tag.split('/').next().unwrap_or("")) {
        (Method::Sgd, "mnist8m") => 3.0,
        (Method::Sgd, "epsilon") => 4.0,
        (Method::Saga, "mnist8m") => 3.5,
        _ => 4.0,
    };
    // The paper's value with a band on both sides: a speedup far above the paper's says our
    // straggler model or target differs as much as one below it.
    let (low, high) = ((paper / SPEEDUP_BAND).max(min), paper * SPEEDUP_BAND);
    out.claim(
        Claim::check(
            format!("{fig}/{tag}/{}-speedup", a.0.label()),
            format!(
                "{} reaches the target error {low:.2}x to {high:.2}x sooner than {} (the paper's speedup within a factor of {SPEEDUP_BAND}, and at least {min}x)",
                a.0.label(),
                s.0.label()
            ),
            format!("{paper}x (ASYNC §6.3, Fig {})", &fig["async-fig".len()..]),
            format!(
                "{speedup:.2}x ({} {} s, {} {} s)",
                s.0.label(),
                show(st),
                a.0.label(),
                show(at)
            ),
            (low..=high).contains(&speedup),
        )
        // A measured speedup only: not the stand-ins for a run that never got there.
        .with_value(if st.is_some() && at.is_some() {
            speedup
        } else {
            f64::NAN
        }),
    );
    // The figures' curves: the asynchronous run's error sits at or below the synchronous run's
    // over the whole run, not only at the target.
    let (above, compared) = curve_above(&a.1.progress, &s.1.progress);
    out.claim(
        Claim::check(
            format!(
                "{fig}/{tag}/{}-below-{}-whole-curve",
                a.0.label(),
                s.0.label()
            ),
            format!(
                "{}'s error is at or below {}'s at >= {:.0}% of its evaluations while both run",
                a.0.label(),
                s.0.label(),
                (1.0 - CURVE_SLACK) * 100.0
            ),
            "the asynchronous curve lies below the synchronous one",
            format!("above at {above} of {compared} evaluations"),
            compared > 0 && (above as f64) <= CURVE_SLACK * compared as f64,
        )
        .with_value(above as f64 / compared as f64),
    );
}

/// The share of evaluations where the asynchronous curve may sit above the synchronous one (a
/// noisy crossing) and still count as lying below it.
const CURVE_SLACK: f64 = 0.05;

/// Of `a`'s evaluations within `s`'s time span, how many have an error above `s`'s at the same
/// time (linearly interpolated between `s`'s evaluations), and how many were compared. A NaN
/// on either side counts as above.
fn curve_above(a: &[ProgressRow], s: &[ProgressRow]) -> (usize, usize) {
    let (Some(first), Some(last)) = (s.first(), s.last()) else {
        return (0, 0);
    };
    let mut above = 0;
    let mut compared = 0;
    for p in a
        .iter()
        .filter(|p| p.time >= first.time && p.time <= last.time)
    {
        let k = s.partition_point(|q| q.time <= p.time);
        let q0 = &s[k - 1];
        let at = match s.get(k) {
            Some(q1) if q1.time > q0.time => {
                q0.loss + (q1.loss - q0.loss) * (p.time - q0.time) / (q1.time - q0.time)
            }
            _ => q0.loss,
        };
        compared += 1;
        if p.loss.is_nan() || at.is_nan() || p.loss > at {
            above += 1;
        }
    }
    (above, compared)
}

/// Table 3's waits in ms (SGD, ASGD, SAGA, ASAGA; the order `paper_waits` quotes), where the
/// paper has the dataset.
fn paper_wait_values(dataset: &str) -> Option<[f64; 4]> {
    match dataset {
        "mnist8m" => Some([42.8367, 9.8125, 6.4433, 3.5745]),
        "epsilon" => Some([6.9926, 1.1721, 5.3112, 1.4165]),
        _ => None,
    }
}

/// How far the measured asynchronous/synchronous wait ratio may sit from Table 3's and still
/// count as its shape (a factor either way: twin data and modelled stragglers, not the paper's
/// cluster).
const WAIT_RATIO_FACTOR: f64 = 3.0;

/// ASYNC's Table 3 statement on the synchronous waits: they increase considerably, so each
/// asynchronous variant's mean wait better (lower) than its synchronous one's by more than the
/// default tolerance.
const SYNC_WAITS_MORE: PaperComparison = PaperComparison {
    quote: "The wait time increases considerably for all synchronous implementations which results in slower convergence of the synchronous methods",
    source: "ASYNC §6.3, Table 3",
    allows: Allows::Better,
    tolerance: DEFAULT_TOLERANCE,
};

fn wait_claims(tag: &str, w: &[f64; 4]) -> Vec<Claim> {
    let mut claims = Vec::new();
    for (k, (s, a)) in [("sgd", "asgd"), ("saga", "asaga")].into_iter().enumerate() {
        let (sw, aw) = (w[2 * k], w[2 * k + 1]);
        if let Some(p) = paper_wait_values(tag.split('/').next().unwrap_or("")) {
            // Table 3's point is how much of the synchronous wait the asynchronous variant
            // removes, not only that it waits less.
            let (paper, ratio) = (p[2 * k + 1] / p[2 * k], aw / sw);
            claims.push(
                Claim::check(
                    format!("async-table3/{tag}/{a}-{s}-wait-ratio"),
                    format!(
                        "{a}'s mean wait over {s}'s is within {WAIT_RATIO_FACTOR}x of Table 3's ratio"
                    ),
                    format!("{paper:.3}"),
                    format!("{ratio:.4} ({aw:.3} / {sw:.3} ms)"),
                    ratio >= paper / WAIT_RATIO_FACTOR && ratio <= paper * WAIT_RATIO_FACTOR,
                )
                .with_value(ratio),
            );
        }
        // Three outcomes, as the paper words it; a wait of 0 is no ratio, and then below is
        // strictly below.
        let (below, how) = SYNC_WAITS_MORE.judge(Some(aw), Some(sw));
        claims.push(
            Claim::check(
                format!("async-table3/{tag}/{a}-wait-below-{s}"),
                format!(
                    "{a}'s mean wait per iteration is below {s}'s, by more than {:.0}% of {s}'s",
                    100.0 * SYNC_WAITS_MORE.tolerance
                ),
                format!(
                    "{}; {}",
                    paper_waits(tag.split('/').next().unwrap_or("")),
                    SYNC_WAITS_MORE.cite()
                ),
                format!("{s} {sw:.3} ms, {a} {aw:.3} ms: {how}"),
                below && aw < sw,
            )
            .with_value(aw / sw),
        );
    }
    claims
}

#[cfg(test)]
mod curve_tests {
    use super::*;

    fn curve(points: &[(f64, f64)]) -> Vec<ProgressRow> {
        points
            .iter()
            .map(|&(time, loss)| ProgressRow {
                time,
                iteration: time,
                loss,
                accuracy: f64::NAN,
                train_objective: None,
            })
            .collect()
    }

    #[test]
    fn a_curve_is_compared_with_the_other_s_latest_evaluation_within_its_span() {
        let s = curve(&[(0.0, 1.0), (2.0, 0.5), (4.0, 0.2)]);
        let below = curve(&[(0.0, 1.0), (1.0, 0.6), (3.0, 0.3), (5.0, 0.9)]);
        assert_eq!(curve_above(&below, &s), (0, 3));
        // At t = 1 the other curve is at 0.75 (interpolated), not at its earlier 1.0.
        let crossing = curve(&[(0.0, 1.0), (1.0, 0.8), (3.0, 0.6)]);
        assert_eq!(curve_above(&crossing, &s), (2, 3));
        let diverged = curve(&[(0.0, 1.0), (1.0, f64::NAN)]);
        assert_eq!(curve_above(&diverged, &s), (1, 2));
        assert_eq!(curve_above(&below, &[]), (0, 0));
    }
}
