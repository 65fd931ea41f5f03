//! What the decentralized (Hop) experiments share: graph construction, one run of a peer
//! setting on a graph under a driver, and time-to-target on the evaluated peer's loss.

use crate::harness::data_source::DataSource;
use crate::harness::runner::{run_nodes, RunSettings, ThreadsSection};
use crate::workloads::svm::SparseData;
use anyhow::{bail, Context, Result};
use bench_core::driver::{ComputeModel, DriverKind, NetworkModel};
use bench_core::metrics::seconds;
use bench_core::metrics::RunRecords;
use bench_core::protocol::peer::PeerSettings;
use bench_core::straggler::StragglerConfig;
use bench_core::topology::{random_regular, Topology, TopologyKind};
use bench_core::workload::{PeerLearning, SvmConfig, Workload};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Settings every Hop training experiment has.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerCommon {
    /// Workers (peers).
    pub workers: usize,
    /// Iterations every peer runs.
    pub iterations: u64,
    /// Evaluate peer 0's model every this many reduces (all peers together).
    pub eval_every: u64,
    /// Synthetic twin of the dataset (webspam's shape at quick scale).
    pub data: SparseData,
    /// SVM settings (Hop §7.2: log loss, learning rate 10).
    pub svm: SvmConfig,
    /// Compute model.
    pub compute: ComputeModel,
    /// Network model (sim).
    pub network: NetworkModel,
    /// Threads-driver settings (peers need rings deep enough for their iteration gap).
    pub threads: ThreadsSection,
    /// When present, the peers train this CNN instead of the SVM (Hop's CNN halves; feature
    /// `cnn`); `data` and `svm` are then unused.
    #[serde(default)]
    pub cnn: Option<PeerCnn>,
    /// The share of the way from the initial model to the reference optimum that the best run
    /// must cover (the harness check best-run-near-optimum), and where the time comparisons'
    /// target sits ([`crate::judge::reference::Reference::way`]); default 0.9. A configuration
    /// that sets it says why beside it (a constant step size's noise floor, measured over seeds).
    #[serde(default = "default_way")]
    pub near_optimum_way: f64,
}

fn default_way() -> f64 {
    crate::judge::reference::DEFAULT_WAY
}

/// A CNN and its images, for the Hop experiments' CNN halves.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerCnn {
    /// The images.
    pub images: crate::workloads::cnn::ImageData,
    /// The network and its SGD settings.
    pub net: bench_core::workload::CnnConfig,
}

impl PeerCommon {
    /// Checks sizes.
    ///
    /// # Errors
    /// Fewer than 2 workers, no iterations, or data too small.
    pub fn validate(&self) -> Result<()> {
        if self.workers < 2 || self.iterations == 0 || self.eval_every == 0 {
            bail!("workers must be >= 2, iterations and eval_every >= 1");
        }
        if !(0.5..=0.99).contains(&self.near_optimum_way) {
            bail!(
                "near_optimum_way = {} is out of range: it must lie in [0.5, 0.99] (the share of the way to the optimum, 0.9 by default)",
                self.near_optimum_way
            );
        }
        self.data.validate(self.workers)?;
        self.network.validate(self.workers)?;
        if let Some(c) = &self.cnn {
            c.net.validate()?;
            c.images.validate()?;
        }
        Ok(())
    }

    /// The SVM workload on the twin, or the CNN when `[common.cnn]` is given.
    ///
    /// # Errors
    /// Bad SVM or CNN settings, or a CNN in a build without the `cnn` feature.
    pub fn workload(&self, seed: u64, data: &DataSource) -> Result<Arc<dyn Workload>> {
        match &self.cnn {
            Some(c) => c.images.workload(&c.net, seed, data),
            None => self.data.svm_workload(self.svm, seed, data),
        }
    }

    /// The exact optimum of this objective on this data (`None` with real data, and for a
    /// CNN, which has no computable optimum).
    pub fn reference(
        &self,
        seed: u64,
        data: &DataSource,
    ) -> Option<crate::judge::reference::Reference> {
        if self.cnn.is_some() {
            return None;
        }
        let mut r = self.data.reference(self.svm, seed, data)?;
        r.way = self.near_optimum_way;
        Some(r)
    }

    /// What the peers train, for notes: the CNN's model name or the SVM's loss and step.
    pub fn learning_label(&self) -> String {
        match &self.cnn {
            Some(c) => format!("CNN {} (width {})", c.net.model.name(), c.net.width),
            None => format!("SVM ({:?} loss, eta0 {})", self.svm.loss, self.svm.eta0),
        }
    }
}

/// Builds a graph by name: any kind `syncbench graph` knows, or `random-regular-D`.
///
/// # Errors
/// Unknown names and impossible sizes.
pub fn graph(name: &str, n: usize, seed: u64) -> Result<Topology> {
    if let Some(d) = name.strip_prefix("random-regular-") {
        let d: usize = d
            .parse()
            .with_context(|| format!("graph '{name}': degree after random-regular-"))?;
        return Ok(random_regular(n, d, seed)?);
    }
    Ok(TopologyKind::parse(name)?.build(n)?)
}

/// The peer whose model a run evaluates: a sink (no out-neighbours: the end of a one-way
/// chain, the only peer every other one reaches) if there is one, else peer 0 (the graphs used
/// are vertex-transitive, so any peer is representative).
pub fn eval_node(topology: &Topology) -> usize {
    (0..topology.nodes())
        .find(|&i| topology.out_neighbors(i).is_empty())
        .unwrap_or(0)
}

/// Runs `settings` on `topology` under `driver`.
///
/// # Errors
/// Impossible settings, or any protocol, transport or deadlock error of the run.
pub fn run_peers(
    driver: DriverKind,
    common: &PeerCommon,
    topology: &Topology,
    settings: &PeerSettings,
    stragglers: &StragglerConfig,
    workload: &Arc<dyn Workload>,
    seed: u64,
) -> Result<RunRecords> {
    let nodes = settings.build(topology)?;
    let learning = Arc::new(
        PeerLearning::new(workload.clone())
            .evaluating(eval_node(topology))
            .serial(settings.serial),
    );
    let run = RunSettings {
        network: common.network.clone(),
        compute: common.compute,
        stragglers: stragglers.clone(),
        eval_every: common.eval_every,
        threads: common.threads.clone(),
        iteration_ns: None,
        wire_bytes: None,
    };
    run_nodes(driver, nodes, &run, &learning, seed).with_context(|| {
        format!(
            "{} on {} under {}",
            settings.label(),
            topology.name(),
            driver.label()
        )
    })
}

/// Seconds per iteration: the run's makespan over the iterations every peer ran.
pub fn seconds_per_iteration(r: &RunRecords, iterations: u64) -> f64 {
    seconds(r.makespan) / iterations.max(1) as f64
}
