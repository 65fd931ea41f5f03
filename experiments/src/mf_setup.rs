//! The configuration and setup shared by the ESSP matrix-factorisation experiments: synthetic
//! Netflix-shaped ratings, the MF workload, and the BSP / SSP(s) / ESSP(s) mode list.

use crate::runner::{RunSettings, ThreadsSection};
use anyhow::{bail, Context, Result};
use bench_core::data::RatingsShape;
use bench_core::driver::{ComputeModel, NetworkModel};
use bench_core::protocol::SyncMode;
use bench_core::straggler::StragglerConfig;
use bench_core::workload::{MatrixFactorization, MfConfig, Workload};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `[data]`: the synthetic ratings.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatingsData {
    /// Users (rows).
    pub users: usize,
    /// Items (columns).
    pub items: usize,
    /// Observed ratings.
    pub ratings: usize,
    /// Hidden rank.
    pub rank: usize,
    /// Noise standard deviation.
    pub noise: f64,
    /// Zipf exponent of item popularity.
    pub popularity_exponent: f64,
    /// Share of ratings held out for evaluation.
    pub test_fraction: f64,
}

/// A matrix-factorisation PS experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MfExperimentConfig {
    /// Workers.
    pub workers: usize,
    /// Clocks each worker runs.
    pub clocks: u64,
    /// Staleness bounds; each gives an SSP(s) and an ESSP(s) run, after one BSP run.
    pub staleness: Vec<i64>,
    /// Evaluate every this many applied updates.
    pub eval_every: u64,
    /// Ratings.
    pub data: RatingsData,
    /// MF hyper-parameters.
    pub mf: MfConfig,
    /// Compute model.
    pub compute: ComputeModel,
    /// Network model.
    pub network: NetworkModel,
    /// Threads driver.
    pub threads: ThreadsSection,
    /// Stragglers.
    pub stragglers: StragglerConfig,
    /// essp-fig3 only: the large step size of the stability comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub large_step: Option<f64>,
}

impl MfExperimentConfig {
    /// BSP, then SSP(s) and ESSP(s) for each s, after checking every value.
    ///
    /// # Errors
    /// For an empty or out-of-range setting, naming it.
    pub fn modes(&self) -> Result<Vec<SyncMode>> {
        if self.workers == 0 || self.clocks == 0 || self.staleness.is_empty() {
            bail!("workers, clocks and the staleness list must be non-empty");
        }
        if !(self.data.test_fraction > 0.0 && self.data.test_fraction < 1.0) {
            bail!(
                "data.test_fraction must be in (0, 1), got {}",
                self.data.test_fraction
            );
        }
        self.network.validate(self.workers + 1)?;
        self.stragglers.factors(self.workers)?;
        let mut modes = vec![SyncMode::Bsp];
        for &s in &self.staleness {
            if s < 0 || s as u64 >= self.clocks {
                bail!(
                    "staleness {s} must be in 0..{} (the run length)",
                    self.clocks
                );
            }
            modes.push(SyncMode::Ssp { staleness: s });
            modes.push(SyncMode::Essp { staleness: s });
        }
        Ok(modes)
    }

    /// The MF workload on ratings generated from `seed`.
    ///
    /// # Errors
    /// For invalid MF hyper-parameters.
    pub fn workload(&self, seed: u64) -> Result<Arc<dyn Workload>> {
        self.workload_with(self.mf, seed)
    }

    /// As [`Self::workload`] with other MF hyper-parameters.
    ///
    /// # Errors
    /// For invalid MF hyper-parameters.
    pub fn workload_with(&self, mf: MfConfig, seed: u64) -> Result<Arc<dyn Workload>> {
        let shape = RatingsShape {
            users: self.data.users,
            items: self.data.items,
            ratings: self.data.ratings,
            rank: self.data.rank,
            noise: self.data.noise,
            popularity_exponent: self.data.popularity_exponent,
        };
        let all = shape.generate(seed);
        let n_test = ((all.len() as f64) * self.data.test_fraction).ceil() as usize;
        let (test, train) = all.split_at(n_test);
        Ok(Arc::new(
            MatrixFactorization::new(
                mf,
                self.data.users,
                self.data.items,
                train.to_vec(),
                test.to_vec(),
            )
            .context("invalid matrix-factorisation setup")?,
        ))
    }

    /// Driver settings.
    pub fn settings(&self) -> RunSettings {
        RunSettings {
            network: self.network.clone(),
            compute: self.compute,
            stragglers: self.stragglers.clone(),
            eval_every: self.eval_every,
            threads: self.threads.clone(),
            iteration_ns: None,
            wire_bytes: None,
        }
    }
}
