//! Sparse linear SVM / logistic regression trained by mini-batch SGD (Bottou's schedule).

use super::share_batches::ShareBatches;
use super::Workload;
use crate::data::CsrMatrix;
use crate::error::{CoreError, Result};
use crate::learning::ScaledParts;
use std::cell::RefCell;

thread_local! {
    /// Per thread: the entries an update's mini-batch touches (cleared after every update).
    static TOUCHED: RefCell<TouchedEntries> = RefCell::new(TouchedEntries::default());
}

/// Models of at most this many entries get their scaled update's parts from a dense pass (every
/// entry exact) rather than from [`TouchedEntries`]: 4,096 floats are 16 KiB, a pass over them
/// well under a microsecond, less than tracking a batch's touches costs on a model that small.
const DENSE_PARTS_UP_TO: usize = 4096;

/// Sparse accumulation over a dense index space: the entries touched, in first-touch order, with
/// their running values. Kept per thread so an update allocates only its result.
#[derive(Debug, Default)]
struct TouchedEntries {
    value: Vec<f32>,
    seen: Vec<bool>,
    order: Vec<u32>,
}

impl TouchedEntries {
    /// Ready for an index space of `dim` entries, none touched.
    fn reset(&mut self, dim: usize) {
        // Entries left touched by an update that unwound (a panic) are cleared too.
        for &i in &self.order {
            if let Some(seen) = self.seen.get_mut(i as usize) {
                *seen = false;
            }
        }
        if self.seen.len() != dim {
            self.value = vec![0.0; dim];
            self.seen = vec![false; dim];
        }
        self.order.clear();
    }

    /// The running value of entry `i`, starting at `first()` on its first touch.
    fn entry(&mut self, i: u32, first: impl FnOnce() -> f32) -> &mut f32 {
        let j = i as usize;
        if !self.seen[j] {
            self.seen[j] = true;
            self.value[j] = first();
            self.order.push(i);
        }
        &mut self.value[j]
    }

    /// The touched entries and their values, leaving none touched.
    fn take(&mut self) -> Vec<(u32, f32)> {
        let out = self
            .order
            .iter()
            .map(|&i| (i, self.value[i as usize]))
            .collect();
        for &i in &self.order {
            self.seen[i as usize] = false;
        }
        self.order.clear();
        out
    }
}

/// Loss of the linear classifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Loss {
    /// `max(0, 1 - y w.x)` (ASAP's SVM).
    Hinge,
    /// `log(1 + exp(-y w.x))` (Hop's SVM).
    Log,
}

/// Hyper-parameters.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SvmConfig {
    /// Loss function.
    pub loss: Loss,
    /// L2 regularisation lambda.
    pub lambda: f64,
    /// Initial step eta_0 in Bottou's `eta_t = eta_0 / (1 + lambda eta_0 t)`.
    pub eta0: f64,
    /// Examples per mini-batch.
    pub batch: usize,
}

impl SvmConfig {
    /// Checks the values are usable.
    ///
    /// # Errors
    /// [`CoreError::Config`] naming the bad value.
    pub fn validate(&self) -> Result<()> {
        if !(self.lambda >= 0.0 && self.lambda.is_finite()) {
            return Err(CoreError::out_of_range("svm.lambda", ">= 0", self.lambda));
        }
        if !(self.eta0 > 0.0 && self.eta0.is_finite()) {
            return Err(CoreError::out_of_range("svm.eta0", "> 0", self.eta0));
        }
        if self.batch == 0 {
            return Err(CoreError::out_of_range("svm.batch", ">= 1", self.batch));
        }
        Ok(())
    }
}

/// The smallest `lambda` the reference optimum is solved with (the solver needs `lambda > 0`;
/// a configuration may set 0), and so the one [`SvmSgd`]'s training objective uses.
pub const MIN_REFERENCE_LAMBDA: f64 = 1e-12;

/// SGD on a training matrix partitioned contiguously over workers; evaluation on a test matrix.
#[derive(Debug)]
pub struct SvmSgd {
    cfg: SvmConfig,
    train: CsrMatrix,
    test: CsrMatrix,
}

