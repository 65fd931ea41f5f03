//! The controlled-delay straggler (CDS) experiment of async.txt §6.3, shared by async-fig3-4
//! (SGD vs ASGD) and async-fig5-6 (SAGA vs ASAGA): one of P workers is delayed by 0-100% of
//! its task time; the synchronous and asynchronous variants run on each dataset twin; the
//! convergence figure compares time to a target error and the wait figure the workers' mean
//! wait for tasks.

use crate::harness::cli::driver_tag;
use crate::harness::experiment::{Experiment, NoArgs, Run};
use crate::harness::output::progress;
use crate::harness::parallel::map_runs;
use crate::judge::format::show;
use crate::judge::sensitivity::Sensitivity;
use crate::workloads::least_squares::{
    mean_wait_ms, run_variant, variant_label, wait_per_worker_ms, AsyncCommon, AsyncDataset,
    Variant,
};
use crate::ExperimentOutput;
use anyhow::{bail, Result};
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;
use bench_core::straggler::{SlowWorker, StragglerConfig};
use bench_core::workload::Method;
use serde::{Deserialize, Serialize};

/// The CDS configuration (`configs/async-cds.*.toml`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CdsConfig {
    /// Delay intensities as fractions of the task time (0.3 = 30%: the worker runs at 1/1.3 of
    /// the speed), each in [0, 10].
    pub delays: Vec<f64>,
    /// The delayed worker.
    pub straggler: usize,
    /// Log-normal jitter of every task time (0 = none).
    pub jitter_sigma: f64,
    /// Largest relative spread (max - min) / min allowed for "independent of the delay".
    pub flat_tolerance: f64,
    /// Speedup of the asynchronous variant required at the largest delay.
    pub min_speedup_at_max_delay: f64,
    /// Settings every ASYNC experiment has.
    pub common: AsyncCommon,
    /// Dataset twins.
    pub datasets: Vec<AsyncDataset>,
    /// Sensitivity of the time-to-target claims to the step size (issue 15, item 6): the
    /// synchronous step (and with it the asynchronous step / workers) scaled by each factor,
    /// first seed, sim driver, written to the convergence figure's `sensitivity.csv`.
    #[serde(default)]
    pub sensitivity: Option<CdsSensitivity>,
}

/// The step-size grid of [`CdsConfig::sensitivity`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CdsSensitivity {
    /// Factors applied to every dataset's configured step (1, the headline, is always in).
    pub step_scale: Vec<f64>,
}

impl CdsConfig {
    /// Checks everything before any run starts.
    ///
    /// # Errors
    /// Names the offending field.
    pub fn validate(&self) -> Result<()> {
        self.common.validate()?;
        if self.delays.is_empty() {
            bail!("delays must list at least one delay");
        }
        for (i, &d) in self.delays.iter().enumerate() {
            if !(0.0..=10.0).contains(&d) {
                bail!(
                    "delays[{i}] = {d} is out of range: a delay is a fraction of the task time in [0, 10] (0% to 1000%)"
                );
            }
        }
        if self.delays.windows(2).any(|w| w[0] >= w[1]) {
            bail!("delays must be strictly increasing");
        }
        if self.straggler >= self.common.workers {
            bail!(
                "straggler = {} but the run has workers 0..{}",
                self.straggler,
                self.common.workers - 1
            );
        }
        if self.datasets.is_empty() {
            bail!("datasets must list at least one dataset");
        }
        for d in &self.datasets {
            d.validate(self.common.workers)?;
        }
        if let Some(g) = &self.sensitivity {
            if g.step_scale.is_empty() {
                bail!("sensitivity.step_scale is empty: list the step factors to try (1, the headline, is added)");
            }
            if let Some(x) = g.step_scale.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
                bail!("sensitivity.step_scale: {x} is not a positive factor");
            }
        }
        Ok(())
    }
}

#[derive(Serialize)]
struct CurveRow {
    dataset: String,
    variant: String,
    delay: f64,
    time: f64,
    error: f64,
}

#[derive(Serialize)]
struct SummaryRow {
    dataset: String,
    variant: String,
    delay: f64,
    seconds_to_target: String,
    target_error: f64,
    final_error: f64,
    makespan_s: f64,
    tasks: usize,
    max_staleness: u64,
    mean_wait_ms: f64,
    server_sent_mb: f64,
}

