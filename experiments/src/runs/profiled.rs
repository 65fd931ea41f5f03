//! Running a list of parameter-server modes in the simulator on a time profile with a CPU proxy
//! model: the piece the DSSP experiments share.

use crate::harness::data_source::DataSource;
use crate::harness::runner::{run_ps, RunSettings, ThreadsSection};
use crate::workloads::svm::SparseData;
use anyhow::{Context, Result};
use bench_core::driver::{ComputeModel, DriverKind, NetworkModel, TimeProfile};
use bench_core::metrics::RunRecords;
use bench_core::protocol::{ProtocolSpec, SyncMode};
use bench_core::straggler::StragglerConfig;
use bench_core::workload::{SvmConfig, Workload};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One profiled setting: proxy data and model, time profile, network, stragglers.
pub struct ProfiledSetting<'a> {
    /// Workers.
    pub workers: usize,
    /// Iterations per worker.
    pub iterations: u64,
    /// Evaluate every this many applied updates.
    pub eval_every: u64,
    /// Proxy data.
    pub data: &'a SparseData,
    /// Proxy model.
    pub svm: SvmConfig,
    /// Time profile.
    pub profile: &'a TimeProfile,
    /// Network.
    pub network: &'a NetworkModel,
    /// Stragglers (jitter).
    pub stragglers: &'a StragglerConfig,
}

/// Parses and validates mode labels.
///
/// # Errors
/// For an unknown or invalid mode.
pub fn parse_modes(labels: &[String]) -> Result<Vec<SyncMode>> {
    labels
        .iter()
        .map(|m| {
            let mode = SyncMode::parse(m)?;
            mode.validate()?;
            Ok(mode)
        })
        .collect()
}

impl ProfiledSetting<'_> {
    /// The proxy workload for `seed`.
    ///
    /// # Errors
    /// For invalid sizes or hyper-parameters.
    pub fn workload(&self, seed: u64, data: &DataSource) -> Result<Arc<dyn Workload>> {
        self.data.validate(self.workers)?;
        self.data.svm_workload(self.svm, seed, data)
    }

    /// Runs every mode in the simulator, calling `tick` after each; results keyed by label.
    ///
    /// # Errors
    /// For an invalid profile or network, or a failing run.
    pub fn run_all(
        &self,
        modes: &[SyncMode],
        workload: &Arc<dyn Workload>,
        seed: u64,
        mut tick: impl FnMut(&SyncMode),
    ) -> Result<BTreeMap<String, RunRecords>> {
        self.network.validate(self.workers + 1)?;
        let settings = RunSettings {
            network: self.network.clone(),
            compute: ComputeModel {
                ns_per_example: 0.0,
                measured: false,
            },
            stragglers: self.stragglers.clone(),
            eval_every: self.eval_every,
            threads: ThreadsSection {
                ring_depth: 32,
                stall_timeout_ms: 60_000,
            },
            iteration_ns: Some(self.profile.iteration_ns(self.workers)?),
            wire_bytes: Some(self.profile.bytes_per_update),
        };
        let mut runs = BTreeMap::new();
        for &mode in modes {
            let spec = ProtocolSpec {
                mode,
                workers: self.workers,
                iterations: self.iterations,
            };
            let rec = run_ps(DriverKind::Sim, spec, &settings, workload, seed)
                .with_context(|| format!("{} on profile {}", mode.label(), self.profile.model))?;
            runs.insert(mode.label(), rec);
            tick(&mode);
        }
        Ok(runs)
    }
}

/// First time the evaluated accuracy reaches `acc`.
pub fn time_to_accuracy(r: &RunRecords, acc: f64) -> Option<f64> {
    r.progress
        .iter()
        .find(|p| p.accuracy >= acc)
        .map(|p| p.time)
}

/// Best accuracy a run reaches.
pub fn best_accuracy(r: &RunRecords) -> f64 {
    r.progress
        .iter()
        .map(|p| p.accuracy)
        .fold(f64::NAN, f64::max)
}