impl SvmSgd {
    /// A workload over `train` (partitioned over workers) evaluated on `test`.
    ///
    /// # Errors
    /// [`CoreError::Config`] for invalid hyper-parameters or empty data.
    pub fn new(cfg: SvmConfig, train: CsrMatrix, test: CsrMatrix) -> Result<Self> {
        cfg.validate()?;
        if train.rows() == 0 || test.rows() == 0 {
            return Err(CoreError::Config(
                "svm needs non-empty train and test sets".into(),
            ));
        }
        Ok(SvmSgd { cfg, train, test })
    }

    fn step(&self, t: f64) -> f64 {
        self.cfg.eta0 / (1.0 + self.cfg.lambda * self.cfg.eta0 * t)
    }

    /// d loss / d margin-score for label `y` and score `s`.
    fn dloss(&self, y: f32, s: f32) -> f32 {
        match self.cfg.loss {
            Loss::Hinge => {
                if y * s < 1.0 {
                    -y
                } else {
                    0.0
                }
            }
            Loss::Log => {
                let z = -y * s;
                // -y * sigmoid(z), computed stably.
                let sig = if z >= 0.0 {
                    1.0 / (1.0 + (-z).exp())
                } else {
                    let e = z.exp();
                    e / (1.0 + e)
                };
                -y * sig
            }
        }
    }

    /// The update's factor `c = -eta lambda` and the gradient's `scale = -eta / b` at `iter`.
    fn coefficients(&self, workers: usize, iter: u64) -> (f32, f32) {
        let b = self.cfg.batch;
        let t = (iter as f64) * (b * workers) as f64;
        let eta = self.step(t) as f32;
        let lambda = self.cfg.lambda as f32;
        (-eta * lambda, -eta / b as f32)
    }

    /// Each gradient term `(i, scale * g * v)` of the mini-batch, in the order the dense update
    /// adds them: `update`, and `gradient_parts`'s sparse and dense accumulations, all walk this
    /// one sequence, so their entries have the same bits.
    fn gradient_terms(
        &self,
        model: &[f32],
        worker: usize,
        workers: usize,
        iter: u64,
        mut term: impl FnMut(u32, f32),
    ) {
        let (_, scale) = self.coefficients(workers, iter);
        let batches = ShareBatches::new(self.train.rows(), workers, worker, self.cfg.batch);
        for r in batches.rows(iter) {
            let s = self.train.dot(r, model);
            let g = self.dloss(self.train.labels[r], s);
            if g != 0.0 {
                let (idx, val) = self.train.row(r);
                for (&i, &v) in idx.iter().zip(val) {
                    term(i, scale * g * v);
                }
            }
        }
    }

    /// The update as `c = -eta lambda` times the model plus exact entries (see
    /// [`ScaledParts`]), each computed as the dense form does: `c * w[j]`, then every row's
    /// `scale g v` added in row order.
    ///
    /// A model of at most [`DENSE_PARTS_UP_TO`] entries is accumulated densely and every entry
    /// listed as exact (an untouched one is `c * w`, the value the scaled form gives it): for a
    /// small, densely touched model (webspam's 254 features, 85 per row) that is cheaper than
    /// tracking which entries a batch touched. Larger models track the touched entries only.
    fn gradient_parts(
        &self,
        model: &[f32],
        worker: usize,
        workers: usize,
        iter: u64,
    ) -> ScaledParts {
        if model.len() <= DENSE_PARTS_UP_TO {
            let mut dense = Vec::new();
            let c = self.dense_update(model, worker, workers, iter, &mut dense);
            return ScaledParts {
                c,
                post: 1.0,
                exact: (0..).zip(dense).collect(),
            };
        }
        let (c, _) = self.coefficients(workers, iter);
        TOUCHED.with(|cell| {
            let mut touched = cell.borrow_mut();
            touched.reset(model.len());
            self.gradient_terms(model, worker, workers, iter, |i, d| {
                *touched.entry(i, || c * model[i as usize]) += d;
            });
            ScaledParts {
                c,
                post: 1.0,
                exact: touched.take(),
            }
        })
    }

    /// The dense update into `out` (`c * w`, then each gradient term added); returns `c`.
    fn dense_update(
        &self,
        model: &[f32],
        worker: usize,
        workers: usize,
        iter: u64,
        out: &mut Vec<f32>,
    ) -> f32 {
        let (c, _) = self.coefficients(workers, iter);
        out.clear();
        out.extend(model.iter().map(|&w| c * w));
        self.gradient_terms(model, worker, workers, iter, |i, d| {
            out[i as usize] += d;
        });
        c
    }

