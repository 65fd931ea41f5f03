//! One point of the simulator's scale benchmark (`bench-scale`): a case (what learns, on which
//! system, for how many clocks) at one worker count, run in a process of its own so that its
//! peak memory is its own. The parent re-executes its own binary with the point in
//! [`POINT_ENV`]; the child runs it ([`run_point`]), prints one JSON line and exits.

use crate::harness::data_source::DataSource;
use crate::harness::runner::{run_nodes, RunSettings, ThreadsSection};
use crate::runs::peers::{eval_node, graph};
use crate::workloads::svm::SparseData;
use anyhow::{bail, Context, Result};
use bench_core::driver::{ComputeModel, DriverKind, NetworkModel};
use bench_core::learning::ControlOnly;
use bench_core::metrics::RunRecords;
use bench_core::protocol::peer::PeerSettings;
use bench_core::protocol::{Protocol, ProtocolSpec, SyncMode};
use bench_core::straggler::StragglerConfig;
use bench_core::workload::{PeerLearning, SvmConfig};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

/// The environment variable that makes a `bench-scale` process run one point (its JSON).
pub const POINT_ENV: &str = "SYNCBENCH_SCALE_POINT";

/// What learns in a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseLearning {
    /// ps-modes' SVM on the data twin: models and updates of `features` words on every
    /// message.
    Svm,
    /// Control words only ([`ControlOnly`]): the cost of the protocol and the event loop.
    Control,
}

/// One series of the benchmark: a learning on a system, for `clocks` clocks, at each of
/// `workers`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleCase {
    /// Name (the CSV's `case` column).
    pub name: String,
    /// What learns.
    pub learning: CaseLearning,
    /// A parameter server with one server, in this sync mode (`bsp`, `ssp3`, ...).
    #[serde(default)]
    pub mode: Option<String>,
    /// Or decentralized peers (Hop's standard protocol) on this graph (`ring-based`, ...).
    #[serde(default)]
    pub graph: Option<String>,
    /// Clocks (iterations) every worker runs.
    pub clocks: u64,
    /// Worker counts, one point each.
    pub workers: Vec<usize>,
}

/// What every point shares: the data, the model and the simulated machine.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScaleSetup {
    /// The SVM's data twin (ps-modes' RCV1 shape).
    pub data: SparseData,
    /// SVM settings.
    pub svm: SvmConfig,
    /// Compute model (virtual time only: it does not change the simulator's work).
    pub compute: ComputeModel,
    /// Network model.
    pub network: NetworkModel,
    /// Evaluate every this many applied updates (0: never, so that the benchmark measures
    /// the simulator and the learning, not the held-out evaluation).
    pub eval_every: u64,
}

/// One point: a case at a worker count, for one seed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointSpec {
    /// The shared setup.
    pub setup: ScaleSetup,
    /// The case.
    pub case: ScaleCase,
    /// Workers of this point.
    pub workers: usize,
    /// Seed of the data and the run.
    pub seed: u64,
}

/// What one point measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    /// Seconds building the workload (data twin and model), not part of `wall_s`.
    pub setup_s: f64,
    /// Wall seconds of the simulation itself.
    pub wall_s: f64,
    /// Events the simulator processed.
    pub events: u64,
    /// Messages' payload and header bytes charged to the network model.
    pub bytes: u64,
    /// Iterations all workers completed.
    pub iterations: u64,
    /// Peak resident memory of the process (MiB; `VmHWM`, Linux only: NaN elsewhere).
    pub peak_mib: f64,
}

impl ScaleCase {
    /// Checks the case.
    ///
    /// # Errors
    /// No worker counts, no clocks, a system that is neither or both of `mode` and `graph`,
    /// an unknown mode or graph, or too few workers.
    pub fn validate(&self, setup: &ScaleSetup) -> Result<()> {
        let name = &self.name;
        if self.workers.is_empty() || self.clocks == 0 {
            bail!("case {name}: workers must list at least one count and clocks be >= 1");
        }
        match (&self.mode, &self.graph) {
            (Some(m), None) => {
                let mode = SyncMode::parse(m).with_context(|| format!("case {name}: mode"))?;
                mode.validate()?;
            }
            (None, Some(g)) => {
                graph(g, 4, 1).with_context(|| format!("case {name}: graph"))?;
            }
            _ => bail!(
                "case {name}: give exactly one of mode (a parameter server) and graph (peers)"
            ),
        }
        for &w in &self.workers {
            if w < 2 {
                bail!("case {name}: {w} workers; every point needs >= 2");
            }
            if self.learning == CaseLearning::Svm {
                setup
                    .data
                    .validate(w)
                    .with_context(|| format!("case {name} at {w} workers"))?;
            }
            let nodes = w + usize::from(self.mode.is_some());
            setup.network.validate(nodes)?;
        }
        Ok(())
    }
}

impl PointSpec {
    fn settings(&self) -> RunSettings {
        RunSettings {
            network: self.setup.network.clone(),
            compute: self.setup.compute,
            stragglers: StragglerConfig {
                slow: vec![],
                jitter_sigma: 0.1,
                production: None,
                random: None,
                trace: None,
            },
            eval_every: self.setup.eval_every,
            threads: ThreadsSection {
                ring_depth: 16,
                stall_timeout_ms: 60_000,
            },
            iteration_ns: None,
            wire_bytes: None,
        }
    }

