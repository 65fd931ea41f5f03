//! What the mode matrix trains, chosen by configuration: the SVM or logistic regression on a sparse
//! twin (`[data]` with `[svm]`, the default), least squares by mini-batch SGD on the same kind of
//! data (`[ls]`, ASYNC's problem), matrix factorisation on Netflix-shaped ratings (`[mf]`), or a
//! CNN on an image twin (`[cnn]`, feature `cnn`). Every family of modes trains it through the same
//! dense [`Workload`]; each comes with its reference optimum where one can be computed, so that the
//! matrix's target stays optimum-relative.
//!
//! Not offered: LDA, whose collapsed Gibbs sampler updates count tables rather than a dense
//! model that peers could average or a coordinator could step.

use crate::harness::data_source::DataSource;
use crate::judge::reference::{Reference, DEFAULT_WAY};
use crate::runs::peers::PeerCnn;
use crate::workloads::mf::RatingsData;
use crate::workloads::svm::SparseData;
use anyhow::{bail, Result};
use bench_core::workload::{LeastSquaresSgd, LsSgdConfig, MfConfig, SvmConfig, Workload};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `[mf]`: matrix factorisation as the matrix's workload.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixMf {
    /// The ratings: synthetic Netflix-shaped (`--data synthetic`) or the dataset they twin.
    pub data: RatingsData,
    /// Rank, regularisation, step and mini-batch share.
    pub settings: MfConfig,
    /// ALS sweeps at most for the reference optimum (0: none, and the target falls back to the
    /// compared runs' losses).
    #[serde(default = "default_sweeps")]
    pub reference_sweeps: usize,
}

fn default_sweeps() -> usize {
    crate::workloads::mf::DEFAULT_REFERENCE_SWEEPS
}

/// `[ls]`: least squares as the matrix's workload.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixLs {
    /// The rows (a sparse twin, or with `--data real` the LIBSVM file); labels are the targets.
    pub data: SparseData,
    /// Step and mini-batch.
    pub settings: LsSgdConfig,
}

/// CGLS stops at this relative normal-equation residual (the least-squares reference).
const CGLS_TOLERANCE: f64 = 1e-8;
/// ... or after this many iterations (the run then fails, naming the residual reached).
const CGLS_ITERATIONS: usize = 10_000;

/// ALS stops when a sweep lowers the objective by less than this, relative.
const ALS_TOLERANCE: f64 = 1e-7;

/// The workload of a matrix, with its settings.
#[derive(Debug, Clone)]
pub enum MatrixLearning {
    /// Sparse linear classification (hinge or log loss).
    Svm {
        /// The twin (or real file).
        data: SparseData,
        /// Loss, regularisation, step, batch.
        svm: SvmConfig,
    },
    /// Least squares.
    Ls(MatrixLs),
    /// Matrix factorisation.
    Mf(MatrixMf),
    /// A CNN on images.
    Cnn(PeerCnn),
}

impl MatrixLearning {
    /// The one workload the sections describe: `[data]` and `[svm]` together, or `[ls]`, or
    /// `[mf]`, or `[cnn]`.
    ///
    /// # Errors
    /// No workload, more than one, or `[data]` without `[svm]` (or the reverse).
    pub fn from_sections(
        data: Option<&SparseData>,
        svm: Option<&SvmConfig>,
        ls: Option<&MatrixLs>,
        mf: Option<&MatrixMf>,
        cnn: Option<&PeerCnn>,
    ) -> Result<Self> {
        let svm_given = data.is_some() || svm.is_some();
        let given = usize::from(svm_given)
            + usize::from(ls.is_some())
            + usize::from(mf.is_some())
            + usize::from(cnn.is_some());
        if given != 1 {
            bail!(
                "the matrix trains one workload: give [data] with [svm], or [ls], or [mf], or [cnn] (found {})",
                if given == 0 { "none".to_string() } else { format!("{given}") }
            );
        }
        Ok(match (data, svm, ls, mf, cnn) {
            (Some(d), Some(s), ..) => MatrixLearning::Svm {
                data: d.clone(),
                svm: *s,
            },
            (Some(_), None, ..) => bail!("[data] is the SVM's: it needs [svm] beside it"),
            (None, Some(_), ..) => bail!("[svm] needs its [data] section"),
            (_, _, Some(l), ..) => MatrixLearning::Ls(l.clone()),
            (_, _, _, Some(m), _) => MatrixLearning::Mf(m.clone()),
            (_, _, _, _, Some(c)) => MatrixLearning::Cnn(c.clone()),
            _ => unreachable!("exactly one section is given"),
        })
    }

