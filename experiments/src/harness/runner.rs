//! Running one parameter-server configuration under a chosen driver: the piece every PS
//! experiment shares.

use anyhow::Result;
use bench_core::driver::cluster;
use bench_core::driver::sim::{self, SimConfig};
use bench_core::driver::threads::{self, ThreadsConfig};
use bench_core::driver::{ComputeModel, DriverKind, NetworkModel};
use bench_core::learning::Learning;
use bench_core::metrics::RunRecords;
use bench_core::protocol::{Protocol, ProtocolSpec};
use bench_core::straggler::StragglerConfig;
use bench_core::workload::Workload;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The `[threads]` section of experiment configs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadsSection {
    /// Slots per sender ring.
    pub ring_depth: usize,
    /// Deadlock report after this long without progress.
    pub stall_timeout_ms: u64,
}

/// Everything about a run that is not the protocol or the workload.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// Network model (sim).
    pub network: NetworkModel,
    /// Compute model (both drivers).
    pub compute: ComputeModel,
    /// Stragglers.
    pub stragglers: StragglerConfig,
    /// Evaluate every this many applied updates.
    pub eval_every: u64,
    /// Threads-driver settings.
    pub threads: ThreadsSection,
    /// Sim only: a time profile's per-worker nanoseconds per iteration.
    pub iteration_ns: Option<Vec<u64>>,
    /// Sim only: a time profile's bytes per payload.
    pub wire_bytes: Option<u64>,
}

/// Runs `spec` on `workload` under `driver`.
///
/// # Errors
/// Any configuration, protocol, transport or deadlock error of the run.
pub fn run_ps(
    driver: DriverKind,
    spec: ProtocolSpec,
    settings: &RunSettings,
    workload: &Arc<dyn Workload>,
    seed: u64,
) -> Result<RunRecords> {
    run_nodes(driver, spec.build()?, settings, workload, seed)
}

/// Runs protocol `nodes` learning `learning` under `driver`.
///
/// # Errors
/// Any configuration, protocol, transport or deadlock error of the run.
pub fn run_nodes<L: Learning + ?Sized + 'static>(
    driver: DriverKind,
    nodes: Vec<Box<dyn Protocol>>,
    settings: &RunSettings,
    learning: &Arc<L>,
    seed: u64,
) -> Result<RunRecords> {
    Ok(match driver {
        DriverKind::Sim => sim::run(
            nodes,
            &**learning,
            &SimConfig {
                network: settings.network.clone(),
                compute: settings.compute,
                eval_every: settings.eval_every,
                max_events: 1 << 40,
                iteration_ns: settings.iteration_ns.clone(),
                wire_bytes: settings.wire_bytes,
            },
            &settings.stragglers,
            seed,
            &mut sim::NoObserver,
        )?,
        DriverKind::Threads => threads::run(
            nodes,
            learning.clone(),
            &threads_config(settings),
            &settings.stragglers,
            seed,
        )?,
        DriverKind::Cluster => crate::harness::cluster::with_session(|session, transport| {
            cluster::run(
                session,
                transport,
                nodes,
                learning.clone(),
                &threads_config(settings),
                &settings.stragglers,
                seed,
            )
        })?,
    })
}

fn threads_config(settings: &RunSettings) -> ThreadsConfig {
    ThreadsConfig {
        compute: settings.compute,
        ring_depth: settings.threads.ring_depth,
        eval_every: settings.eval_every,
        stall_timeout_ms: settings.threads.stall_timeout_ms,
    }
}