#[derive(Serialize)]
struct WaitRow {
    dataset: String,
    variant: String,
    delay: f64,
    worker: usize,
    mean_wait_ms: f64,
}

/// Measured numbers of one (dataset, delay) pair for one variant.
struct Point {
    time: Option<f64>,
    wait: f64,
}

/// One of the CDS figure pairs: what differs between them is the binary, its text, the method
/// and the two figure ids.
pub trait CdsFigures {
    /// The binary's name.
    const BINARY: &'static str;
    /// What it compares and writes, for `--help`.
    const ABOUT: &'static str;
    /// The optimisation method, run synchronously and asynchronously.
    const METHOD: Method;
    /// The convergence figure and the wait figure.
    const FIGURES: (&'static str, &'static str);
}

/// The CDS experiment of figure pair `C` (configs/async-cds.*.toml).
pub struct Cds<C>(std::marker::PhantomData<C>);

impl<C: CdsFigures> Experiment for Cds<C> {
    const BINARY: &'static str = C::BINARY;
    const ABOUT: &'static str = C::ABOUT;
    const QUICK: &'static str = include_str!("../../../configs/async-cds.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/async-cds.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    type Config = CdsConfig;
    type Args = NoArgs;

    fn figures(_: &NoArgs) -> Vec<&'static str> {
        vec![C::FIGURES.0, C::FIGURES.1]
    }

    fn validate(cfg: &CdsConfig, _: &NoArgs, _: &[DriverKind]) -> Result<()> {
        cfg.validate()
    }

    fn run(run: &mut Run<'_, Self>) -> Result<()> {
        self::run(run, C::METHOD, C::FIGURES)
    }
}

