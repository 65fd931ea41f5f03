//! What the ASYNC experiments (async-fig3..8, async-table3) share: synthetic twins of the
//! paper's LIBSVM datasets, least squares with its reference optimum, and one run of a
//! synchronous (SGD, SAGA) or asynchronous (ASGD, ASAGA) method under the coordinator.

use crate::harness::runner::{run_nodes, RunSettings, ThreadsSection};
use anyhow::{bail, Context, Result};
use bench_core::data::{CsrMatrix, RandomDesign, SparseClassification};
use bench_core::driver::{ComputeModel, DriverKind, NetworkModel};
use bench_core::metrics::RunRecords;
use bench_core::protocol::coord::{BarrierPredicate, Collect};
use bench_core::protocol::AsyncSpec;
use bench_core::straggler::StragglerConfig;
use bench_core::workload::{AsyncLearning, AsyncLearningConfig, LeastSquares, Method, Optimum};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Shape of a dataset's synthetic twin.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum TwinShape {
    /// Sparse text-like rows (rcv1_full).
    Sparse(SparseClassification),
    /// Uniformly placed non-zeros (epsilon: dense; mnist8m: 19% non-negative).
    Dense(RandomDesign),
}

/// Per method (SGD or SAGA) settings on one dataset.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MethodSettings {
    /// Sampling rate b in (0, 1] (the paper's per-dataset values).
    pub sampling_rate: f64,
    /// Tuned step of the synchronous method; the asynchronous one uses step / workers.
    pub step: f64,
    /// Synchronous rounds; the asynchronous run finishes as many tasks (rounds x workers).
    pub rounds: u64,
    /// Target error (objective - optimum) for time-to-target, relative to the initial error.
    pub target_relative_error: f64,
}

/// One dataset of an ASYNC experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AsyncDataset {
    /// The paper's name (rcv1_full, mnist8m, epsilon).
    pub name: String,
    /// The twin's shape.
    pub shape: TwinShape,
    /// SGD/ASGD settings.
    pub sgd: MethodSettings,
    /// SAGA/ASAGA settings.
    pub saga: MethodSettings,
}

/// Settings every ASYNC experiment has.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AsyncCommon {
    /// Worker count P.
    pub workers: usize,
    /// Evaluate the model every this many rounds' worth of results (rounds x P).
    pub eval_every_rounds: u64,
    /// Barrier predicate of the asynchronous runs (asp, sspN, min-availableK).
    pub async_barrier: String,
    /// Weight asynchronous results by 1 / staleness (ASYNC §5.3, Listing 1).
    pub staleness_lr: bool,
    /// Compute model: virtual ns per sampled example.
    pub compute: ComputeModel,
    /// Network model (sim).
    pub network: NetworkModel,
    /// Threads-driver settings.
    pub threads: ThreadsSection,
}

impl AsyncCommon {
    /// Checks the settings.
    ///
    /// # Errors
    /// No workers, no evaluation interval, or an unknown barrier.
    pub fn validate(&self) -> Result<()> {
        if self.workers == 0 || self.eval_every_rounds == 0 {
            bail!("workers and eval_every_rounds must be >= 1");
        }
        BarrierPredicate::parse(&self.async_barrier)?;
        self.network.validate(self.workers + 1)?;
        Ok(())
    }
}

impl MethodSettings {
    /// Checks the settings; `what` names them in errors.
    ///
    /// # Errors
    /// Sampling rate outside (0, 1], step not positive, no rounds, target outside (0, 1).
    pub fn validate(&self, what: &str) -> Result<()> {
        if !(self.sampling_rate > 0.0 && self.sampling_rate <= 1.0) {
            bail!(
                "{what}.sampling_rate must be in (0, 1], got {}",
                self.sampling_rate
            );
        }
        if !(self.step > 0.0 && self.step.is_finite()) {
            bail!("{what}.step must be > 0, got {}", self.step);
        }
        if self.rounds == 0 {
            bail!("{what}.rounds must be >= 1");
        }
        if !(self.target_relative_error > 0.0 && self.target_relative_error < 1.0) {
            bail!(
                "{what}.target_relative_error must be in (0, 1), got {}",
                self.target_relative_error
            );
        }
        Ok(())
    }
}

/// A dataset twin generated, with its least-squares optimum.
pub struct PreparedDataset {
    /// The paper's name.
    pub name: String,
    /// The problem.
    pub problem: Arc<LeastSquares>,
    /// Its minimum.
    pub optimum: Optimum,
    /// Error of the zero model (the start of every run).
    pub initial_error: f64,
    /// Rows, features, non-zeros.
    pub shape: (usize, usize, usize),
}

impl AsyncDataset {
    /// Checks the dataset's settings for `workers` workers.
    ///
    /// # Errors
    /// As [`MethodSettings::validate`], or fewer rows than workers.
    pub fn validate(&self, workers: usize) -> Result<()> {
        self.sgd.validate(&format!("datasets.{}.sgd", self.name))?;
        self.saga
            .validate(&format!("datasets.{}.saga", self.name))?;
        let rows = match &self.shape {
            TwinShape::Sparse(s) => s.rows,
            TwinShape::Dense(d) => {
                if !(d.density > 0.0 && d.density <= 1.0) {
                    bail!(
                        "datasets.{}.shape.density must be in (0, 1], got {}",
                        self.name,
                        d.density
                    );
                }
                d.rows
            }
        };
        if rows < workers {
            bail!(
                "datasets.{}: {rows} rows cannot be split over {workers} workers",
                self.name
            );
        }
        Ok(())
    }

