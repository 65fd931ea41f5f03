//! Running a list of parameter-server modes on a time profile: in the simulator (the profile's
//! seconds per batch are each worker's compute time), or on real compute under threads or
//! cluster (each worker's speed ratio to the fastest device of the profile realised as a
//! straggler factor on its measured step): the piece the DSSP experiments share.

use crate::harness::data_source::DataSource;
use crate::harness::runner::{run_ps, RunSettings, ThreadsSection};
use crate::judge::reference::ReferenceWords;
use crate::judge::verdict::Judge;
use crate::workloads::svm::SparseData;
use anyhow::{Context, Result};
use bench_core::driver::{ComputeModel, DriverKind, NetworkModel, TimeProfile};
use bench_core::metrics::RunRecords;
use bench_core::protocol::{ProtocolSpec, SyncMode};
use bench_core::straggler::{SlowWorker, StragglerConfig};
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

    /// Each worker's speed ratio on real compute: its seconds per batch over the fastest
    /// worker's, times any configured constant factor of the worker.
    ///
    /// # Errors
    /// A profile that does not cover the workers.
    pub fn real_compute_factors(&self) -> Result<Vec<f64>> {
        let ns = self.profile.iteration_ns(self.workers)?;
        let fastest = ns.iter().copied().min().unwrap_or(1).max(1) as f64;
        Ok(ns
            .iter()
            .enumerate()
            .map(|(w, &t)| {
                let configured: f64 = self
                    .stragglers
                    .slow
                    .iter()
                    .filter(|s| s.worker == w)
                    .map(|s| s.factor)
                    .product();
                t as f64 / fastest * configured
            })
            .collect())
    }

    /// Runs every mode under `driver`, calling `tick` after each; results keyed by label. The
    /// sim takes the profile's times as the compute times; threads and cluster compute for
    /// real, each worker waiting out its speed ratio ([`Self::real_compute_factors`]) on its
    /// measured step.
    ///
    /// # Errors
    /// For an invalid profile or network, or a failing run.
    pub fn run_all(
        &self,
        driver: DriverKind,
        modes: &[SyncMode],
        workload: &Arc<dyn Workload>,
        seed: u64,
        mut tick: impl FnMut(&SyncMode),
    ) -> Result<BTreeMap<String, RunRecords>> {
        self.network.validate(self.workers + 1)?;
        let sim = driver == DriverKind::Sim;
        let stragglers = if sim {
            self.stragglers.clone()
        } else {
            StragglerConfig {
                slow: self
                    .real_compute_factors()?
                    .into_iter()
                    .enumerate()
                    .map(|(worker, factor)| SlowWorker { worker, factor })
                    .collect(),
                ..self.stragglers.clone()
            }
        };
        let settings = RunSettings {
            network: self.network.clone(),
            compute: ComputeModel {
                ns_per_example: 0.0,
                measured: !sim,
            },
            stragglers,
            eval_every: self.eval_every,
            threads: ThreadsSection {
                ring_depth: 32,
                stall_timeout_ms: 60_000,
            },
            iteration_ns: if sim {
                Some(self.profile.iteration_ns(self.workers)?)
            } else {
                None
            },
            wire_bytes: Some(self.profile.bytes_per_update),
        };
        let mut runs = BTreeMap::new();
        for &mode in modes {
            let spec = ProtocolSpec {
                mode,
                workers: self.workers,
                iterations: self.iterations,
            };
            let rec = run_ps(driver, spec, &settings, workload, seed)
                .with_context(|| format!("{} on profile {}", mode.label(), self.profile.model))?;
            runs.insert(mode.label(), rec);
            tick(&mode);
        }
        Ok(runs)
    }
}

/// First time the evaluated accuracy reaches `acc`: the crossing the judge reads at a fixed
/// accuracy ([`Judge::at_accuracy`]), for the figures' summary columns.
pub fn time_to_accuracy(r: &RunRecords, acc: f64) -> Option<f64> {
    let judged =
        Judge::at_accuracy(acc, ReferenceWords::HELD_OUT_ACCURACY).judge([((), &r.progress[..])]);
    judged.runs[0].crossing.map(|p| p.time)
}

/// Best accuracy a run reaches.
pub fn best_accuracy(r: &RunRecords) -> f64 {
    r.progress
        .iter()
        .map(|p| p.accuracy)
        .fold(f64::NAN, f64::max)
}
