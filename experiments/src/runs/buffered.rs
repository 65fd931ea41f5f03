//! What the receive-buffer experiments (asap-fig7, asap-fig9) share: their configuration and
//! one run of a synchronization mode on a graph under a driver.

use crate::harness::data_source::DataSource;
use crate::workloads::svm::SparseData;
use anyhow::{bail, Context, Result};
use bench_core::driver::buffered::{
    self, AsyncReads, BufferedConfig, BufferedRecords, BufferedSetup,
};
use bench_core::driver::{ComputeModel, DriverKind, NetworkModel};
use bench_core::protocol::buffered::ReduceSync;
use bench_core::straggler::StragglerConfig;
use bench_core::topology::Topology;
use bench_core::workload::{SvmConfig, Workload};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Settings of a receive-buffer experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferedCommon {
    /// Peers.
    pub workers: usize,
    /// Communication graph (any name `syncbench graph` knows).
    pub graph: String,
    /// Iterations every peer runs.
    pub iterations: u64,
    /// Evaluate peer 0 every this many of its iterations.
    pub eval_every: u64,
    /// Synthetic twin of the SVM's dataset (asap-fig7, asap-fig9; a CNN experiment gives its
    /// own `[images]` and `[cnn]` instead).
    #[serde(default)]
    pub data: Option<SparseData>,
    /// SVM settings (with `data`).
    #[serde(default)]
    pub svm: Option<SvmConfig>,
    /// Compute model: a floor under the real computation (threads) or its time (sim).
    pub compute: ComputeModel,
    /// Log-normal sigma of per-iteration compute-time noise (0: none), seeded per peer.
    pub jitter_sigma: f64,
    /// Network model (sim).
    pub network: NetworkModel,
    /// Memory bandwidth of a reduce's reads in GB/s (sim).
    pub copy_gbps: f64,
    /// A peer waiting this long for anything reports a deadlock (threads).
    pub stall_timeout_ms: u64,
    /// What an ASYNC reduce averages: `whole` buffers only (ASAP §6.2, the default) or
    /// `as-read`, torn ones included.
    #[serde(default, skip_serializing_if = "is_whole")]
    pub async_reads: AsyncReads,
    /// Peers start at seeded offsets within this many nanoseconds (0: all at once); ASYNC keeps
    /// them, BSP and NOTIFY-ACK realign.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub start_spread_ns: u64,
}