    /// Checks the settings for `workers` workers, before any run starts.
    ///
    /// # Errors
    /// Naming the bad value.
    pub fn validate(&self, workers: usize) -> Result<()> {
        match self {
            MatrixLearning::Svm { data, svm } => {
                data.validate(workers)?;
                svm.validate()?;
            }
            MatrixLearning::Ls(l) => {
                l.data.validate(workers)?;
                l.settings.validate()?;
            }
            MatrixLearning::Mf(m) => {
                if m.data.ratings < 2 * workers || m.data.users < workers {
                    bail!(
                        "mf.data: {} ratings of {} users are too few for {workers} workers (each needs users of its own and the held-out share its ratings)",
                        m.data.ratings,
                        m.data.users
                    );
                }
                if !(m.data.test_fraction > 0.0 && m.data.test_fraction < 1.0) {
                    bail!(
                        "mf.data.test_fraction must be in (0, 1), got {}",
                        m.data.test_fraction
                    );
                }
                if !(m.settings.step > 0.0 && m.settings.step.is_finite()) {
                    bail!("mf.settings.step must be > 0, got {}", m.settings.step);
                }
            }
            MatrixLearning::Cnn(c) => {
                c.net.validate()?;
                c.images.validate()?;
            }
        }
        Ok(())
    }

    /// The workload for a run of `workers` workers from `seed`, and the reference optimum of
    /// its objective on the same data (`None` for a CNN, for real SVM or least-squares data,
    /// and for MF without regularisation or sweeps).
    ///
    /// # Errors
    /// Bad settings, data that cannot be read, or a CNN in a build without the `cnn` feature.
    pub fn build(
        &self,
        workers: usize,
        seed: u64,
        data: &DataSource,
    ) -> Result<(Arc<dyn Workload>, Option<Reference>)> {
        Ok(match self {
            MatrixLearning::Svm { data: d, svm } => (
                d.svm_workload(*svm, seed, data)?,
                d.reference(*svm, seed, data),
            ),
            MatrixLearning::Ls(l) => {
                let (train, test) = l.data.rows(seed, data)?;
                let ls = LeastSquaresSgd::new(l.settings, train, test)?;
                // Real files can be too large to solve exactly here, as for the SVM.
                let reference = if data.mode() == crate::harness::data_source::DataMode::Real {
                    None
                } else {
                    let o = ls.train().optimum(CGLS_TOLERANCE, CGLS_ITERATIONS)?;
                    let star: Vec<f32> = o.minimiser.iter().map(|&x| x as f32).collect();
                    let (test_loss, test_accuracy) = ls.test().objective_and_accuracy(&star);
                    Some(Reference {
                        objective: o.objective,
                        test_loss,
                        test_accuracy,
                        certificate: o.relative_residual,
                        passes: o.iterations,
                        objective_gap: f64::NAN,
                        way: DEFAULT_WAY,
                    })
                };
                (Arc::new(ls), reference)
            }
            MatrixLearning::Mf(m) => {
                let mf = m.data.workload(m.settings, workers, seed, data)?;
                // With lambda = 0 a row with fewer than K ratings has a singular normal
                // matrix: no unique optimum, so no reference.
                let reference = (m.reference_sweeps > 0 && m.settings.lambda > 0.0).then(|| {
                    Reference::of_mf(&mf.reference_optimum(m.reference_sweeps, ALS_TOLERANCE))
                });
                (Arc::new(mf), reference)
            }
            MatrixLearning::Cnn(c) => (c.images.workload(&c.net, seed, data)?, None),
        })
    }