    fn loss_at(&self, y: f32, s: f32) -> f64 {
        match self.cfg.loss {
            Loss::Hinge => (1.0 - (y * s) as f64).max(0.0),
            Loss::Log => {
                let z = -(y * s) as f64;
                if z > 30.0 {
                    z
                } else {
                    z.exp().ln_1p()
                }
            }
        }
    }
}

impl Workload for SvmSgd {
    fn dim(&self) -> usize {
        self.train.cols
    }

    fn batch_size(&self, _workers: usize) -> usize {
        // every worker takes `batch` examples per update, whatever the worker count
        self.cfg.batch
    }

    /// `-eta_t (lambda w + mean_b grad loss)`, with `t` the examples processed by all workers so
    /// far assuming equal progress (`iter * batch * workers`). Worker `w` reads its contiguous
    /// share of the rows cyclically, so epochs are well defined. The dense form of
    /// [`Workload::scaled_update`].
    fn update(&self, model: &[f32], worker: usize, workers: usize, iter: u64) -> Vec<f32> {
        let mut out = Vec::new();
        self.dense_update(model, worker, workers, iter, &mut out);
        out
    }

    fn scaled_update(
        &self,
        model: &[f32],
        worker: usize,
        workers: usize,
        iter: u64,
    ) -> Option<ScaledParts> {
        Some(self.gradient_parts(model, worker, workers, iter))
    }

    fn evaluate(&self, model: &[f32]) -> (f64, f64) {
        let n = self.test.rows();
        let (mut loss, mut correct) = (0.0, 0usize);
        for r in 0..n {
            let s = self.test.dot(r, model);
            let y = self.test.labels[r];
            loss += self.loss_at(y, s);
            if (s >= 0.0) == (y > 0.0) {
                correct += 1;
            }
        }
        let reg: f64 =
            model.iter().map(|&w| (w as f64) * (w as f64)).sum::<f64>() * self.cfg.lambda / 2.0;
        (loss / n as f64 + reg, correct as f64 / n as f64)
    }

    /// `F(w)` on the training rows, in f64, as [`super::linear_optimum`] computes it for the
    /// reference optimum `F*` (so `F(w) >= F*` up to the solver's gap bound). `lambda` is
    /// floored at [`MIN_REFERENCE_LAMBDA`] as the reference solver's is.
    fn objective(&self, model: &[f32]) -> Option<f64> {
        let w: Vec<f64> = model.iter().map(|&x| f64::from(x)).collect();
        let lambda = self.cfg.lambda.max(MIN_REFERENCE_LAMBDA);
        Some(super::linear_optimum::objective(&self.train, &w, self.cfg.loss, lambda).0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Rcv1Shape, SparseClassification};

    #[test]
    fn an_out_of_range_field_is_named() {
        let cfg = SvmConfig {
            loss: Loss::Hinge,
            lambda: 1e-4,
            eta0: -1.0,
            batch: 32,
        };
        match cfg.validate().unwrap_err() {
            CoreError::OutOfRange { field, value, .. } => {
                assert_eq!((field.as_str(), value.as_str()), ("svm.eta0", "-1"))
            }
            e => panic!("{e}"),
        }
        let e = SvmConfig {
            batch: 0,
            eta0: 1.0,
            ..cfg
        }
        .validate()
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid configuration: svm.batch must be >= 1, got 0"
        );
    }

    fn workload(loss: Loss) -> SvmSgd {
        svm_on(loss, Rcv1Shape::with_rows(6000))
    }

    /// A webspam-shaped model of 254 features, 85 per row: small enough for the dense parts.
    fn small_workload(loss: Loss) -> SvmSgd {
        let shape = SparseClassification {
            features: 254,
            nnz_per_row: 85.0,
            ..Rcv1Shape::with_rows(6000)
        };
        svm_on(loss, shape)
    }