    /// The twin's rows generated from `seed`: what [`Self::prepare`] learns on (and what
    /// `syncbench datasets figure-twins` writes out).
    pub fn generate(&self, seed: u64) -> CsrMatrix {
        match &self.shape {
            TwinShape::Sparse(s) => s.generate(seed),
            TwinShape::Dense(d) => d.generate(seed),
        }
    }

    /// Generates the twin from `seed` and solves for the optimum.
    ///
    /// # Errors
    /// When the data is degenerate or the optimum solver does not converge.
    pub fn prepare(&self, seed: u64) -> Result<PreparedDataset> {
        let data = self.generate(seed);
        let shape = (data.rows(), data.cols, data.nnz());
        let problem = Arc::new(LeastSquares::new(data)?);
        let optimum = problem
            .optimum(1e-9, 20_000)
            .with_context(|| format!("reference optimum of {}", self.name))?;
        let initial_error = problem.objective(&vec![0.0; problem.dim()]) - optimum.objective;
        Ok(PreparedDataset {
            name: self.name.clone(),
            problem,
            optimum,
            initial_error,
            shape,
        })
    }

    /// Settings of `method`.
    pub fn settings(&self, method: Method) -> MethodSettings {
        match method {
            Method::Sgd => self.sgd,
            Method::Saga => self.saga,
        }
    }
}

/// A method run synchronously or asynchronously.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    /// SGD or SAGA.
    pub method: Method,
    /// BSP barrier and one step per round (SGD, SAGA), or the configured barrier and one step
    /// per result (ASGD, ASAGA).
    pub sync: bool,
}

impl Variant {
    /// sgd, asgd, saga or asaga.
    pub fn label(&self) -> &'static str {
        variant_label(self.method, self.sync)
    }
}

/// Label of a method run: sgd, asgd, saga, asaga.
pub fn variant_label(method: Method, sync: bool) -> &'static str {
    match (method, sync) {
        (Method::Sgd, true) => "sgd",
        (Method::Sgd, false) => "asgd",
        (Method::Saga, true) => "saga",
        (Method::Saga, false) => "asaga",
    }
}

/// Runs `variant` on `data` under `driver`.
///
/// # Errors
/// Any configuration, protocol or deadlock error of the run.
pub fn run_variant(
    driver: DriverKind,
    common: &AsyncCommon,
    data: &PreparedDataset,
    settings: &MethodSettings,
    variant: Variant,
    stragglers: &StragglerConfig,
    seed: u64,
) -> Result<RunRecords> {
    let Variant { method, sync } = variant;
    let p = common.workers;
    let learning = Arc::new(AsyncLearning::new(
        data.problem.clone(),
        AsyncLearningConfig {
            method,
            step: if sync {
                settings.step
            } else {
                settings.step / p as f64
            },
            decay: method == Method::Sgd,
            staleness_lr: common.staleness_lr && !sync,
            sampling_rate: settings.sampling_rate,
            seed,
        },
        data.optimum.objective,
    )?);
    let spec = AsyncSpec {
        workers: p,
        tasks: settings.rounds * p as u64,
        barrier: if sync {
            BarrierPredicate::Bsp
        } else {
            BarrierPredicate::parse(&common.async_barrier)?
        },
        collect: if sync { Collect::Round } else { Collect::Each },
    };
    let run = RunSettings {
        network: common.network.clone(),
        compute: common.compute,
        stragglers: stragglers.clone(),
        eval_every: common.eval_every_rounds * p as u64,
        threads: common.threads.clone(),
        iteration_ns: None,
        wire_bytes: None,
    };
    run_nodes(driver, spec.build()?, &run, &learning, seed).with_context(|| {
        format!(
            "{} on {} under {}",
            variant_label(method, sync),
            data.name,
            driver.label()
        )
    })
}

/// Mean of the workers' waits for tasks, in milliseconds.
pub fn mean_wait_ms(r: &RunRecords) -> f64 {
    if r.waits.is_empty() {
        return 0.0;
    }
    r.waits.iter().map(|w| w.wait as f64).sum::<f64>() / r.waits.len() as f64 * 1e-6
}

/// Each worker's mean wait for tasks in milliseconds, by worker index.
pub fn wait_per_worker_ms(r: &RunRecords, workers: usize) -> Vec<f64> {
    let mut sum = vec![(0.0, 0u64); workers];
    for w in &r.waits {
        if let Some(e) = sum.get_mut(w.worker) {
            e.0 += w.wait as f64;
            e.1 += 1;
        }
    }
    sum.iter()
        .map(|&(s, n)| if n == 0 { 0.0 } else { s / n as f64 * 1e-6 })
        .collect()
}
