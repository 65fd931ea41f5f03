//! ps-modes: the template protocol experiment (not a paper figure). SVM on RCV1-shaped data,
//! a parameter server with BSP, ASP and SSP(s), one slow worker, under the sim and threads
//! drivers: loss vs time, wait-time and staleness histograms, and three claims.

use crate::harness::experiment::{self, Experiment, NoArgs, Run};
use crate::harness::runner::{run_ps, RunSettings, ThreadsSection};
use crate::judge::verdict::Judge;
use crate::workloads::svm::SparseData;
use crate::ExperimentOutput;
use anyhow::{bail, Context, Result};
use bench_core::claims::Claim;
use bench_core::driver::{ComputeModel, DriverKind, NetworkModel};
use bench_core::metrics::seconds;
use bench_core::metrics::{RunRecords, WaitHistogram};
use bench_core::protocol::{ProtocolSpec, SyncMode};
use bench_core::straggler::StragglerConfig;
use bench_core::workload::SvmConfig;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

const FIGURE: &str = "ps-modes";

struct PsModes;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    workers: usize,
    iterations: u64,
    modes: Vec<String>,
    eval_every: u64,
    data: SparseData,
    svm: SvmConfig,
    compute: ComputeModel,
    network: NetworkModel,
    threads: ThreadsSection,
    stragglers: StragglerConfig,
}

#[derive(Serialize)]
struct SummaryRow {
    driver: String,
    mode: String,
    iterations: usize,
    makespan_s: f64,
    iteration_rate: f64,
    mean_wait_us: f64,
    p99_wait_us: u64,
    max_staleness: u64,
    mean_staleness: f64,
    final_loss: f64,
    final_accuracy: f64,
    bytes_total: u64,
}

#[derive(Serialize)]
struct WaitBucket {
    driver: String,
    mode: String,
    lower_us: u64,
    upper_us: u64,
    count: u64,
}

#[derive(Serialize)]
struct StalenessCount {
    driver: String,
    mode: String,
    staleness: u64,
    count: u64,
}

fn parse_modes(cfg: &Config) -> Result<Vec<SyncMode>> {
    Ok(cfg
        .modes
        .iter()
        .map(|m| SyncMode::parse(m))
        .collect::<Result<Vec<_>, _>>()?)
}

fn validate(cfg: &Config, modes: &[SyncMode]) -> Result<()> {
    if cfg.workers == 0 || cfg.iterations == 0 {
        bail!("workers and iterations must be >= 1");
    }
    cfg.data.validate(cfg.workers)?;
    if cfg.threads.ring_depth == 0 {
        bail!("threads.ring_depth must be >= 1");
    }
    for m in modes {
        m.validate()?;
        if let Some(s) = m.bound() {
            if *m != SyncMode::bsp() && s >= cfg.iterations {
                bail!(
                    "{}: staleness {s} is not below the run length of {} iterations",
                    m.label(),
                    cfg.iterations
                );
            }
            let caches = matches!(m, SyncMode::Ssp(_) | SyncMode::Essp(_));
            if caches && s as usize + 4 > cfg.threads.ring_depth {
                bail!(
                    "{}: threads.ring_depth {} must be >= staleness + 4 = {} (a worker may have that many writes in flight)",
                    m.label(),
                    cfg.threads.ring_depth,
                    s + 4
                );
            }
        }
    }
    cfg.stragglers.factors(cfg.workers)?;
    cfg.svm.validate()?;
    let c = cfg.compute.ns_per_example;
    if !(c.is_finite() && c >= 0.0) {
        bail!("compute.ns_per_example must be >= 0, got {c}");
    }
    cfg.network.validate(cfg.workers + 1)?;
    Ok(())
}

impl Experiment for PsModes {
    const BINARY: &'static str = FIGURE;
    const ABOUT: &'static str = "Parameter-server BSP / ASP / SSP on SVM with a straggler, under the sim and threads drivers. Writes results/ps-modes/: per-run iterations.csv and progress.csv, summary.csv, wait_hist.csv, staleness_hist.csv, claims.csv, manifest.json.";
    const QUICK: &'static str = include_str!("../../configs/ps-modes.quick.toml");
    const PAPER: &'static str = include_str!("../../configs/ps-modes.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim, DriverKind::Threads];
    type Config = Config;
    type Args = NoArgs;

    fn validate(cfg: &Config, _: &NoArgs, _: &[DriverKind]) -> Result<()> {
        validate(cfg, &parse_modes(cfg)?)
    }