    fn svm_on(loss: Loss, shape: SparseClassification) -> SvmSgd {
        let data = shape.generate(1);
        let cfg = SvmConfig {
            loss,
            lambda: 1e-4,
            eta0: 50.0,
            batch: 32,
        };
        SvmSgd::new(cfg, data.slice_rows(0..5000), data.slice_rows(5000..6000)).unwrap()
    }

    /// The dense update as it was computed before scaled updates: `-eta lambda w`, then every
    /// touched entry's `scale g v` in row order.
    fn dense_reference(
        w: &SvmSgd,
        model: &[f32],
        worker: usize,
        workers: usize,
        it: u64,
    ) -> Vec<f32> {
        let rows = w.train.rows();
        let share = (rows / workers).max(1);
        let base = (worker * share) % rows;
        let b = w.cfg.batch;
        let eta = w.step((it as f64) * (b * workers) as f64) as f32;
        let lambda = w.cfg.lambda as f32;
        let mut out: Vec<f32> = model.iter().map(|&x| -eta * lambda * x).collect();
        let scale = -eta / b as f32;
        for k in 0..b {
            let r = (base + ((it as usize * b + k) % share)) % rows;
            let g = w.dloss(w.train.labels[r], w.train.dot(r, model));
            if g != 0.0 {
                let (idx, val) = w.train.row(r);
                for (&i, &v) in idx.iter().zip(val) {
                    out[i as usize] += scale * g * v;
                }
            }
        }
        out
    }

    #[test]
    fn the_scaled_update_is_bit_for_bit_the_dense_one_summed_or_averaged() {
        use crate::learning::ScaledUpdate;
        use crate::workload::Aggregation;
        use std::sync::Arc;
        let cases = [Loss::Hinge, Loss::Log]
            .into_iter()
            .flat_map(|loss| [(loss, workload(loss)), (loss, small_workload(loss))]);
        for (loss, w) in cases {
            // RCV1's 47,236 features take the touched-entries path, 254 the dense one
            assert_eq!(w.dim() <= DENSE_PARTS_UP_TO, w.dim() == 254);
            let w = Arc::new(w);
            let avg = Aggregation::Mean.wrap(w.clone());
            // a model away from zero, so the L2 term and the margins are not trivial
            let mut model = w.initial_model();
            for it in 0..20 {
                let u = w.update(&model, 0, 1, it);
                model.iter_mut().zip(u).for_each(|(m, d)| *m += d);
            }
            let model = Arc::new(model);
            for (worker, workers, it) in [(0, 1, 20), (2, 4, 57), (3, 4, 0)] {
                let want = dense_reference(&w, &model, worker, workers, it);
                assert_eq!(w.update(&model, worker, workers, it), want);
                let parts = w.scaled_update(&model, worker, workers, it).unwrap();
                assert!(!parts.exact.is_empty());
                let scaled = ScaledUpdate::new(parts, Arc::clone(&model));
                assert_eq!(scaled.to_dense_vec(), want, "{loss:?} summed");
                let parts = avg.scaled_update(&model, worker, workers, it).unwrap();
                let scaled = ScaledUpdate::new(parts, Arc::clone(&model));
                let avg_want: Vec<f32> = want.iter().map(|x| x * (1.0 / workers as f32)).collect();
                assert_eq!(scaled.to_dense_vec(), avg_want, "{loss:?} averaged");
                assert_eq!(avg.update(&model, worker, workers, it), avg_want);
            }
        }
    }

    #[test]
    fn sgd_reduces_loss_for_both_losses() {
        for loss in [Loss::Hinge, Loss::Log] {
            let w = workload(loss);
            let mut model = w.initial_model();
            let (l0, _) = w.evaluate(&model);
            for it in 0..300 {
                let u = w.update(&model, 0, 1, it);
                for (m, d) in model.iter_mut().zip(u) {
                    *m += d;
                }
            }
            let (l1, acc) = w.evaluate(&model);
            assert!(l1 < l0 * 0.97, "{loss:?}: {l0} -> {l1}");
            assert!(acc > 0.6, "{loss:?}: accuracy {acc}");
        }
    }

    #[test]
    fn rejects_bad_config() {
        let cfg = SvmConfig {
            loss: Loss::Hinge,
            lambda: -1.0,
            eta0: 1.0,
            batch: 1,
        };
        assert!(cfg.validate().unwrap_err().to_string().contains("lambda"));
    }
}
