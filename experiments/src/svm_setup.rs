//! The `[data]` section of SVM experiments: RCV1-shaped synthetic data and the SVM workload.

use anyhow::{bail, Result};
use bench_core::data::SparseClassification;
use bench_core::workload::{SvmConfig, SvmSgd, Workload};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Synthetic sparse classification data of a paper dataset's shape.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SparseData {
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
    /// Share of (most frequent) features the hidden model weighs.
    pub informative: f64,
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

    /// Generates the data from `seed` and builds the SVM workload over it.
    ///
    /// # Errors
    /// For invalid SVM hyper-parameters.
    pub fn svm_workload(&self, svm: SvmConfig, seed: u64) -> Result<Arc<dyn Workload>> {
        let shape = SparseClassification {
            rows: self.train_rows + self.test_rows,
            features: self.features,
            nnz_per_row: self.nnz_per_row,
            label_noise: self.label_noise,
            informative: self.informative,
        };
        let data = shape.generate(seed);
        Ok(Arc::new(SvmSgd::new(
            svm,
            data.slice_rows(0..self.train_rows),
            data.slice_rows(self.train_rows..data.rows()),
        )?))
    }
}