    fn run(run: &mut Run<'_, Self>) -> Result<()> {
        let (cfg, seed) = (run.cfg, run.seed);
        let drivers = run.drivers.to_vec();
        let modes = parse_modes(cfg)?;
        let workload = cfg.data.svm_workload(cfg.svm, seed, run.data)?;
        let reference = cfg.data.reference(cfg.svm, seed, run.data);
        let settings = RunSettings {
            network: cfg.network.clone(),
            compute: cfg.compute,
            stragglers: cfg.stragglers.clone(),
            eval_every: cfg.eval_every,
            threads: cfg.threads.clone(),
            iteration_ns: None,
            wire_bytes: None,
        };
        let pb = run.progress((drivers.len() * modes.len()) as u64);
        let out = run.out();
        let mut summary = Vec::new();
        let mut waits = Vec::new();
        let mut stale = Vec::new();
        let mut by_run: BTreeMap<(String, String), RunRecords> = BTreeMap::new();
        for &driver in &drivers {
            for &mode in &modes {
                pb.set_message(format!("{} {}", driver.label(), mode.label()));
                let spec = ProtocolSpec {
                    mode,
                    workers: cfg.workers,
                    iterations: cfg.iterations,
                };
                let rec = run_ps(driver, spec, &settings, &workload, seed)
                    .with_context(|| format!("{} under {}", mode.label(), driver.label()))?;
                let dir = format!("{}-{}", driver.label(), mode.label());
                out.csv(&format!("{dir}/iterations.csv"), &rec.iterations)?;
                out.csv(&format!("{dir}/progress.csv"), &rec.progress)?;
                if driver != DriverKind::Sim {
                    // measured compute and wait per worker and iteration, replayable in the
                    // simulator as `[stragglers] trace = { path = ".../trace.csv" }`
                    out.csv(&format!("{dir}/trace.csv"), &rec.trace())?;
                }
                let mut h = WaitHistogram::default();
                let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
                for r in &rec.iterations {
                    h.record_ns(r.wait);
                    *counts.entry(r.staleness).or_default() += 1;
                }
                for (lower_us, upper_us, count) in h.buckets(20) {
                    waits.push(WaitBucket {
                        driver: driver.label().into(),
                        mode: mode.label(),
                        lower_us,
                        upper_us,
                        count,
                    });
                }
                for (&staleness, &count) in &counts {
                    stale.push(StalenessCount {
                        driver: driver.label().into(),
                        mode: mode.label(),
                        staleness,
                        count,
                    });
                }
                let last = rec.progress.last().copied();
                let n = rec.iterations.len().max(1) as f64;
                summary.push(SummaryRow {
                    driver: driver.label().into(),
                    mode: mode.label(),
                    iterations: rec.iterations.len(),
                    makespan_s: seconds(rec.makespan),
                    iteration_rate: rec.iteration_rate(),
                    mean_wait_us: h.mean_us(),
                    p99_wait_us: h.quantile_us(0.99),
                    max_staleness: counts.keys().copied().max().unwrap_or(0),
                    mean_staleness: rec
                        .iterations
                        .iter()
                        .map(|r| r.staleness as f64)
                        .sum::<f64>()
                        / n,
                    final_loss: last.map_or(f64::NAN, |p| p.loss),
                    final_accuracy: last.map_or(f64::NAN, |p| p.accuracy),
                    bytes_total: rec.bytes_sent.iter().sum(),
                });
                by_run.insert((driver.label().to_string(), mode.label()), rec);
                pb.inc(1);
            }
        }
        pb.finish_and_clear();
        out.csv("summary.csv", &summary)?;
        out.csv("wait_hist.csv", &waits)?;
        out.csv("staleness_hist.csv", &stale)?;
        let mut ref_rows = Vec::new();
        let mut way_rows = Vec::new();
        let judge = Judge::new(reference.as_ref());
        for &driver in &drivers {
            let judged = judge.judge(
                by_run
                    .iter()
                    .filter(|((d, _), _)| d == driver.label())
                    .map(|((_, m), r)| (m.clone(), &r.progress[..])),
            );
            ref_rows.extend(judged.reference_rows(driver.label()));
            way_rows.extend(judged.way_rows(driver.label()));
            out.claim(
                judged.near_optimum_claim(format!(
                    "ps-modes/{}/best-run-near-optimum",
                    driver.label()
                )),
            );
            // Every mode converges, not only the best: a mode that never gets near the
            // optimum would make its rate and staleness comparisons moot.
            out.claim(judged.every_run_reaches_claim(format!(
                "ps-modes/{}/every-mode-reaches-target",
                driver.label()
            )));
        }
        out.csv("reference.csv", &ref_rows)?;
        out.csv("ways.csv", &way_rows)?;
        for &driver in &drivers {
            claims_for(out, driver, &modes, &by_run);
        }
        run.notes(reference.iter().map(|r| r.note("svm")).chain([
            "staleness = iteration - complete, where the model read holds every worker's updates of clocks < complete; BSP reads 0, SSP(s) at most s; ESSP's clock differential is -1 - staleness".into(),
            "aggregation: sum (the server adds every worker's update, as Bösen's INC tables and the ESSP paper do)".into(),
            "ASP workers never block: they compute on their cached model and keep one refresh request in flight".into(),
            if cfg.compute.measured {
                "threads driver: compute.measured = true, so a computation takes its measured time times its straggler factor; timings are wall-clock and vary between runs".into()
            } else {
                "threads driver: a computation takes max(real time, modelled time); timings are wall-clock and vary between runs".into()
            },
            if cfg.compute.measured {
                "sim driver: compute.measured = true, so compute times are measured wall time and the CSV bytes are NOT reproducible from the seed".into()
            } else {
                "sim driver: virtual time; the same seed gives the same CSV bytes".into()
            },
        ]));
        Ok(())
    }
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<PsModes>()
}

