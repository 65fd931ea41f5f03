//! The configuration and setup shared by the ESSP matrix-factorisation experiments: synthetic
//! Netflix-shaped ratings, the MF workload on row-level parameter-server tables sharded over
//! `shards` server nodes, and the BSP / SSP(s) / ESSP(s) mode list.

use crate::harness::data_source::{DataMode, DataSource};
use crate::harness::runner::{run_nodes, RunSettings, ThreadsSection};
use crate::workloads::lda::LdaPart;
use crate::workloads::row_tables::{essp_modes, steps_note};
use anyhow::{bail, Context, Result};
use bench_core::data::{
    partition_by_user, read_ratings_dataset, seeded_shuffle, DatasetCache, DatasetLock, Rating,
    RatingsShape,
};
use bench_core::driver::{ComputeModel, DriverKind, NetworkModel};
use bench_core::metrics::RunRecords;
use bench_core::protocol::table::TableSpec;
use bench_core::protocol::SyncMode;
use bench_core::straggler::StragglerConfig;
use bench_core::workload::{ClockSteps, MatrixFactorization, MfConfig, MfTables};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `[data]`: the synthetic ratings (`--data synthetic`), or the real dataset they twin
/// (`--data real`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatingsData {
    /// The dataset these ratings twin, by its datasets.lock name (read with `--data real`; its
    /// first `ratings` ratings in file order, which for MovieLens are whole users).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// Users (rows).
    pub users: usize,
    /// Items (columns).
    pub items: usize,
    /// Observed ratings (with real data: at most this many are read).
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

impl RatingsData {
    /// The dense matrix-factorisation workload `mf` over these ratings for `workers` workers:
    /// generated from `seed` (or, with `--data real`, the configured dataset's), a held-out
    /// share set aside, the training ratings partitioned over the workers by user; records
    /// which data in `data`.
    ///
    /// # Errors
    /// Invalid MF hyper-parameters; with real data, a config that names no dataset, a dataset
    /// not fetched and verified, or too few ratings for the workers.
    pub fn workload(
        &self,
        mf: MfConfig,
        workers: usize,
        seed: u64,
        data: &DataSource,
    ) -> Result<MatrixFactorization> {
        let (users, items, all) = if data.mode() == DataMode::Real {
            self.real_ratings(workers, data)?
        } else {
            let shape = RatingsShape {
                users: self.users,
                items: self.items,
                ratings: self.ratings,
                rank: self.rank,
                noise: self.noise,
                popularity_exponent: self.popularity_exponent,
            };
            data.record(format!(
                "data: synthetic Netflix-shaped ratings{} ({} ratings of {} users x {} items, rank {}, seed {seed})",
                self.dataset
                    .as_ref()
                    .map_or(String::new(), |d| format!(" twinning {d}")),
                self.ratings,
                self.users,
                self.items,
                self.rank
            ));
            (self.users, self.items, shape.generate(seed))
        };
        let n_test = ((all.len() as f64) * self.test_fraction).ceil() as usize;
        let (test, train) = all.split_at(n_test);
        let mut train = train.to_vec();
        partition_by_user(&mut train, workers, seed);
        MatrixFactorization::new(mf, users, items, train, test.to_vec())
            .context("invalid matrix-factorisation setup")
    }

    /// The configured dataset's first `ratings` ratings from the verified cache, in a fixed
    /// seeded order (the held-out share is a random sample, the same for every run seed), with
    /// its user and item counts.
    fn real_ratings(
        &self,
        workers: usize,
        data: &DataSource,
    ) -> Result<(usize, usize, Vec<Rating>)> {
        let Some(name) = &self.dataset else {
            bail!("--data real, but this configuration's [data] names no dataset");
        };
        let lock = DatasetLock::read(&crate::harness::data_source::lock_path(None))?;
        let entry = lock.get(name)?;
        let path = DatasetCache::from_env()?.path(entry)?;
        let file = read_ratings_dataset(&path, &entry.format)?;
        let total = file.ratings.len();
        let mut all = file.ratings;
        all.truncate(self.ratings);
        // Dense ids are given in order of first appearance, so a prefix's ids are dense too.
        let users = all.iter().map(|r| r.user as usize + 1).max().unwrap_or(0);
        let items = all.iter().map(|r| r.item as usize + 1).max().unwrap_or(0);
        if all.len() < 2 * workers {
            bail!(
                "dataset '{name}' ({}): {} ratings, too few for {workers} workers and a held-out share",
                path.display(),
                all.len(),
            );
        }
        seeded_shuffle(&mut all, 0x005e_ed0f_da7a);
        data.record(format!(
            "data: real {name} from {} ({} of its {total} ratings, {users} users x {items} items, checksum {})",
            path.display(),
            all.len(),
            entry.checksum.label()
        ));
        Ok((users, items, all))
    }
}