    /// The protocol nodes, and for peers the node to evaluate.
    fn nodes(&self) -> Result<(Vec<Box<dyn Protocol>>, usize)> {
        if let Some(m) = &self.case.mode {
            let spec = ProtocolSpec {
                mode: SyncMode::parse(m)?,
                workers: self.workers,
                iterations: self.case.clocks,
            };
            return Ok((spec.build()?, 0));
        }
        let name = self.case.graph.as_deref().unwrap_or("ring-based");
        let topology = graph(name, self.workers, self.seed)?;
        let nodes = PeerSettings::standard(self.case.clocks).build(&topology)?;
        Ok((nodes, eval_node(&topology)))
    }
}

/// Runs `spec` in this process under the sim driver and measures it.
///
/// # Errors
/// A bad case, or any error of the run.
pub fn run_point(spec: &PointSpec) -> Result<PointResult> {
    let t0 = Instant::now();
    let settings = spec.settings();
    let (nodes, eval) = spec.nodes()?;
    let peers = spec.case.graph.is_some();
    let (rec, setup_s, wall_s): (RunRecords, f64, f64) = match spec.case.learning {
        CaseLearning::Control => {
            let learning = Arc::new(ControlOnly {
                batch: spec.setup.svm.batch,
            });
            let setup_s = t0.elapsed().as_secs_f64();
            let t1 = Instant::now();
            let rec = run_nodes(DriverKind::Sim, nodes, &settings, &learning, spec.seed)?;
            (rec, setup_s, t1.elapsed().as_secs_f64())
        }
        CaseLearning::Svm => {
            let data = DataSource::synthetic();
            let workload = spec
                .setup
                .data
                .svm_workload(spec.setup.svm, spec.seed, &data)?;
            if peers {
                let learning = Arc::new(PeerLearning::new(workload).evaluating(eval));
                let setup_s = t0.elapsed().as_secs_f64();
                let t1 = Instant::now();
                let rec = run_nodes(DriverKind::Sim, nodes, &settings, &learning, spec.seed)?;
                (rec, setup_s, t1.elapsed().as_secs_f64())
            } else {
                let setup_s = t0.elapsed().as_secs_f64();
                let t1 = Instant::now();
                let rec = run_nodes(DriverKind::Sim, nodes, &settings, &workload, spec.seed)?;
                (rec, setup_s, t1.elapsed().as_secs_f64())
            }
        }
    };
    Ok(PointResult {
        setup_s,
        wall_s,
        events: rec.events,
        bytes: rec.bytes_sent.iter().sum(),
        iterations: rec.iterations.len() as u64,
        peak_mib: peak_rss_mib(),
    })
}

/// The process's peak resident set in MiB (`VmHWM` of /proc/self/status), NaN where that
/// cannot be read.
pub fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// Runs `spec` in a fresh process of the executable `exe` (the `bench-scale` binary itself),
/// so that the peak memory measured is this point's alone.
///
/// # Errors
/// When the process cannot start, fails (its stderr is quoted) or prints no result.
pub fn measure(exe: &Path, spec: &PointSpec) -> Result<PointResult> {
    let json = serde_json::to_string(spec)?;
    let out = Command::new(exe)
        .env(POINT_ENV, json)
        .output()
        .with_context(|| format!("starting {}", exe.display()))?;
    let what = format!("{} at {} workers", spec.case.name, spec.workers);
    if !out.status.success() {
        bail!(
            "{what}: the point's process failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .last()
        .with_context(|| format!("{what}: the point's process printed no result"))?;
    serde_json::from_str(line).with_context(|| format!("{what}: unreadable result {line:?}"))
}

/// The body of a point's process: reads [`POINT_ENV`], runs the point, prints its result as
/// one JSON line.
///
/// # Errors
/// An unreadable point or a failing run.
pub fn child_main(json: &str) -> Result<()> {
    let spec: PointSpec = serde_json::from_str(json).context("reading the point to run")?;
    let result = run_point(&spec)?;
    println!("{}", serde_json::to_string(&result)?);
    Ok(())
}

/// Least-squares slope of ln(wall) over ln(workers): how the cost grows with the worker count
/// (1.0: linear in the work, when the work per worker is fixed). `None` with fewer than two
/// distinct worker counts or a non-positive time.
pub fn fitted_exponent(points: &[(usize, f64)]) -> Option<f64> {
    let xy: Vec<(f64, f64)> = points
        .iter()
        .filter(|&&(w, t)| w > 0 && t > 0.0 && t.is_finite())
        .map(|&(w, t)| ((w as f64).ln(), t.ln()))
        .collect();
    if xy.len() != points.len() || xy.len() < 2 {
        return None;
    }
    let n = xy.len() as f64;
    let mx = xy.iter().map(|p| p.0).sum::<f64>() / n;
    let my = xy.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = xy.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = xy.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    Some(sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponent_of_a_power_law_is_its_power() {
        let pts: Vec<(usize, f64)> = [16usize, 64, 256, 1024]
            .iter()
            .map(|&w| (w, 0.01 * (w as f64).powf(1.15)))
            .collect();
        let e = fitted_exponent(&pts).unwrap();
        assert!((e - 1.15).abs() < 1e-9, "{e}");
        assert_eq!(fitted_exponent(&pts[..1]), None);
        assert_eq!(fitted_exponent(&[(64, 1.0), (64, 2.0)]), None);
        assert_eq!(fitted_exponent(&[(64, 1.0), (128, 0.0)]), None);
    }

    #[test]
    fn peak_memory_is_read_on_linux() {
        let m = peak_rss_mib();
        if cfg!(target_os = "linux") {
            assert!(m > 0.1 && m < 1e6, "{m}");
        } else {
            assert!(m.is_nan());
        }
    }
}
