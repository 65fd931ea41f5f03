//! The controlled-delay straggler (CDS) experiment of ASYNC §6.3, shared by async-fig3-4
//! (SGD vs ASGD) and async-fig5-6 (SAGA vs ASAGA): one of P workers is delayed by 0-100% of
//! its task time; the synchronous and asynchronous variants run on each dataset twin; the
//! convergence figure compares time to a target error and the wait figure the workers' mean
//! wait for tasks.

mod claims;
mod sensitivity;

use bench_core::metrics::seconds;
use claims::{conv_claims, wait_claims};
use sensitivity::{scales, step_sensitivity};

use crate::harness::cli::driver_tag;
use crate::harness::experiment::{Experiment, NoArgs, Run};
use crate::harness::output::progress;
use crate::harness::parallel::map_runs;
use crate::judge::format::show;
use crate::workloads::least_squares::{
    mean_wait_ms, run_variant, variant_label, wait_per_worker_ms, AsyncCommon, AsyncDataset,
    Variant,
};
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
    /// Sensitivity of the time-to-target claims to the step size: the synchronous step (and
    /// with it the asynchronous step / workers) scaled by each factor, first seed, sim driver,
    /// written to the convergence figure's `sensitivity.csv`.
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
    const QUICK: &'static str = include_str!("../../../../configs/async-cds.quick.toml");
    const PAPER: &'static str = include_str!("../../../../configs/async-cds.paper.toml");
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
                        makespan_s: seconds(r.makespan),
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
            wait_claims(
                wait,
                wait_fig,
                &tag,
                cfg,
                driver,
                &points,
                (sync_l, async_l),
            )?;
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