/// Runs the CDS experiment for `method`, writing `figures.0` (convergence) and `figures.1`
/// (waits) under the output directory.
///
/// # Errors
/// Bad configuration or a failed run; nothing is written then.
pub fn run<E: Experiment<Config = CdsConfig>>(
    run: &mut Run<'_, E>,
    method: Method,
    figures: (&str, &str),
) -> Result<()> {
    let (cfg, seed) = (run.cfg, run.seed);
    let drivers = run.drivers.to_vec();
    let (conv_fig, wait_fig) = figures;
    let (mut curves, mut summary, mut waits) = (Vec::new(), Vec::new(), Vec::new());
    let (sync_l, async_l) = (variant_label(method, true), variant_label(method, false));
    let pb = progress(
        (drivers.len() * cfg.datasets.len() * cfg.delays.len() * 2) as u64,
        &format!("{conv_fig} seed {seed}"),
    );
    let mut headline: Vec<Claim> = Vec::new();
    let mut notes = vec![format!(
        "{} workers; worker {} delayed by each of {:?} of its task time; {sync_l}: BSP barrier, one step per round; {async_l}: barrier '{}', one step per result with step / {}",
        cfg.common.workers, cfg.straggler, cfg.delays, cfg.common.async_barrier, cfg.common.workers
    )];
    for &driver in &drivers {
        for ds in &cfg.datasets {
            let data = ds.prepare(seed)?;
            let settings = ds.settings(method);
            let target = settings.target_relative_error * data.initial_error;
            notes.push(format!(
                "{}: synthetic twin {} rows x {} features, {} non-zeros; optimum {:.6} by CGLS ({} iterations, relative residual {:.1e}); initial error {:.4}; target error {:.5} ({} x initial); b = {}",
                data.name, data.shape.0, data.shape.1, data.shape.2, data.optimum.objective,
                data.optimum.iterations, data.optimum.relative_residual, data.initial_error,
                target, settings.target_relative_error, settings.sampling_rate
            ));
            let mut points: Vec<(Point, Point)> = Vec::new();
            // Every (delay, variant) run; simulator runs share the cores
            // (crate::harness::parallel), the rows are written in this order either way.
            let jobs: Vec<(f64, bool)> = cfg
                .delays
                .iter()
                .flat_map(|&delay| [(delay, true), (delay, false)])
                .collect();
            let mut recs = map_runs(driver == DriverKind::Sim, &jobs, |&(delay, sync)| {
                let label = variant_label(method, sync);
                pb.set_message(format!("{} {label} delay {delay}", data.name));
                let r = run_variant(
                    driver,
                    &cfg.common,
                    &data,
                    &settings,
                    Variant { method, sync },
                    &stragglers(cfg, delay),
                    seed,
                )?;
                pb.inc(1);
                Ok(r)
            })?
            .into_iter();
            for &delay in &cfg.delays {
                let mut pair = Vec::new();
                for sync in [true, false] {
                    let label = variant_label(method, sync);
                    let r = recs.next().expect("one run per (delay, variant)");
                    let variant = driver_tag(label, "-", driver, &drivers);
                    for p in &r.progress {
                        curves.push(CurveRow {
                            dataset: data.name.clone(),
                            variant: variant.clone(),
                            delay,
                            time: p.time,
                            error: p.loss,
                        });
                    }
                    for (worker, w) in wait_per_worker_ms(&r, cfg.common.workers)
                        .into_iter()
                        .enumerate()
                    {
                        waits.push(WaitRow {
                            dataset: data.name.clone(),
                            variant: variant.clone(),
                            delay,
                            worker,
                            mean_wait_ms: w,
                        });
                    }
                    let time = r.time_to_loss(target);
                    summary.push(SummaryRow {
                        dataset: data.name.clone(),
                        variant,
                        delay,
                        seconds_to_target: show(time),
                        target_error: target,
                        final_error: r.progress.last().map_or(f64::NAN, |p| p.loss),
                        makespan_s: r.makespan as f64 * 1e-9,
                        tasks: r.iterations.len(),
                        max_staleness: r.iterations.iter().map(|x| x.staleness).max().unwrap_or(0),
                        mean_wait_ms: mean_wait_ms(&r),
                        server_sent_mb: r.bytes_sent.first().copied().unwrap_or(0) as f64 / 1e6,
                    });
                    pair.push(Point {
                        time,
                        wait: mean_wait_ms(&r),
                    });
                }
                let a = pair.pop().expect("two variants");
                let s = pair.pop().expect("two variants");
                points.push((s, a));
            }
            let tag = driver_tag(&data.name, "/", driver, &drivers);
            let conv = run.out_for(conv_fig);
            for c in conv_claims(conv_fig, &tag, cfg, &points, (sync_l, async_l)) {
                if driver == DriverKind::Sim {
                    headline.push(c.clone());
                }
                conv.claim(c);
            }
            let wait = run.out_for(wait_fig);
            wait_claims(wait, wait_fig, &tag, cfg, &points, (sync_l, async_l));
        }
    }
    pb.finish_and_clear();
    let conv = run.out_for(conv_fig);
    conv.csv("curves.csv", &curves)?;
    conv.csv("summary.csv", &summary)?;
    let wait = run.out_for(wait_fig);
    wait.csv("waits.csv", &waits)?;
    wait.csv("summary.csv", &summary)?;
    if let Some(grid) = &cfg.sensitivity {
        if seed == run.common.seed && drivers.contains(&DriverKind::Sim) {
            let sens = step_sensitivity(cfg, grid, method, conv_fig, &headline, seed, &drivers)?;
            sens.write(run.out_for(conv_fig))?;
            notes.push(format!(
                "sensitivity.csv (first seed, sim driver): the {conv_fig} claims re-derived with every dataset's step scaled by {:?}; verdicts that flip over the grid: {}",
                scales(grid),
                sens.fragile_note()
            ));
        }
    }
    notes.push("error = objective - optimum of the least-squares objective 1/(2n) sum (x.w - y)^2 on the twin; time-to-target is the first evaluation at or below the target; waits are worker-side (result submitted to next task received)".into());
    // The least-squares twins record no provenance of their own (their shape is the config).
    run.notes(notes);
    Ok(())
}

/// One worker (`cfg.straggler`) delayed by `delay` of its task time, with the configured jitter.
fn stragglers(cfg: &CdsConfig, delay: f64) -> StragglerConfig {
    StragglerConfig {
        slow: vec![SlowWorker {
            worker: cfg.straggler,
            factor: 1.0 + delay,
        }],
        jitter_sigma: cfg.jitter_sigma,
        production: None,
        random: None,
        trace: None,
    }
}

