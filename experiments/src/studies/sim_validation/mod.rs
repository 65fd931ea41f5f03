//! sim-validation: how well the simulator predicts a real run. Each mode runs under the threads
//! driver (or the cluster driver, over tcp or shm, as a job of `syncbench launch`) with the
//! configured stragglers; its trace (every worker's measured compute time per iteration) is
//! then replayed in the simulator, over a network model measured in the same run (that
//! transport's one-way latency and bandwidth at the model's payload size, as `syncbench
//! transport-bench` measures them). A second prediction runs the simulator from the
//! configuration alone (the stragglers as configured, not measured). The table gives, per mode,
//! the measured and the two predicted iteration rates, mean waits, makespans and times to
//! target, with their relative errors; the claims state the error bound the replay achieves.

use crate::harness::experiment::{self, Experiment, NoArgs, Run};
use crate::harness::runner::{RunSettings, ThreadsSection};
use crate::judge::verdict::Judge;
use crate::runs::buffered::check_good_inputs;
use crate::runs::named_mode::{mean_wait_us, MatrixMode, RunShape};
use crate::workloads::svm::SparseData;
use anyhow::{bail, Context, Result};
use bench_core::claims::Claim;
use bench_core::driver::{ComputeModel, DriverKind, NetworkModel};
use bench_core::metrics::seconds;
use bench_core::metrics::RunRecords;
use bench_core::protocol::buffered::ReduceSync;
use bench_core::straggler::{StragglerConfig, StragglerTrace, TraceReplay};
use bench_core::workload::{Aggregation, SvmConfig};
use serde::{Deserialize, Serialize};

mod torn;

use torn::{measure_torn, predict_torn, torn_order_claim, torn_share_claim, TornPart};

const FIGURE: &str = "sim-validation";

struct SimValidation;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    /// Workers.
    workers: usize,
    /// Iterations per worker.
    iterations: u64,
    /// Evaluate every this many updates applied.
    eval_every: u64,
    /// Evaluations a run must stay at or below the target for it to count as reached.
    hold_evals: usize,
    /// Parameter-server and coordinator aggregation.
    aggregation: Aggregation,
    /// Modes validated, as mode-matrix names them.
    modes: Vec<String>,
    /// Relative error (|predicted - measured| / measured) the replay must stay within, per
    /// quantity, for every mode: the bound the claims check.
    bounds: Bounds,
    /// Stragglers of the measured (threads) runs and of the configuration-only prediction.
    stragglers: StragglerConfig,
    /// Messages per latency and bandwidth measurement of the measured runs' transport.
    probe_messages: usize,
    data: SparseData,
    svm: SvmConfig,
    /// Compute model: a floor under the real computation in the threads runs.
    compute: ComputeModel,
    threads: ThreadsSection,
    /// asap-fig7's receive-buffer runs, validated on their torn-input shares (absent: not run).
    #[serde(default)]
    torn: Option<TornPart>,
}

/// Error bounds per quantity.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Bounds {
    iteration_rate: f64,
    makespan: f64,
    time_to_target: f64,
    mean_wait: f64,
}

/// One (mode, quantity): measured, predicted by the replay and by the configuration.
#[derive(Debug, Clone, Serialize)]
struct ValidationRow {
    mode: String,
    quantity: &'static str,
    measured: Option<f64>,
    replay: Option<f64>,
    replay_error: Option<f64>,
    config: Option<f64>,
    config_error: Option<f64>,
}

/// The network model measured for the measured runs' transport.
#[derive(Debug, Clone, Serialize)]
struct NetworkRow {
    /// The transport measured (the one the measured runs used).
    transport: String,
    payload_bytes: usize,
    latency_median_ns: f64,
    latency_p99_ns: f64,
    bandwidth_gbps: f64,
}

const QUANTITIES: [&str; 4] = [
    "iteration_rate",
    "makespan_s",
    "time_to_target_s",
    "mean_wait_us",
];