fn claims_for(
    out: &mut ExperimentOutput,
    driver: DriverKind,
    modes: &[SyncMode],
    runs: &BTreeMap<(String, String), RunRecords>,
) {
    let d = driver.label();
    let get = |m: &SyncMode| runs.get(&(d.to_string(), m.label()));
    match modes
        .iter()
        .find(|m| matches!(m, SyncMode::Ssp(_) | SyncMode::SspPull(_)))
    {
        Some(m) => {
            let r = get(m).expect("ran");
            let s = m.bound().unwrap_or(0);
            let worst = r.iterations.iter().map(|x| x.staleness).max().unwrap_or(0);
            let claim = Claim::check(
                format!("{FIGURE}/{d}/ssp-bound"),
                format!("{} never reads a model staler than s = {s}", m.label()),
                format!("<= {s}"),
                format!("max {worst} over {} reads", r.iterations.len()),
                worst <= s,
            )
            .with_value(worst as f64);
            // A bound no read comes near cannot be told from no bound.
            out.claim(if worst < s {
                claim.not_exercised(format!(
                    "the bound never binds (max staleness {worst} < {s})"
                ))
            } else {
                claim
            });
        }
        None => out.claim(Claim::not_applicable(
            format!("{FIGURE}/{d}/ssp-bound"),
            "SSP never exceeds its bound",
            "<= s",
            "no SSP mode in this run",
        )),
    }
    match modes.iter().find(|m| **m == SyncMode::bsp()) {
        Some(m) => {
            let r = get(m).expect("ran");
            let lo = r.iterations.iter().map(|x| x.staleness).min().unwrap_or(0);
            let hi = r.iterations.iter().map(|x| x.staleness).max().unwrap_or(0);
            out.claim(
                Claim::check(
                    format!("{FIGURE}/{d}/bsp-constant"),
                    "BSP staleness is the same constant at every read",
                    "constant (0; clock differential -1)",
                    format!("min {lo}, max {hi}"),
                    lo == hi,
                )
                .with_value(hi.saturating_sub(lo) as f64),
            );
        }
        None => out.claim(Claim::not_applicable(
            format!("{FIGURE}/{d}/bsp-constant"),
            "BSP staleness constant",
            "constant",
            "no BSP mode in this run",
        )),
    }
    let rates: Vec<(String, f64)> = modes
        .iter()
        .filter_map(|m| get(m).map(|r| (m.label(), r.iteration_rate())))
        .collect();
    match rates.iter().find(|(l, _)| l == "asp") {
        Some(&(_, asp)) if rates.len() > 1 => {
            let others: Vec<String> = rates.iter().map(|(l, r)| format!("{l} {r:.1}/s")).collect();
            // ASP's rate over the fastest other mode's (above 1: ASP fastest).
            let lead = rates
                .iter()
                .filter(|(l, _)| l != "asp")
                .map(|(_, r)| asp / r)
                .fold(f64::INFINITY, f64::min);
            out.claim(
                Claim::check(
                    format!("{FIGURE}/{d}/asp-fastest"),
                    "ASP has the highest iteration rate",
                    "ASP > SSP > BSP",
                    others.join(", "),
                    rates.iter().all(|(l, r)| l == "asp" || asp > *r),
                )
                .with_value(lead),
            );
        }
        _ => out.claim(Claim::not_applicable(
            format!("{FIGURE}/{d}/asp-fastest"),
            "ASP has the highest iteration rate",
            "ASP > SSP > BSP",
            "needs ASP and another mode",
        )),
    }
    // The rest of the order: the staleness window lets every SSP run ahead of BSP's barrier.
    let bsp = rates.iter().find(|(l, _)| l == "bsp").map(|x| x.1);
    let ssp: Vec<&(String, f64)> = rates.iter().filter(|(l, _)| l.starts_with("ssp")).collect();
    if let (Some(bsp), false) = (bsp, ssp.is_empty()) {
        // The slowest SSP's rate over BSP's (above 1: every SSP faster).
        let lead = ssp
            .iter()
            .map(|(_, r)| r / bsp)
            .fold(f64::INFINITY, f64::min);
        out.claim(
            Claim::check(
                format!("{FIGURE}/{d}/ssp-faster-than-bsp"),
                "every SSP mode has a higher iteration rate than BSP",
                "ASP > SSP > BSP",
                format!(
                    "{}; bsp {bsp:.1}/s",
                    ssp.iter()
                        .map(|(l, r)| format!("{l} {r:.1}/s"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                ssp.iter().all(|(_, r)| *r > bsp),
            )
            .with_value(lead),
        );
    } else {
        out.claim(Claim::not_applicable(
            format!("{FIGURE}/{d}/ssp-faster-than-bsp"),
            "every SSP mode has a higher iteration rate than BSP",
            "ASP > SSP > BSP",
            "needs BSP and an SSP mode",
        ));
    }
}
