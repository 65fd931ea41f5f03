//! The `[data]` section of SVM experiments: a synthetic twin of the dataset's shape (`--data
//! synthetic`, the default at quick scale) or the real file from the dataset cache (`--data
//! real`, the default at paper scale), and the SVM workload over it.

use crate::harness::data_source::{DataMode, DataSource};
use crate::judge::reference::Reference;
use anyhow::{bail, Context, Result};
use bench_core::data::{read_libsvm, CsrMatrix, DatasetCache, DatasetLock, SparseClassification};
use bench_core::workload::{linear_optimum, SvmConfig, SvmSgd, Workload};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Synthetic sparse classification data of a paper dataset's shape.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SparseData {
    /// The dataset this twins, by its datasets.lock name (read with `--data real`).
    #[serde(default)]
    pub dataset: Option<String>,
    /// Training rows (split contiguously over workers).
    pub train_rows: usize,
    /// Held-out rows for evaluation.
    pub test_rows: usize,
    /// Features.
    pub features: usize,
    /// Mean non-zeros per row.
    pub nnz_per_row: f64,
    /// Share of flipped labels.
    pub label_noise: f64,
    /// Share of (most frequent) features that carry the class.
    pub informative: f64,
    /// Share of each row's non-zeros from its class's topic vocabulary (0: labels from a hidden
    /// linear model; `bench_core::data::SparseClassification`).
    #[serde(default)]
    pub topic_share: f64,
}

impl SparseData {
    /// Checks the sizes for `workers` workers.
    ///
    /// # Errors
    /// When there are fewer training rows than workers or no test rows.
    pub fn validate(&self, workers: usize) -> Result<()> {
        if self.train_rows < workers || self.test_rows == 0 {
            bail!("data.train_rows must be >= workers and data.test_rows >= 1");
        }
        Ok(())
    }

    /// Builds the SVM workload over the twin generated from `seed`, or over the real dataset
    /// when `data` says `real`; records which in `data`.
    ///
    /// # Errors
    /// For invalid SVM hyper-parameters; with real data, as [`Self::rows`].
    pub fn svm_workload(
        &self,
        svm: SvmConfig,
        seed: u64,
        data: &DataSource,
    ) -> Result<Arc<dyn Workload>> {
        let (train, test) = self.rows(seed, data)?;
        Ok(Arc::new(SvmSgd::new(svm, train, test)?))
    }

    /// The training and evaluation rows: the twin generated from `seed`, or the real dataset
    /// when `data` says `real`; records which in `data`.
    ///
    /// # Errors
    /// With real data, a dataset not fetched and verified, or a file that does not parse (a
    /// config that names no dataset is a synthetic proxy by design, used as such).
    pub fn rows(&self, seed: u64, data: &DataSource) -> Result<(CsrMatrix, CsrMatrix)> {
        if data.mode() == DataMode::Real {
            return self.real_rows(data);
        }
        Ok(self.synthetic_rows(seed, data))
    }

    /// The twin generated from `seed`, split into training and evaluation rows.
    pub fn twin(&self, seed: u64) -> (CsrMatrix, CsrMatrix) {
        let shape = SparseClassification {
            rows: self.train_rows + self.test_rows,
            features: self.features,
            nnz_per_row: self.nnz_per_row,
            label_noise: self.label_noise,
            informative: self.informative,
            topic_share: self.topic_share,
        };
        let rows = shape.generate(seed);
        (
            rows.slice_rows(0..self.train_rows),
            rows.slice_rows(self.train_rows..rows.rows()),
        )
    }

    /// The exact optimum of the objective `svm` on the data [`Self::svm_workload`] builds
    /// (`None` with real data: not computed there, as paper-scale files can be too large to
    /// solve exactly here).
    pub fn reference(&self, svm: SvmConfig, seed: u64, data: &DataSource) -> Option<Reference> {
        if data.mode() == DataMode::Real {
            return None;
        }
        let (train, test) = self.twin(seed);
        let o = linear_optimum(
            &train,
            &test,
            svm.loss,
            svm.lambda.max(bench_core::workload::MIN_REFERENCE_LAMBDA),
            1e-4,
            300,
            seed,
        );
        Some(Reference {
            objective: o.objective,
            test_loss: o.test_objective,
            test_accuracy: o.test_accuracy,
            certificate: o.certificate,
            passes: o.passes,
            objective_gap: o.gap_bound,
            way: crate::judge::reference::DEFAULT_WAY,
        })
    }

    fn synthetic_rows(&self, seed: u64, data: &DataSource) -> (CsrMatrix, CsrMatrix) {
        let (train, test) = self.twin(seed);
        data.record(format!(
            "data: synthetic twin{} ({} + {} rows, {} features, {} non-zeros per row, seed {seed})",
            self.dataset
                .as_ref()
                .map_or(String::new(), |d| format!(" of {d}")),
            self.train_rows,
            self.test_rows,
            self.features,
            self.nnz_per_row
        ));
        (train, test)
    }

    fn real_rows(&self, data: &DataSource) -> Result<(CsrMatrix, CsrMatrix)> {
        let Some(name) = &self.dataset else {
            // A proxy by design (e.g. the small model standing in for a CNN under a time
            // profile): there is no real file to read.
            data.record("data: --data real, but this configuration's [data] names no dataset: it is a synthetic proxy, used as such".into());
            return Ok(self.synthetic_rows(1, data));
        };
        let lock_path = crate::harness::data_source::lock_path(None);
        let lock = DatasetLock::read(&lock_path)?;
        let entry = lock.get(name)?;
        if entry.format != "libsvm" {
            bail!("dataset '{name}' is {}, not LIBSVM", entry.format);
        }
        let path = DatasetCache::from_env()?.path(entry)?;
        let features = entry.features.map(|f| f as usize);
        let f = std::fs::File::open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let m = read_libsvm(
            std::io::BufReader::with_capacity(1 << 20, f),
            &path,
            features,
        )?;
        let rows = m.rows();
        if rows < 2 {
            bail!(
                "{}: {rows} rows, too few to train and evaluate",
                path.display()
            );
        }
        // The configured split when the file is large enough, else 90% / 10%.
        let (train, test) = if self.train_rows + self.test_rows <= rows {
            (self.train_rows, self.test_rows)
        } else {
            let test = (rows / 10).max(1);
            (rows - test, test)
        };
        data.record(format!(
            "data: real {name} from {} ({train} training + {test} evaluation rows of {rows}, {} features, checksum {})",
            path.display(),
            m.cols,
            entry.checksum.label()
        ));
        // Real datasets decide their own width: the workload uses the file's columns.
        Ok((m.slice_rows(0..train), m.slice_rows(train..train + test)))
    }
}