fn is_whole(r: &AsyncReads) -> bool {
    *r == AsyncReads::Whole
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl BufferedCommon {
    /// Checks sizes.
    ///
    /// # Errors
    /// Fewer than 2 workers, no iterations, bad data sizes or network links.
    pub fn validate(&self) -> Result<()> {
        if self.workers < 2 || self.iterations == 0 {
            bail!("workers must be >= 2 and iterations >= 1");
        }
        if !(self.jitter_sigma.is_finite() && self.jitter_sigma >= 0.0) {
            bail!("jitter_sigma must be >= 0, got {}", self.jitter_sigma);
        }
        if let Some(d) = &self.data {
            d.validate(self.workers)?;
        }
        self.driver_config().validate(self.workers)?;
        Ok(())
    }

    /// The drivers' settings.
    pub fn driver_config(&self) -> BufferedConfig {
        BufferedConfig {
            iterations: self.iterations,
            eval_every: self.eval_every,
            compute: self.compute,
            network: self.network.clone(),
            copy_gbps: self.copy_gbps,
            stall_timeout_ms: self.stall_timeout_ms,
            async_reads: self.async_reads,
            start_spread_ns: self.start_spread_ns,
        }
    }

    /// Compute-time noise.
    pub fn stragglers(&self) -> StragglerConfig {
        StragglerConfig {
            jitter_sigma: self.jitter_sigma,
            ..StragglerConfig::default()
        }
    }

    /// The SVM workload on the twin.
    ///
    /// # Errors
    /// Bad SVM settings.
    pub fn workload(&self, seed: u64, data: &DataSource) -> Result<Arc<dyn Workload>> {
        let (d, svm) = self.svm_setup()?;
        d.svm_workload(svm, seed, data)
    }

    /// The SVM's data and settings.
    ///
    /// # Errors
    /// When the configuration has no `[common.data]` or no `[common.svm]`.
    pub fn svm_setup(&self) -> Result<(&SparseData, SvmConfig)> {
        match (&self.data, self.svm) {
            (Some(d), Some(s)) => Ok((d, s)),
            _ => {
                bail!("this experiment trains the SVM: [common.data] and [common.svm] are required")
            }
        }
    }

    /// The graph, checked against the worker count.
    ///
    /// # Errors
    /// Unknown graph names and impossible sizes.
    pub fn topology(&self, seed: u64) -> Result<Topology> {
        crate::runs::peers::graph(&self.graph, self.workers, seed)
    }
}

/// Runs `mode` on `topology` under `driver`, evaluating peer 0.
///
/// # Errors
/// Impossible settings, or a protocol, transport or deadlock error of the run.
pub fn run_buffered(
    driver: DriverKind,
    common: &BufferedCommon,
    topology: &Topology,
    mode: ReduceSync,
    workload: &Arc<dyn Workload>,
    seed: u64,
) -> Result<BufferedRecords> {
    let stragglers = common.stragglers();
    let setup = BufferedSetup {
        topology,
        mode,
        workload: workload.clone(),
        stragglers: &stragglers,
        eval_node: 0,
        seed,
    };
    let cfg = common.driver_config();
    match driver {
        DriverKind::Sim => buffered::sim::run(&cfg, &setup),
        DriverKind::Threads => buffered::threads::run(&cfg, &setup),
        DriverKind::Cluster => {
            return crate::harness::cluster::with_session(|session, transport| {
                buffered::cluster::run(session, transport, &cfg, &setup)
            })
            .with_context(|| {
                format!(
                    "{} on {} under {}",
                    mode.label(),
                    topology.name(),
                    driver.label()
                )
            })
        }
    }
    .with_context(|| {
        format!(
            "{} on {} under {}",
            mode.label(),
            topology.name(),
            driver.label()
        )
    })
}

/// Checks that `good` consistent inputs are possible on `topology`: between 1 and the graph's
/// largest in-degree, which it returns.
///
/// # Errors
/// Naming the range, when `good` is outside it (every share of good reduces would be 0).
pub fn check_good_inputs(topology: &Topology, good: usize) -> Result<usize> {
    let max_in = (0..topology.nodes())
        .map(|i| topology.in_neighbors(i).len())
        .max()
        .unwrap_or(0);
    if good == 0 || good > max_in {
        bail!("good_inputs must be in 1..={max_in} (the graph's largest in-degree), got {good}");
    }
    Ok(max_in)
}

/// NOTIFY-ACK's, BSP's and ASYNC's runs of one driver, in [`ReduceSync::ALL`]'s order.
pub struct ModeRuns(pub Vec<(ReduceSync, BufferedRecords)>);

impl ModeRuns {
    /// The run of `mode`.
    pub fn get(&self, mode: ReduceSync) -> &BufferedRecords {
        &self
            .0
            .iter()
            .find(|(m, _)| *m == mode)
            .expect("every mode ran")
            .1
    }

    /// NOTIFY-ACK's, BSP's and ASYNC's runs, the three the receive-buffer figures compare.
    pub fn trio(&self) -> (&BufferedRecords, &BufferedRecords, &BufferedRecords) {
        (
            self.get(ReduceSync::NotifyAck),
            self.get(ReduceSync::Bsp),
            self.get(ReduceSync::Async),
        )
    }
}

/// Runs every reduce mode on `topology` under `driver`, one after another, advancing `pb`.
///
/// # Errors
/// As [`run_buffered`].
pub fn run_every_mode(
    driver: DriverKind,
    common: &BufferedCommon,
    topology: &Topology,
    workload: &Arc<dyn Workload>,
    seed: u64,
    pb: &indicatif::ProgressBar,
) -> Result<ModeRuns> {
    let mut runs = Vec::new();
    for mode in ReduceSync::ALL {
        pb.set_message(format!("{} under {}", mode.label(), driver.label()));
        runs.push((
            mode,
            run_buffered(driver, common, topology, mode, workload, seed)?,
        ));
        pb.inc(1);
    }
    Ok(ModeRuns(runs))
}

/// `[sensitivity]` knobs of ASYNC's model, shared by asap-fig7 and asap-fig9:
/// what an ASYNC reduce averages and how far apart the peers start, each a list of values tried
/// besides the configured one.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AsyncKnobs {
    /// `whole` (ASAP §6.2's consistency check) or `as-read` (torn buffers averaged).
    #[serde(default)]
    pub async_reads: Vec<AsyncReads>,
    /// Start offsets' spread in ns: ASYNC running at its own pace from its own start.
    #[serde(default)]
    pub start_spread_ns: Vec<u64>,
}

impl AsyncKnobs {
    /// The settings to try besides the configured one: each knob's other values alone, then
    /// every combination of the two knobs' other values; each with its `(knob, value)` pairs.
    pub fn points(&self, c: &BufferedCommon) -> Vec<(Vec<(&'static str, String)>, BufferedCommon)> {
        let mut reads: Vec<AsyncReads> = vec![c.async_reads];
        reads.extend(self.async_reads.iter().filter(|r| **r != c.async_reads));
        reads.dedup();
        let mut spreads: Vec<u64> = vec![c.start_spread_ns];
        let mut others: Vec<u64> = self
            .start_spread_ns
            .iter()
            .copied()
            .filter(|s| *s != c.start_spread_ns)
            .collect();
        others.sort_unstable();
        others.dedup();
        spreads.extend(others);
        let mut out = Vec::new();
        for &r in &reads {
            for &s in &spreads {
                if r == c.async_reads && s == c.start_spread_ns {
                    continue;
                }
                let mut at = c.clone();
                at.async_reads = r;
                at.start_spread_ns = s;
                out.push((AsyncKnobs::setting(&at), at));
            }
        }
        out
    }

    /// The `(knob, value)` pairs of `c`'s ASYNC knobs, as `sensitivity.csv` writes them.
    pub fn setting(c: &BufferedCommon) -> Vec<(&'static str, String)> {
        vec![
            ("async_reads", c.async_reads.label().to_string()),
            ("start_spread_ns", c.start_spread_ns.to_string()),
        ]
    }
}