/// The grid's step factors, with the headline's 1, sorted, without repeats.
fn scales(grid: &CdsSensitivity) -> Vec<f64> {
    crate::judge::sensitivity::grid(&grid.step_scale, 1.0)
}

/// The convergence claims re-derived (sim driver, `seed`) with every dataset's step scaled by
/// each factor of `grid`; factor 1 is `headline`'s claims, not run again.
fn step_sensitivity(
    cfg: &CdsConfig,
    grid: &CdsSensitivity,
    method: Method,
    fig: &str,
    headline: &[Claim],
    seed: u64,
    drivers: &[DriverKind],
) -> Result<Sensitivity> {
    // Quick-scale twins: holding them all is cheap (the paper configurations have no grid).
    let data = cfg
        .datasets
        .iter()
        .map(|d| d.prepare(seed))
        .collect::<Result<Vec<_>>>()?;
    let grid_points = scales(grid)
        .into_iter()
        .map(|k| {
            let headline = (k - 1.0).abs() < f64::EPSILON;
            (vec![("step_scale", k.to_string())], headline, k)
        })
        .collect();
    let labels = (variant_label(method, true), variant_label(method, false));
    Sensitivity::sweep(
        &format!("{fig} sensitivity"),
        true,
        grid_points,
        headline,
        |&k, _| {
            let mut claims = Vec::new();
            for (ds, d) in cfg.datasets.iter().zip(&data) {
                let mut settings = ds.settings(method);
                settings.step *= k;
                let jobs: Vec<(f64, bool)> = cfg
                    .delays
                    .iter()
                    .flat_map(|&delay| [(delay, true), (delay, false)])
                    .collect();
                let runs = map_runs(true, &jobs, |&(delay, sync)| {
                    run_variant(
                        DriverKind::Sim,
                        &cfg.common,
                        d,
                        &settings,
                        Variant { method, sync },
                        &stragglers(cfg, delay),
                        seed,
                    )
                    .map(|r| Point {
                        time: r.time_to_loss(settings.target_relative_error * d.initial_error),
                        wait: mean_wait_ms(&r),
                    })
                })?;
                let mut runs = runs.into_iter();
                let points: Vec<(Point, Point)> = cfg
                    .delays
                    .iter()
                    .map(|_| {
                        let s = runs.next().expect("synchronous run");
                        let a = runs.next().expect("asynchronous run");
                        (s, a)
                    })
                    .collect();
                let tag = driver_tag(&d.name, "/", DriverKind::Sim, drivers);
                claims.extend(conv_claims(fig, &tag, cfg, &points, labels));
            }
            Ok(claims)
        },
    )
}

fn spread(v: &[f64]) -> f64 {
    let max = v.iter().copied().fold(f64::NAN, f64::max);
    let min = v.iter().copied().fold(f64::NAN, f64::min);
    (max - min) / min
}

