//! The `[lda]` section of the ESSP experiments: LDA by collapsed Gibbs sampling on row tables
//! (ESSP §"Experiments": NYTimes, K = 100 topics, a 50% mini-batch per clock, 8 machines), on a
//! synthetic topic-model corpus (`--data synthetic`) or the real bag-of-words file (`--data real`),
//! and its BSP / SSP(s) / ESSP(s) runs.

use crate::harness::data_source::{DataMode, DataSource};
use crate::harness::runner::{run_nodes, RunSettings, ThreadsSection};
use crate::workloads::row_tables::{essp_modes, steps_note};
use anyhow::{bail, Context, Result};
use bench_core::data::{read_bag_of_words, BagOfWordsShape, DatasetCache, DatasetLock};
use bench_core::driver::{ComputeModel, DriverKind, NetworkModel};
use bench_core::metrics::RunRecords;
use bench_core::protocol::table::TableSpec;
use bench_core::protocol::SyncMode;
use bench_core::straggler::StragglerConfig;
use bench_core::workload::{ClockSteps, Lda, LdaConfig, LdaTables};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `[lda.corpus]`: the documents.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorpusData {
    /// The dataset this corpus twins, by its datasets.lock name (read with `--data real`; its
    /// first `documents` documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// Documents.
    pub documents: usize,
    /// Vocabulary size.
    pub vocabulary: usize,
    /// Topics of the generating model.
    pub topics: usize,
    /// Mean tokens per document.
    pub words_per_document: usize,
}

/// `[lda]`: the LDA part of essp-fig2-breakdown and essp-fig3.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LdaPart {
    /// Workers (the paper: 8 machines).
    pub workers: usize,
    /// Clocks each worker runs.
    pub clocks: u64,
    /// Staleness bounds; each gives an SSP(s) and an ESSP(s) run, after one BSP run.
    pub staleness: Vec<i64>,
    /// Evaluate every this many applied updates.
    pub eval_every: u64,
    /// The corpus.
    pub corpus: CorpusData,
    /// LDA hyper-parameters.
    pub lda: LdaConfig,
    /// Compute model (per token sampled).
    pub compute: ComputeModel,
    /// Network model.
    pub network: NetworkModel,
    /// Read-compute steps per clock. Absent: one step per document (each document's word rows
    /// read as it is sampled); 1: every row read when the clock begins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps_per_clock: Option<u64>,
    /// essp-fig3: clocks of the sequential reference sampler (one worker, every read fresh)
    /// whose settled level the curves are read against. Absent: 5 x `clocks`; 0: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_clocks: Option<u64>,
}

impl LdaPart {
    /// Clocks of the sequential reference run (the `reference_clocks` setting, or its default).
    pub fn reference_run_clocks(&self) -> u64 {
        self.reference_clocks.unwrap_or(5 * self.clocks)
    }

    /// The manifest's line on how a clock reads its rows.
    pub fn reads_note(&self) -> String {
        steps_note("lda", self.steps_per_clock, "document")
    }

    /// The modes to run, after checking every value.
    ///
    /// # Errors
    /// For an empty or out-of-range setting, naming it.
    pub fn modes(&self, stragglers: &StragglerConfig) -> Result<Vec<SyncMode>> {
        if self.workers == 0 {
            bail!("lda.workers must be at least 1");
        }
        if self.corpus.documents < self.workers {
            bail!(
                "lda.corpus.documents ({}) must be at least lda.workers ({})",
                self.corpus.documents,
                self.workers
            );
        }
        self.network.validate(self.workers + 1)?;
        ClockSteps::from_config(self.steps_per_clock)?;
        stragglers.factors(self.workers)?;
        essp_modes(&self.staleness, self.clocks).context("in [lda]")
    }

    /// LDA on row tables (one shard: the log-likelihood needs every row), on the corpus.
    ///
    /// # Errors
    /// For invalid hyper-parameters; with real data, a config that names no dataset, a dataset
    /// not fetched and verified, or a file that does not parse.
    pub fn tables(&self, seed: u64, data: &DataSource) -> Result<Arc<LdaTables>> {
        let corpus = if data.mode() == DataMode::Real {
            let Some(name) = &self.corpus.dataset else {
                bail!("--data real, but this configuration's [lda.corpus] names no dataset");
            };
            let lock = DatasetLock::read(&crate::harness::data_source::lock_path(None))?;
            let entry = lock.get(name)?;
            if entry.format != "uci-bow" {
                bail!(
                    "dataset '{name}' is {}, not a UCI bag of words",
                    entry.format
                );
            }
            let path = DatasetCache::from_env()?.path(entry)?;
            let f = std::fs::File::open(&path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            let m = read_bag_of_words(std::io::BufReader::with_capacity(1 << 20, f), &path)?;
            let n = self.corpus.documents.min(m.rows());
            data.record(format!(
                "lda data: real {name} from {} ({n} of its {} documents, {} words, checksum {})",
                path.display(),
                m.rows(),
                m.cols,
                entry.checksum.label()
            ));
            m.slice_rows(0..n)
        } else {
            let shape = BagOfWordsShape {
                documents: self.corpus.documents,
                vocabulary: self.corpus.vocabulary,
                topics: self.corpus.topics,
                words_per_document: self.corpus.words_per_document,
            };
            data.record(format!(
                "lda data: synthetic topic-model corpus{} ({} documents, {} words, {} topics, about {} tokens each, seed {seed})",
                self.corpus
                    .dataset
                    .as_ref()
                    .map_or(String::new(), |d| format!(" twinning {d}")),
                shape.documents,
                shape.vocabulary,
                shape.topics,
                shape.words_per_document
            ));
            shape.generate(seed)
        };
        let lda = Lda::new(self.lda, &corpus).context("invalid LDA setup")?;
        Ok(Arc::new(
            LdaTables::new(Arc::new(lda), self.workers, 1)?
                .with_steps(ClockSteps::from_config(self.steps_per_clock)?),
        ))
    }

    /// Runs `mode` on `tables` under `driver`, with the experiment's stragglers and threads
    /// settings.
    ///
    /// # Errors
    /// Any configuration, protocol, transport or deadlock error of the run.
    pub fn run(
        &self,
        driver: DriverKind,
        mode: SyncMode,
        tables: &Arc<LdaTables>,
        stragglers: &StragglerConfig,
        threads: &ThreadsSection,
        seed: u64,
    ) -> Result<RunRecords> {
        let spec = TableSpec {
            mode,
            workers: self.workers,
            shards: 1,
            clocks: self.clocks,
            access: tables.clone(),
        };
        let settings = RunSettings {
            network: self.network.clone(),
            compute: self.compute,
            stragglers: stragglers.clone(),
            eval_every: self.eval_every,
            threads: threads.clone(),
            iteration_ns: None,
            wire_bytes: None,
        };
        run_nodes(driver, spec.build()?, &settings, tables, seed)
    }
}