    /// The configuration key of the step size the sensitivity grid varies.
    pub fn step_key(&self) -> &'static str {
        match self {
            MatrixLearning::Svm { .. } => "svm.eta0",
            MatrixLearning::Ls(_) => "ls.settings.step",
            MatrixLearning::Mf(_) => "mf.settings.step",
            MatrixLearning::Cnn(_) => "cnn.net.lr",
        }
    }

    /// The configured step size (the SVM's initial step, least squares' and MF's step, the
    /// CNN's learning rate).
    pub fn step(&self) -> f64 {
        match self {
            MatrixLearning::Svm { svm, .. } => svm.eta0,
            MatrixLearning::Ls(l) => l.settings.step,
            MatrixLearning::Mf(m) => m.settings.step,
            MatrixLearning::Cnn(c) => c.net.lr,
        }
    }

    /// The same workload at step size `step`.
    pub fn with_step(&self, step: f64) -> Self {
        let mut l = self.clone();
        match &mut l {
            MatrixLearning::Svm { svm, .. } => svm.eta0 = step,
            MatrixLearning::Ls(l) => l.settings.step = step,
            MatrixLearning::Mf(m) => m.settings.step = step,
            MatrixLearning::Cnn(c) => c.net.lr = step,
        }
        l
    }

    /// What is trained, for notes.
    pub fn label(&self) -> String {
        match self {
            MatrixLearning::Svm { data, svm } => format!(
                "SVM ({:?} loss, eta0 {}, batch {}) on {} features",
                svm.loss, svm.eta0, svm.batch, data.features
            ),
            MatrixLearning::Ls(l) => format!(
                "least squares (step {}, batch {}) on {} features",
                l.settings.step, l.settings.batch, l.data.features
            ),
            MatrixLearning::Mf(m) => format!(
                "matrix factorisation (rank {}, lambda {}, step {}, {} of each worker's ratings per update) on {} ratings of {} users x {} items",
                m.settings.rank,
                m.settings.lambda,
                m.settings.step,
                m.settings.minibatch_fraction,
                m.data.ratings,
                m.data.users,
                m.data.items
            ),
            MatrixLearning::Cnn(c) => format!(
                "CNN {} (width {}, batch {}, lr {})",
                c.net.model.name(),
                c.net.width,
                c.net.batch,
                c.net.lr
            ),
        }
    }

    /// The manifest note on the reference optimum `r` of this workload.
    pub fn reference_note(&self, r: &Reference) -> String {
        match self {
            MatrixLearning::Svm { .. } => r.note("svm"),
            MatrixLearning::Ls(_) => format!(
                "ls: reference optimum of the same objective on the same rows (CGLS, bench_core::workload::LeastSquares::optimum): F* = {:.5} on the training rows, held-out objective {:.5} and sign accuracy {:.4} at w* (normal-equation residual {:.1e} after {} iterations); a run is near the optimum when its training objective has covered {:.0}% of the way from the initial model's to F* (which bounds it from below), its held-out objective shown beside",
                r.objective,
                r.test_loss,
                r.test_accuracy,
                r.certificate,
                r.passes,
                r.way * 100.0,
            ),
            MatrixLearning::Mf(_) => format!(
                "mf: reference optimum of the same objective on the same ratings (ALS-WR, bench_core::workload::mf_optimum): F* = {:.5} on the training ratings, held-out squared error {:.5} at that stationary point (gradient norm {:.1e} of the start's after {} sweeps); a run is near the optimum when its held-out error has covered {:.0}% of the way from the initial model's to {:.5}",
                r.objective,
                r.test_loss,
                r.certificate,
                r.passes,
                r.way * 100.0,
                r.test_loss
            ),
            MatrixLearning::Cnn(_) => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mf() -> MatrixMf {
        toml::from_str(
            r#"
            [data]
            users = 64
            items = 32
            ratings = 2000
            rank = 3
            noise = 0.05
            popularity_exponent = 0.5
            test_fraction = 0.1
            [settings]
            rank = 3
            lambda = 0.01
            step = 0.05
            minibatch_fraction = 0.2
            init_scale = 0.3
            init_seed = 1
            "#,
        )
        .unwrap()
    }

    #[test]
    fn exactly_one_workload_is_named() {
        let m = mf();
        let l = MatrixLearning::from_sections(None, None, None, Some(&m), None).unwrap();
        assert_eq!(l.step_key(), "mf.settings.step");
        assert_eq!(l.with_step(0.2).step(), 0.2);
        let e = MatrixLearning::from_sections(None, None, None, None, None).unwrap_err();
        assert!(e.to_string().contains("found none"), "{e}");
        let svm = SvmConfig {
            loss: bench_core::workload::Loss::Log,
            lambda: 1e-4,
            eta0: 1.0,
            batch: 8,
        };
        let e = MatrixLearning::from_sections(None, Some(&svm), None, Some(&m), None).unwrap_err();
        assert!(e.to_string().contains("found 2"), "{e}");
        let e = MatrixLearning::from_sections(None, Some(&svm), None, None, None).unwrap_err();
        assert!(e.to_string().contains("[data]"), "{e}");
    }

    /// Least squares comes with its CGLS optimum, below where the zero model starts.
    #[test]
    fn least_squares_comes_with_its_cgls_optimum() {
        let l: MatrixLs = toml::from_str(
            r#"
            [data]
            train_rows = 2000
            test_rows = 400
            features = 254
            nnz_per_row = 40.0
            label_noise = 0.03
            informative = 0.1
            [settings]
            step = 0.5
            batch = 16
            "#,
        )
        .unwrap();
        let l = MatrixLearning::Ls(l);
        l.validate(4).unwrap();
        assert_eq!(l.step_key(), "ls.settings.step");
        let (w, r) = l.build(4, 3, &DataSource::synthetic()).unwrap();
        let r = r.expect("synthetic rows: a reference");
        let start = w.evaluate(&w.initial_model()).0;
        assert!(
            r.test_loss < start,
            "optimum {} vs start {start}",
            r.test_loss
        );
        assert!(r.certificate <= CGLS_TOLERANCE, "{}", r.certificate);
    }

    /// The MF workload is partitioned for the run's workers, and its reference optimum is
    /// below where the initial factors start (a target between them is reachable).
    #[test]
    fn mf_comes_with_its_als_optimum() {
        let l = MatrixLearning::Mf(mf());
        l.validate(4).unwrap();
        let (w, r) = l.build(4, 3, &DataSource::synthetic()).unwrap();
        let r = r.expect("lambda > 0: a reference");
        let start = w.evaluate(&w.initial_model()).0;
        assert!(
            r.test_loss < 0.5 * start,
            "optimum {} vs start {start}",
            r.test_loss
        );
        assert!(r.passes >= 1);
        let e = l.validate(1000).unwrap_err();
        assert!(e.to_string().contains("too few for 1000 workers"), "{e}");
    }
}