fn check(cfg: &Config) -> Result<()> {
    if cfg.workers < 2 || cfg.iterations == 0 || cfg.eval_every == 0 || cfg.probe_messages == 0 {
        bail!("workers must be >= 2; iterations, eval_every and probe_messages >= 1");
    }
    if cfg.modes.is_empty() {
        bail!("modes: at least one mode to validate");
    }
    for m in &cfg.modes {
        MatrixMode::parse(m, cfg.iterations)?.validate(cfg.workers, cfg.iterations)?;
    }
    for (what, b) in [
        ("iteration_rate", cfg.bounds.iteration_rate),
        ("makespan", cfg.bounds.makespan),
        ("time_to_target", cfg.bounds.time_to_target),
        ("mean_wait", cfg.bounds.mean_wait),
    ] {
        if !(b > 0.0 && b.is_finite()) {
            bail!("bounds.{what} must be > 0, got {b}");
        }
    }
    if cfg.stragglers.trace.is_some() {
        bail!("stragglers.trace: the measured runs make their own traces; configure constant, random or production stragglers");
    }
    cfg.stragglers.factors(cfg.workers)?;
    if let Some(t) = &cfg.torn {
        t.common.validate()?;
        t.common.svm_setup()?;
        if t.good_inputs == 0 {
            bail!("torn.good_inputs must be >= 1");
        }
        if !(t.bound_points > 0.0 && t.bound_points <= 100.0) {
            bail!(
                "torn.bound_points must be in (0, 100], got {}",
                t.bound_points
            );
        }
    }
    cfg.data.validate(cfg.workers)?;
    cfg.svm.validate()?;
    if cfg.compute.ns_per_example.is_nan()
        || cfg.compute.ns_per_example <= 0.0
        || cfg.compute.measured
    {
        bail!("compute.ns_per_example must be > 0 and compute.measured false: the replay needs the modelled time a factor of 1 stands for");
    }
    Ok(())
}

/// One-way latency and bandwidth of transport `backend` (`threads`, `tcp`, `shm`, `rdma`) for
/// `words`-word messages, measured in this process.
fn measure_network(
    backend: &str,
    words: usize,
    messages: usize,
) -> Result<(NetworkRow, NetworkModel)> {
    let (lat, bw) = crate::harness::transport_costs::backend_costs(
        backend,
        words,
        messages,
        messages / 10 + 1,
        8,
    )?;
    let row = NetworkRow {
        transport: backend.to_string(),
        payload_bytes: words * 8,
        latency_median_ns: lat.median,
        latency_p99_ns: lat.p99,
        bandwidth_gbps: bw.average,
    };
    let model = NetworkModel {
        latency_ns: lat.median.round().max(1.0) as u64,
        bandwidth_gbps: bw.average.max(1e-3),
        ..NetworkModel::default()
    };
    Ok((row, model))
}

/// `(predicted - measured) / measured`; 0 when both are 0 (ASP never waits); None when a value
/// is missing (a run never reached the target) or only the measurement is 0.
fn error(pred: Option<f64>, meas: Option<f64>) -> Option<f64> {
    match (pred, meas) {
        (Some(p), Some(m)) if m.abs() > 0.0 => Some((p - m) / m),
        (Some(p), Some(m)) if p == m => Some(0.0),
        _ => None,
    }
}

impl Experiment for SimValidation {
    const BINARY: &'static str = FIGURE;
    const ABOUT: &'static str = "How well the simulator predicts real runs: each mode (parameter server, decentralized, ASYNC coordinator) runs under the threads driver (or, under `syncbench launch ... --driver cluster --transport tcp|shm`, as a cluster job); its recorded trace is replayed in the simulator over the transport's latency and bandwidth measured in the run, and the configuration alone is simulated too. With [torn], asap-fig7's receive-buffer runs are validated on their torn-input shares. Writes results/sim-validation/: validation.csv (per mode and quantity: measured, replayed and configuration-only predictions with relative errors), network.csv, torn.csv, traces/<mode>.csv, claims.csv (the error bounds reached), manifest.json.";
    const QUICK: &'static str = include_str!("../../../configs/sim-validation.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/sim-validation.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Threads];
    type Config = Config;
    type Args = NoArgs;