/// The convergence figure's claims for one dataset (`tag`), from each delay's (synchronous,
/// asynchronous) time to target: the asynchronous variant faster at every delay, its speedup at
/// the largest delay, its time nearly independent of the delay, and both variants reaching the
/// target at every delay. A variant that never reaches the target loses to one that does.
fn conv_claims(
    fig: &str,
    tag: &str,
    cfg: &CdsConfig,
    points: &[(Point, Point)],
    (s, a): (&str, &str),
) -> Vec<Claim> {
    let mut out = Vec::new();
    let pairs: Vec<String> = cfg
        .delays
        .iter()
        .zip(points)
        .map(|(d, (sp, ap))| {
            format!(
                "{:.0}%: {s} {} / {a} {}",
                d * 100.0,
                show(sp.time),
                show(ap.time)
            )
        })
        .collect();
    let faster = points.iter().all(|(sp, ap)| match (sp.time, ap.time) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(st), Some(at)) => at < st,
    });
    out.push(Claim::check(
        format!("{fig}/{tag}/{a}-faster-each-delay"),
        format!("{a} reaches the target error before {s} at every delay"),
        format!("{a} always faster"),
        pairs.join("; "),
        faster,
    ));
    let (last_d, (sp, ap)) = (
        cfg.delays.last().copied().unwrap_or(0.0),
        points.last().expect("at least one delay"),
    );
    let speedup = match (sp.time, ap.time) {
        (Some(st), Some(at)) => st / at,
        (None, Some(_)) => f64::INFINITY,
        _ => 0.0,
    };
    out.push(Claim::check(
        format!("{fig}/{tag}/speedup-at-max-delay"),
        format!(
            "{a} speedup over {s} at {:.0}% delay >= {}",
            last_d * 100.0,
            cfg.min_speedup_at_max_delay
        ),
        "about 2x at 100%",
        format!("{speedup:.2}x"),
        speedup >= cfg.min_speedup_at_max_delay,
    ));
    let times: Vec<Option<f64>> = points.iter().map(|(_, ap)| ap.time).collect();
    let all: Option<Vec<f64>> = times.iter().copied().collect();
    let (measured, ok) = match all {
        Some(t) => (
            format!(
                "{a} times {:?} s: spread {:.1}%",
                t.iter()
                    .map(|x| (x * 1000.0).round() / 1000.0)
                    .collect::<Vec<_>>(),
                spread(&t) * 100.0
            ),
            spread(&t) < cfg.flat_tolerance,
        ),
        None => (format!("{a} misses the target at some delay"), false),
    };
    out.push(Claim::check(
        format!("{fig}/{tag}/{a}-independent-of-delay"),
        format!(
            "{a} time-to-target varies < {:.0}% across delays",
            cfg.flat_tolerance * 100.0
        ),
        format!("{a} nearly independent of the delay"),
        measured,
        ok,
    ));
    // The papers' curves: both variants converge at every delay, the synchronous one later.
    let missed: Vec<String> = cfg
        .delays
        .iter()
        .zip(points)
        .flat_map(|(d, (sp, ap))| {
            [(s, sp), (a, ap)]
                .into_iter()
                .filter(|(_, p)| p.time.is_none())
                .map(move |(v, _)| format!("{v} at {:.0}%", d * 100.0))
        })
        .collect();
    out.push(Claim::check(
        format!("{fig}/{tag}/every-run-reaches-target"),
        format!("{s} and {a} reach the target error at every delay"),
        "every compared run converges in the paper's figure",
        if missed.is_empty() {
            format!("{} of {} runs reach it", 2 * points.len(), 2 * points.len())
        } else {
            format!("never: {}", missed.join(", "))
        },
        missed.is_empty() && !points.is_empty(),
    ));
    out
}

fn wait_claims(
    out: &mut ExperimentOutput,
    fig: &str,
    tag: &str,
    cfg: &CdsConfig,
    points: &[(Point, Point)],
    (s, a): (&str, &str),
) {
    let sw: Vec<f64> = points.iter().map(|(sp, _)| sp.wait).collect();
    let aw: Vec<f64> = points.iter().map(|(_, ap)| ap.wait).collect();
    let fmt = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    out.claim(Claim::check(
        format!("{fig}/{tag}/{s}-wait-grows"),
        format!("{s}'s mean wait increases monotonically with the delay"),
        "grows with the delay",
        format!("{s} waits {} ms at delays {:?}", fmt(&sw), cfg.delays),
        sw.windows(2).all(|w| w[1] > w[0]),
    ));
    let sp = spread(&aw);
    out.claim(Claim::check(
        format!("{fig}/{tag}/{a}-wait-flat"),
        format!(
            "{a}'s mean wait stays within {:.0}% across delays",
            cfg.flat_tolerance * 100.0
        ),
        "flat",
        format!("{a} waits {} ms: spread {:.1}%", fmt(&aw), sp * 100.0),
        sp < cfg.flat_tolerance,
    ));
    // async.txt: the difference "is more noticeable when the delay increases to 100%".
    let gap: Vec<f64> = sw.iter().zip(&aw).map(|(s, a)| s - a).collect();
    let grows = gap.windows(2).all(|w| w[1] > w[0])
        && gap.len() > 1
        && gap[gap.len() - 1] > 0.0
        && gap[0] <= 0.5 * gap[gap.len() - 1];
    out.claim(Claim::check(
        format!("{fig}/{tag}/wait-gap-grows"),
        format!(
            "{s}'s wait minus {a}'s grows at every delay step, the smallest delay's at most half the largest's"
        ),
        "the difference is more noticeable as the delay grows",
        format!("gap {} ms at delays {:?}", fmt(&gap), cfg.delays),
        grows,
    ));
}