/// ALS sweeps at most for an MF reference optimum when the configuration says nothing.
pub const DEFAULT_REFERENCE_SWEEPS: usize = 500;

/// A matrix-factorisation PS experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MfExperimentConfig {
    /// Workers.
    pub workers: usize,
    /// Parameter-server shards the table rows are spread over (server nodes `0..shards`).
    /// With more than one, no node holds every row and the loss is not evaluated (NaN).
    #[serde(default = "one_shard")]
    pub shards: usize,
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
    /// Read-compute steps per clock (Bösen's in-clock reads: each step reads its rows from the
    /// cache as it begins). Absent: one step per rating, as Bösen's computation threads GET
    /// rows rating by rating; 1: every row read when the clock begins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_per_clock: Option<u64>,
    /// The knobs the verdicts are re-derived over (sensitivity.csv; first seed, sim driver).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensitivity: Option<MfSensitivity>,
    /// essp-fig3 only: ALS sweeps at most for the MF reference optimum (0: none, and the
    /// targets fall back to the compared runs' losses). Absent: 500. One sweep costs about
    /// ratings x rank^2 operations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_sweeps: Option<usize>,
    /// essp-fig3 only: the large step size of the stability comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub large_step: Option<f64>,
    /// essp-fig2-breakdown and essp-fig3: the LDA part (without it, its claims are n.a.).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lda: Option<LdaPart>,
}

/// `[sensitivity]`: the grid of modelling knobs an ESSP experiment re-derives its claims over
/// (sensitivity.csv). Each list holds values besides the configured one.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MfSensitivity {
    /// Per-clock compute-time jitter (log-normal sigma) values.
    #[serde(default)]
    pub jitter_sigma: Vec<f64>,
    /// essp-fig2-staleness: also run every jitter with every row of a clock read when it
    /// begins (`steps_per_clock = 1`), beside the configured reads.
    #[serde(default)]
    pub whole_clock_reads: bool,
    /// essp-fig3: large step sizes of the stability comparison.
    #[serde(default)]
    pub large_step: Vec<f64>,
    /// essp-fig3: vary one knob at a time (every step at the configured jitter, every jitter
    /// at the configured step) instead of every combination: fewer runs, no interactions.
    #[serde(default)]
    pub one_at_a_time: bool,
}

impl MfSensitivity {
    /// `extra` with `configured`, sorted, without repeats.
    pub fn grid(extra: &[f64], configured: f64) -> Vec<f64> {
        crate::judge::sensitivity::grid(extra, configured)
    }
}

fn one_shard() -> usize {
    1
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
        if self.shards == 0 {
            bail!("shards must be at least 1");
        }
        if !(self.data.test_fraction > 0.0 && self.data.test_fraction < 1.0) {
            bail!(
                "data.test_fraction must be in (0, 1), got {}",
                self.data.test_fraction
            );
        }
        self.network.validate(self.workers + self.shards)?;
        self.stragglers.factors(self.workers)?;
        ClockSteps::from_config(self.steps_per_clock)?;
        essp_modes(&self.staleness, self.clocks)
    }

    /// The manifest's line on how a clock reads its rows.
    pub fn reads_note(&self) -> String {
        steps_note("mf", self.steps_per_clock, "rating")
    }

    /// ALS sweeps at most for the reference optimum (the `reference_sweeps` setting or 500).
    pub fn reference_sweeps(&self) -> usize {
        self.reference_sweeps.unwrap_or(DEFAULT_REFERENCE_SWEEPS)
    }

    /// Matrix factorisation on row tables, on ratings generated from `seed`.
    ///
    /// # Errors
    /// For invalid MF hyper-parameters.
    pub fn tables(&self, seed: u64, data: &DataSource) -> Result<Arc<MfTables>> {
        self.tables_with(self.mf, seed, data)
    }

    /// As [`Self::tables`] with other MF hyper-parameters.
    ///
    /// # Errors
    /// For invalid MF hyper-parameters.
    pub fn tables_with(&self, mf: MfConfig, seed: u64, data: &DataSource) -> Result<Arc<MfTables>> {
        let mf = self.data.workload(mf, self.workers, seed, data)?;
        Ok(Arc::new(
            MfTables::new(Arc::new(mf), self.workers, self.shards)?
                .with_steps(ClockSteps::from_config(self.steps_per_clock)?),
        ))
    }

    /// Runs `mode` on `tables` under `driver`.
    ///
    /// # Errors
    /// Any configuration, protocol, transport or deadlock error of the run.
    pub fn run(
        &self,
        driver: DriverKind,
        mode: SyncMode,
        tables: &Arc<MfTables>,
        seed: u64,
    ) -> Result<RunRecords> {
        let spec = TableSpec {
            mode,
            workers: self.workers,
            shards: self.shards,
            clocks: self.clocks,
            access: tables.clone(),
        };
        run_nodes(driver, spec.build()?, &self.settings(), tables, seed)
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