    fn validate(cfg: &Config, _: &NoArgs, drivers: &[DriverKind]) -> Result<()> {
        if drivers != [DriverKind::Threads] && drivers != [DriverKind::Cluster] {
            bail!("sim-validation measures under one real driver and predicts with the simulator itself: run it with --driver threads (the default) or, under `syncbench launch`, --driver cluster");
        }
        check(cfg)
    }

    fn run(run: &mut Run<'_, Self>) -> Result<()> {
        let (cfg, seed) = (run.cfg, run.seed);
        let modes: Vec<MatrixMode> = cfg
            .modes
            .iter()
            .map(|m| MatrixMode::parse(m, cfg.iterations))
            .collect::<Result<_>>()?;
        let workload = cfg.data.svm_workload(cfg.svm, seed, run.data)?;
        let driver = run.drivers[0];
        // The transport the measured runs move payloads over, which the prediction is given
        // (measured between two endpoints in this process: loopback for tcp).
        let backend = match driver {
            DriverKind::Cluster => crate::harness::cluster::transport_name()
                .context("the cluster driver runs only once the process joined a job")?,
            _ => "threads",
        };
        if let Some(t) = &cfg.torn {
            // before any run: every rank of a job refuses alike
            check_good_inputs(&t.common.topology(seed)?, t.good_inputs)
                .context("torn.good_inputs")?;
        }
        let words = bench_core::learning::payload_words(1, workload.dim());
        let shape = RunShape {
            workers: cfg.workers,
            iterations: cfg.iterations,
            aggregation: cfg.aggregation,
        };
        let nominal_ns = workload.batch_size(cfg.workers) as f64 * cfg.compute.ns_per_example;
        let settings = |stragglers: StragglerConfig, network: &NetworkModel| RunSettings {
            network: network.clone(),
            compute: cfg.compute,
            stragglers,
            eval_every: cfg.eval_every,
            threads: cfg.threads.clone(),
            iteration_ns: None,
            wire_bytes: None,
        };
        let torn_runs = if cfg.torn.is_some() {
            6 * ReduceSync::ALL.len() as u64
        } else {
            0
        };
        let pb = run.progress(modes.len() as u64 * 3 + torn_runs);
        // Every measured run first: under the cluster driver every rank runs them in the same
        // order, and only then does the writing rank measure the transport and simulate.
        let mut measured_runs = Vec::new();
        for m in &modes {
            pb.set_message(format!("{} {}", m.label(), driver.label()));
            let measured = m.run(
                driver,
                &shape,
                &settings(cfg.stragglers.clone(), &NetworkModel::default()),
                &workload,
                seed,
            )?;
            pb.inc(1);
            measured_runs.push(measured);
        }
        let torn_measured = match &cfg.torn {
            Some(t) => Some(measure_torn(t, driver, seed, run.data, &pb)?),
            None => None,
        };
        if !crate::harness::cluster::is_writer() {
            // another rank of a cluster job: rank 0 predicts and writes
            pb.finish_and_clear();
            return Ok(());
        }
        let reference = cfg.data.reference(cfg.svm, seed, run.data);
        let (net_row, network) = measure_network(backend, words, cfg.probe_messages)?;
        let mut triples = Vec::new();
        for (m, measured) in modes.iter().zip(measured_runs) {
            let label = m.label();
            let rows = measured.trace();
            let trace = StragglerTrace::from_rows(
                rows.clone(),
                &format!("{} run of {label}", driver.label()),
            )?;
            let replay_cfg = StragglerConfig {
                trace: Some(TraceReplay::of(trace, &label, Some(nominal_ns))),
                ..StragglerConfig::default()
            };
            pb.set_message(format!("{label} sim replay"));
            let replay = m.run(
                DriverKind::Sim,
                &shape,
                &settings(replay_cfg, &network),
                &workload,
                seed,
            )?;
            pb.inc(1);
            pb.set_message(format!("{label} sim from the configuration"));
            // another draw of the configured stragglers: what one predicts without a trace
            // (the same seed would replay the measured run's own jitter draws)
            let config = m.run(
                DriverKind::Sim,
                &shape,
                &settings(cfg.stragglers.clone(), &network),
                &workload,
                seed ^ 0xC0F1_6000_0000_0001,
            )?;
            pb.inc(1);
            run.out()
                .csv(&format!("traces/{}.csv", label.replace('/', "_")), &rows)?;
            triples.push((label, measured, replay, config));
        }
        let torn = match (&cfg.torn, torn_measured) {
            (Some(t), Some(measured)) => Some(predict_torn(
                t,
                measured,
                backend,
                cfg.probe_messages,
                seed,
                &pb,
            )?),
            _ => None,
        };
        pb.finish_and_clear();
        // The measured runs set the target; each prediction is crossed against the same one.
        let judged = Judge::new(reference.as_ref())
            .holding(cfg.hold_evals)
            .judge(triples.iter().map(|t| (t.0.clone(), &t.1.progress[..])));
        let (target, how) = (judged.target, judged.rule.clone());
        let mut rows = Vec::new();
        for (label, measured, replay, config) in &triples {
            let values = |r: &RunRecords| -> [Option<f64>; 4] {
                [
                    Some(r.iteration_rate()),
                    Some(seconds(r.makespan)),
                    judged.crossing_of(&r.progress).map(|p| p.time),
                    Some(mean_wait_us(r)),
                ]
            };
            let (m, p, c) = (values(measured), values(replay), values(config));
            for (k, q) in QUANTITIES.iter().enumerate() {
                rows.push(ValidationRow {
                    mode: label.clone(),
                    quantity: q,
                    measured: m[k],
                    replay: p[k],
                    replay_error: error(p[k], m[k]),
                    config: c[k],
                    config_error: error(c[k], m[k]),
                });
            }
        }
        let out = run.out();
        out.csv("validation.csv", &rows)?;
        let mut net_rows = vec![net_row.clone()];
        if let Some(v) = &torn {
            net_rows.push(v.network.clone());
        }
        out.csv("network.csv", &net_rows)?;
        for (q, bound) in [
            ("iteration_rate", cfg.bounds.iteration_rate),
            ("makespan_s", cfg.bounds.makespan),
            ("time_to_target_s", cfg.bounds.time_to_target),
            ("mean_wait_us", cfg.bounds.mean_wait),
        ] {
            out.claim(bound_claim(q, bound, &rows));
        }
        out.claim(replay_beats_config(&rows));
        let mut torn_notes = Vec::new();
        if let (Some(t), Some(v)) = (&cfg.torn, &torn) {
            out.csv("torn.csv", &v.rows)?;
            out.claim(torn_share_claim(t, &v.rows));
            out.claim(torn_order_claim(t.good_inputs, driver.label(), &v.rows));
            torn_notes.push(format!(
                "torn: asap-fig7's receive-buffer setting ({} peers on {}, {} iterations) under the {} driver (measured) and the simulator, once over this machine's {} transport at {} B (latency {:.0} ns, {:.2} Gbit/s) and word-copy speed ({:.2} GB/s) measured in this run, at each mode's measured pace (predicted: computation per iteration set, by a correction and two secant steps, so that the simulated reduce rate meets the measured one: {}), once over the configured network ({} ns, {} Gbit/s), copy speed ({} GB/s) and computation (config); shares are fractions and their errors percentage points, the reduce rate's error relative (the paced prediction is steered to the measured rate, so that error says how well the steering converged)",
                t.common.workers,
                t.common.graph,
                t.common.iterations,
                driver.label(),
                v.network.transport,
                v.network.payload_bytes,
                v.network.latency_median_ns,
                v.network.bandwidth_gbps,
                v.copy_gbps,
                v.paces
                    .iter()
                    .map(|(m, ns)| format!("{m} {:.0} us", ns * 1e-3))
                    .collect::<Vec<_>>()
                    .join(", "),
                t.common.network.latency_ns,
                t.common.network.bandwidth_gbps,
                t.common.copy_gbps
            ));
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        run.notes([
            format!(
                "measured under the {} driver; its {} transport measured in this run at {} B: one-way latency median {:.0} ns (p99 {:.0} ns), bandwidth {:.2} Gbit/s; the simulator's network model uses the median and the bandwidth",
                driver.label(), net_row.transport, net_row.payload_bytes, net_row.latency_median_ns, net_row.latency_p99_ns, net_row.bandwidth_gbps
            ),
            format!(
                "replay: every worker's measured computation (end - start - wait of each iteration; under the coordinator it includes the task's and result's messages) over the modelled {:.0} ns is its factor in the simulator; configuration-only: the configured stragglers, drawn with another seed than the measured run's",
                nominal_ns
            ),
            format!("time to target: {how} = {target:.5}, reached when held for {} evaluations", cfg.hold_evals),
            format!(
                "{} or {} nodes (workers, and a server or coordinator), a thread each{}, on {cores} cores: a node that becomes ready may wait for a core, which the simulator does not model; waits are where the real drivers' scheduling shows most",
                cfg.workers,
                cfg.workers + 1,
                if driver == DriverKind::Cluster { " in the job's processes" } else { "" }
            ),
            "relative error = (predicted - measured) / measured; iteration_rate is the mean over workers of each worker's own rate".into(),
        ].into_iter().chain(torn_notes));
        Ok(())
    }
}

/// The replay's relative error on `quantity` stays within `bound` for every mode.
fn bound_claim(quantity: &str, bound: f64, rows: &[ValidationRow]) -> Claim {
    let errs: Vec<(&str, Option<f64>)> = rows
        .iter()
        .filter(|r| r.quantity == quantity)
        .map(|r| (r.mode.as_str(), r.replay_error))
        .collect();
    let worst = errs
        .iter()
        .filter_map(|(m, e)| e.map(|e| (*m, e.abs())))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let missing: Vec<&str> = errs.iter().filter(|e| e.1.is_none()).map(|e| e.0).collect();
    let statement = format!(
        "the trace-replaying simulator predicts {quantity} within {:.0}% for every mode",
        bound * 100.0
    );
    let id = format!("{FIGURE}/{quantity}-within-{:.0}pct", bound * 100.0);
    let paper =
        "not a paper claim: the simulator's accuracy against the threads driver on this machine";
    let Some((mode, worst)) = worst else {
        return Claim::check(id, statement, paper, "no mode gave both values", false);
    };
    let mut measured = format!("largest |error| {:.1}% ({mode})", worst * 100.0);
    if !missing.is_empty() {
        measured.push_str(&format!(
            "; no relative error (a run never reached the target, or only the measurement is 0): {}",
            missing.join(", ")
        ));
    }
    Claim::check(
        id,
        statement,
        paper,
        measured,
        worst <= bound && missing.is_empty(),
    )
    .with_value(worst)
}

/// Replaying the trace predicts the makespan better than the configuration alone (mean
/// |error| over modes).
fn replay_beats_config(rows: &[ValidationRow]) -> Claim {
    let mean = |f: fn(&ValidationRow) -> Option<f64>| {
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| r.quantity == "makespan_s")
            .filter_map(|r| f(r).map(f64::abs))
            .collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    let (replay, config) = (mean(|r| r.replay_error), mean(|r| r.config_error));
    Claim::check(
        format!("{FIGURE}/replay-beats-configuration"),
        "replaying the measured trace predicts makespans better than simulating the configured stragglers",
        "not a paper claim: what recording a trace buys",
        format!(
            "mean |makespan error| {:.1}% replaying vs {:.1}% from the configuration",
            replay * 100.0,
            config * 100.0
        ),
        replay < config,
    )
    .with_value(replay / config.max(1e-12))
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    experiment::main::<SimValidation>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_relative_to_the_measurement() {
        assert_eq!(error(Some(1.2), Some(1.0)), Some(0.19999999999999996));
        assert_eq!(error(None, Some(1.0)), None);
        assert_eq!(error(Some(1.0), Some(0.0)), None);
        assert_eq!(error(Some(0.0), Some(0.0)), Some(0.0));
    }

    #[test]
    fn the_built_in_configs_pass_their_checks() {
        for text in [SimValidation::QUICK, SimValidation::PAPER] {
            let cfg: Config = toml::from_str(text).unwrap();
            check(&cfg).unwrap();
        }
    }
}
