//! Least squares trained by mini-batch SGD as a per-worker [`Workload`]: ASYNC's problem
//! (ASYNC §2, Eq 4, [`LeastSquares`]) in the form every family of modes can train, so that the
//! mode matrix can put it beside the SVM. Under ASYNC's own experiments least squares is a
//! coordinator task workload ([`super::AsyncLearning`]); here a worker's update is the same
//! MLlib gradient, `diff * x` per row, averaged over its mini-batch.

use super::least_squares::LeastSquares;
use super::share_batches::ShareBatches;
use super::Workload;
use crate::data::CsrMatrix;
use crate::error::{CoreError, Result};

/// Step and mini-batch.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LsSgdConfig {
    /// Constant step size (ASYNC §6.1 runs SGD at a fixed step).
    pub step: f64,
    /// Rows per mini-batch.
    pub batch: usize,
}

impl LsSgdConfig {
    /// Checks the values are usable.
    ///
    /// # Errors
    /// [`CoreError::OutOfRange`] naming the bad value.
    pub fn validate(&self) -> Result<()> {
        if !(self.step > 0.0 && self.step.is_finite()) {
            return Err(CoreError::out_of_range(
                "ls.settings.step",
                "> 0",
                self.step,
            ));
        }
        if self.batch == 0 {
            return Err(CoreError::out_of_range(
                "ls.settings.batch",
                ">= 1",
                self.batch,
            ));
        }
        Ok(())
    }
}

/// Mini-batch SGD on `F(w) = 1/(2n) sum (x_i . w - y_i)^2` over training rows partitioned
/// contiguously over workers; evaluated by the same objective on held-out rows.
#[derive(Debug)]
pub struct LeastSquaresSgd {
    cfg: LsSgdConfig,
    train: LeastSquares,
    test: LeastSquares,
}

impl LeastSquaresSgd {
    /// The workload over `train` (partitioned over workers), evaluated on `test`.
    ///
    /// # Errors
    /// Invalid settings, data without rows, or data of different widths.
    pub fn new(cfg: LsSgdConfig, train: CsrMatrix, test: CsrMatrix) -> Result<Self> {
        cfg.validate()?;
        if train.cols != test.cols {
            return Err(CoreError::Config(format!(
                "least squares: training rows have {} features, evaluation rows {}",
                train.cols, test.cols
            )));
        }
        Ok(LeastSquaresSgd {
            cfg,
            train: LeastSquares::new(train)?,
            test: LeastSquares::new(test)?,
        })
    }

    /// The training problem (for its exact optimum).
    pub fn train(&self) -> &LeastSquares {
        &self.train
    }

    /// The held-out problem (the objective the curves plot).
    pub fn test(&self) -> &LeastSquares {
        &self.test
    }
}

impl Workload for LeastSquaresSgd {
    fn dim(&self) -> usize {
        self.train.dim()
    }

    fn batch_size(&self, _workers: usize) -> usize {
        self.cfg.batch
    }

    /// `-step / b * sum_k (x_k . w - y_k) x_k` over the worker's `iter`-th mini-batch of its
    /// contiguous share of the rows, read cyclically (as [`super::SvmSgd`]).
    fn update(&self, model: &[f32], worker: usize, workers: usize, iter: u64) -> Vec<f32> {
        let b = self.cfg.batch;
        let scale = -self.cfg.step / b as f64;
        let mut acc = vec![0.0f64; self.dim()];
        let batches = ShareBatches::new(self.train.rows(), workers, worker, b);
        for r in batches.rows(iter) {
            self.train
                .add_row(r, scale * self.train.residual(r, model), &mut acc);
        }
        acc.into_iter().map(|a| a as f32).collect()
    }

    fn evaluate(&self, model: &[f32]) -> (f64, f64) {
        self.test.objective_and_accuracy(model)
    }

    /// `F(w)` on the training rows, the objective CGLS's reference optimum minimises.
    fn objective(&self, model: &[f32]) -> Option<f64> {
        Some(self.train.objective(model))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Rcv1Shape, SparseClassification};

    /// webspam's shape (254 features, far fewer than the rows, so the optimum generalises).
    fn workload(step: f64) -> LeastSquaresSgd {
        let data = SparseClassification {
            rows: 3000,
            features: 254,
            nnz_per_row: 40.0,
            label_noise: 0.03,
            informative: 0.1,
            topic_share: 0.0,
        }
        .generate(2);
        LeastSquaresSgd::new(
            LsSgdConfig { step, batch: 32 },
            data.slice_rows(0..2500),
            data.slice_rows(2500..3000),
        )
        .unwrap()
    }

    /// Serial SGD moves the held-out objective from the zero model's most of the way to the
    /// exact optimum's.
    #[test]
    fn sgd_approaches_the_optimum() {
        let w = workload(0.5);
        let mut model = w.initial_model();
        let (start, _) = w.evaluate(&model);
        let opt = w.train().optimum(1e-8, 2000).unwrap();
        let star: Vec<f32> = opt.minimiser.iter().map(|&x| x as f32).collect();
        let best = w.evaluate(&star).0;
        assert!(best < start, "optimum {best} vs start {start}");
        for it in 0..600 {
            let u = w.update(&model, 0, 1, it);
            model.iter_mut().zip(u).for_each(|(m, d)| *m += d);
        }
        let (end, acc) = w.evaluate(&model);
        assert!(
            end - best < 0.5 * (start - best),
            "start {start}, optimum {best}, after 600 steps {end}"
        );
        assert!(acc > 0.6, "sign accuracy {acc}");
    }

    #[test]
    fn bad_settings_are_named() {
        let e = LsSgdConfig {
            step: 0.0,
            batch: 1,
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("ls.settings.step"), "{e}");
        let data = Rcv1Shape::with_rows(20).generate(1);
        let mut narrow = CsrMatrix::new(3);
        narrow.push_row(&[(0, 1.0)], 1.0);
        let e = LeastSquaresSgd::new(
            LsSgdConfig {
                step: 0.1,
                batch: 4,
            },
            data,
            narrow,
        )
        .unwrap_err();
        assert!(e.to_string().contains("features"), "{e}");
    }
}
