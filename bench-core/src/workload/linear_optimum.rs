//! The exact optimum of the SVM workload's objective, for reference: what the best linear model
//! on a dataset achieves, so that learning curves can be read against it (suboptimality,
//! optimum-relative targets) and twins can be checked against the real data's published
//! figures.
//!
//! The objective is the one [`super::SvmSgd`] descends, without a bias term:
//! `F(w) = lambda/2 |w|^2 + 1/n sum_i loss(y_i w.x_i)`, which has the minimiser of the usual
//! `1/2 |w|^2 + C sum_i loss` with `C = 1 / (lambda n)`.
//!
//! * Hinge loss: dual coordinate descent (Hsieh et al., ICML 2008, the L1-loss SVM solver of
//!   LIBLINEAR), in seeded random order, until the duality gap is below `tol` of the primal.
//! * Log loss: Newton's method on the primal with conjugate-gradient steps (Hessian-vector
//!   products `v + C X^T D X v`) and a backtracking line search (the approach of LIBLINEAR's
//!   TRON, with a line search in place of the trust region), until the gradient norm is below
//!   `tol` of its value at zero.

use super::svm::Loss;
use crate::data::CsrMatrix;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The optimum found and how good it is.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearOptimum {
    /// The minimiser.
    pub w: Vec<f64>,
    /// `F(w)` on the training rows (the objective [`super::SvmSgd`] minimises).
    pub objective: f64,
    /// The same expression on the test rows (what [`super::SvmSgd`]'s `evaluate` reports as
    /// loss).
    pub test_objective: f64,
    /// Share of test rows classified correctly by `sign(w.x)`.
    pub test_accuracy: f64,
    /// Share of training rows classified correctly.
    pub train_accuracy: f64,
    /// Certificate: the relative duality gap (hinge) or gradient norm relative to the start
    /// (log) at exit.
    pub certificate: f64,
    /// Passes (hinge: epochs of coordinate descent; log: Newton steps).
    pub passes: usize,
    /// An upper bound on `objective - min F`: the duality gap (hinge), or `|grad F(w)|^2 /
    /// (2 lambda)` (log: `F` is lambda-strongly convex). A run's objective below `objective` by
    /// more than this would mean the solver did not find the optimum.
    pub gap_bound: f64,
}

fn dot(m: &CsrMatrix, r: usize, w: &[f64]) -> f64 {
    let (idx, val) = m.row(r);
    idx.iter()
        .zip(val)
        .map(|(&i, &v)| w[i as usize] * v as f64)
        .sum()
}

fn axpy_row(m: &CsrMatrix, r: usize, a: f64, w: &mut [f64]) {
    let (idx, val) = m.row(r);
    for (&i, &v) in idx.iter().zip(val) {
        w[i as usize] += a * v as f64;
    }
}

fn loss_at(loss: Loss, margin: f64) -> f64 {
    match loss {
        Loss::Hinge => (1.0 - margin).max(0.0),
        Loss::Log => {
            let z = -margin;
            if z > 30.0 {
                z
            } else {
                z.exp().ln_1p()
            }
        }
    }
}

/// `F(w)` and the accuracy of `sign(w.x)` on `m`.
pub fn objective(m: &CsrMatrix, w: &[f64], loss: Loss, lambda: f64) -> (f64, f64) {
    let n = m.rows().max(1);
    let (mut total, mut correct) = (0.0, 0usize);
    for r in 0..m.rows() {
        let s = dot(m, r, w);
        let y = m.labels[r] as f64;
        total += loss_at(loss, y * s);
        if (s >= 0.0) == (y > 0.0) {
            correct += 1;
        }
    }
    let reg = lambda / 2.0 * w.iter().map(|x| x * x).sum::<f64>();
    (total / n as f64 + reg, correct as f64 / n as f64)
}

/// Minimises `F` on `train` to relative precision `tol` (at most `max_passes` passes), and
/// evaluates the minimiser on `test`. `seed` orders the coordinate descent.
///
/// Labels are read as their sign (`> 0` is the positive class). `lambda` must be `> 0`.
pub fn linear_optimum(
    train: &CsrMatrix,
    test: &CsrMatrix,
    loss: Loss,
    lambda: f64,
    tol: f64,
    max_passes: usize,
    seed: u64,
) -> LinearOptimum {
    let (w, certificate, passes) = match loss {
        Loss::Hinge => hinge_dcd(train, lambda, tol, max_passes, seed),
        Loss::Log => log_newton(train, lambda, tol, max_passes),
    };
    let (objective, train_accuracy) = self::objective(train, &w, loss, lambda);
    let (test_objective, test_accuracy) = self::objective(test, &w, loss, lambda);
    let gap_bound = match loss {
        // The certificate is the gap relative to the primal objective.
        Loss::Hinge => certificate * objective.abs(),
        Loss::Log => {
            let (g, _) = log_gradient(train, &w, lambda);
            g.iter().map(|x| x * x).sum::<f64>() / (2.0 * lambda)
        }
    };
    LinearOptimum {
        w,
        objective,
        test_objective,
        test_accuracy,
        train_accuracy,
        certificate,
        passes,
        gap_bound,
    }
}

fn sign(y: f32) -> f64 {
    if y > 0.0 {
        1.0
    } else {
        -1.0
    }
}

/// Dual coordinate descent for the L1-loss SVM; returns `w`, the relative duality gap and the
/// epochs run.
fn hinge_dcd(
    m: &CsrMatrix,
    lambda: f64,
    tol: f64,
    max_passes: usize,
    seed: u64,
) -> (Vec<f64>, f64, usize) {
    let n = m.rows();
    let c = 1.0 / (lambda * n.max(1) as f64);
    let mut w = vec![0.0; m.cols];
    let mut alpha = vec![0.0; n];
    let qii: Vec<f64> = (0..n)
        .map(|r| m.row(r).1.iter().map(|&v| (v as f64) * (v as f64)).sum())
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut gap = f64::INFINITY;
    let mut passes = 0;
    while passes < max_passes {
        passes += 1;
        order.shuffle(&mut rng);
        for &i in &order {
            if qii[i] <= 0.0 {
                continue;
            }
            let y = sign(m.labels[i]);
            let g = y * dot(m, i, &w) - 1.0;
            let new = (alpha[i] - g / qii[i]).clamp(0.0, c);
            let d = new - alpha[i];
            if d != 0.0 {
                alpha[i] = new;
                axpy_row(m, i, d * y, &mut w);
            }
        }
        // Primal P = |w|^2/2 + C sum hinge, dual D = sum alpha - |w|^2/2.
        let ww: f64 = w.iter().map(|x| x * x).sum();
        let hinge: f64 = (0..n)
            .map(|r| (1.0 - sign(m.labels[r]) * dot(m, r, &w)).max(0.0))
            .sum();
        let primal = ww / 2.0 + c * hinge;
        let dual = alpha.iter().sum::<f64>() - ww / 2.0;
        gap = (primal - dual).max(0.0) / primal.abs().max(1e-300);
        if gap <= tol {
            break;
        }
    }
    (w, gap, passes)
}

/// `(1/n) sum loss + lambda/2 |w|^2`'s gradient for log loss, and the per-row curvature
/// `sigma (1 - sigma)`.
fn log_gradient(m: &CsrMatrix, w: &[f64], lambda: f64) -> (Vec<f64>, Vec<f64>) {
    let n = m.rows().max(1) as f64;
    let mut g: Vec<f64> = w.iter().map(|x| lambda * x).collect();
    let mut d = Vec::with_capacity(m.rows());
    for r in 0..m.rows() {
        let y = sign(m.labels[r]);
        let z = y * dot(m, r, w);
        // sigma(-z) = 1 / (1 + e^z), computed stably.
        let s = if z >= 0.0 {
            let e = (-z).exp();
            e / (1.0 + e)
        } else {
            1.0 / (1.0 + z.exp())
        };
        axpy_row(m, r, -y * s / n, &mut g);
        d.push(s * (1.0 - s));
    }
    (g, d)
}

/// Newton-CG on the primal of L2-regularised logistic regression; returns `w`, the gradient
/// norm relative to its start, and the Newton steps run.
fn log_newton(m: &CsrMatrix, lambda: f64, tol: f64, max_steps: usize) -> (Vec<f64>, f64, usize) {
    let n = m.rows().max(1) as f64;
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut w = vec![0.0; m.cols];
    let (g0, _) = log_gradient(m, &w, lambda);
    let g0n = norm(&g0).max(1e-300);
    let mut rel = 1.0;
    let mut steps = 0;
    let f = |w: &[f64]| objective(m, w, Loss::Log, lambda).0;
    while steps < max_steps {
        let (g, d) = log_gradient(m, &w, lambda);
        rel = norm(&g) / g0n;
        if rel <= tol {
            break;
        }
        steps += 1;
        // Solve H s = -g by CG, H v = lambda v + (1/n) X^T D X v.
        let hv = |v: &[f64]| {
            let mut out: Vec<f64> = v.iter().map(|x| lambda * x).collect();
            for (r, &dr) in d.iter().enumerate() {
                let xv = dot(m, r, v);
                if xv != 0.0 {
                    axpy_row(m, r, dr * xv / n, &mut out);
                }
            }
            out
        };
        let mut s = vec![0.0; m.cols];
        let mut res: Vec<f64> = g.iter().map(|x| -x).collect();
        let mut p = res.clone();
        let mut rr: f64 = res.iter().map(|x| x * x).sum();
        let stop = (0.1 * norm(&g)).powi(2);
        for _ in 0..250 {
            if rr <= stop {
                break;
            }
            let hp = hv(&p);
            let php: f64 = p.iter().zip(&hp).map(|(a, b)| a * b).sum();
            if php <= 0.0 {
                break;
            }
            let a = rr / php;
            for j in 0..s.len() {
                s[j] += a * p[j];
                res[j] -= a * hp[j];
            }
            let rr_new: f64 = res.iter().map(|x| x * x).sum();
            let beta = rr_new / rr;
            rr = rr_new;
            for j in 0..p.len() {
                p[j] = res[j] + beta * p[j];
            }
        }
        // Backtracking (Armijo) line search along s.
        let f0 = f(&w);
        let slope: f64 = g.iter().zip(&s).map(|(a, b)| a * b).sum();
        let mut t = 1.0;
        loop {
            let trial: Vec<f64> = w.iter().zip(&s).map(|(a, b)| a + t * b).collect();
            if f(&trial) <= f0 + 1e-4 * t * slope || t < 1e-10 {
                w = trial;
                break;
            }
            t *= 0.5;
        }
    }
    (w, rel, steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::SparseClassification;

    fn data() -> (CsrMatrix, CsrMatrix) {
        let d = SparseClassification {
            rows: 1200,
            features: 300,
            nnz_per_row: 12.0,
            label_noise: 0.05,
            informative: 0.3,
            topic_share: 0.0,
        }
        .generate(4);
        (d.slice_rows(0..1000), d.slice_rows(1000..1200))
    }

    /// A perturbation in any direction does not lower the objective: the point is a minimum.
    fn is_minimum(train: &CsrMatrix, loss: Loss, lambda: f64, o: &LinearOptimum) {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for _ in 0..20 {
            let dir: Vec<f64> = (0..o.w.len())
                .map(|_| rand::Rng::gen_range(&mut rng, -1.0..1.0))
                .collect();
            for eps in [1e-2, 1e-3] {
                let moved: Vec<f64> = o.w.iter().zip(&dir).map(|(a, b)| a + eps * b).collect();
                let f = objective(train, &moved, loss, lambda).0;
                assert!(
                    f >= o.objective - 1e-9 * o.objective.abs(),
                    "{loss:?}: {f} below the optimum {}",
                    o.objective
                );
            }
        }
    }

    #[test]
    fn hinge_optimum_closes_the_duality_gap() {
        let (train, test) = data();
        let o = linear_optimum(&train, &test, Loss::Hinge, 1e-3, 1e-6, 2000, 1);
        assert!(o.certificate <= 1e-6, "gap {}", o.certificate);
        assert!(
            o.gap_bound >= 0.0 && o.gap_bound <= 1e-6 * o.objective,
            "{}",
            o.gap_bound
        );
        is_minimum(&train, Loss::Hinge, 1e-3, &o);
        assert!(o.test_accuracy > 0.75, "{}", o.test_accuracy);
        // Far below the zero model.
        let sgd = objective(&train, &vec![0.0; train.cols], Loss::Hinge, 1e-3).0;
        assert!(o.objective < sgd);
    }

    #[test]
    fn log_optimum_has_a_vanishing_gradient() {
        let (train, test) = data();
        let o = linear_optimum(&train, &test, Loss::Log, 1e-3, 1e-8, 100, 1);
        assert!(o.certificate <= 1e-8, "gradient {}", o.certificate);
        assert!(o.passes < 30, "Newton takes few steps: {}", o.passes);
        // |g|^2 / (2 lambda) with |g| at most 1e-8 of the start's.
        assert!(o.gap_bound < 1e-9, "{}", o.gap_bound);
        is_minimum(&train, Loss::Log, 1e-3, &o);
        assert!((o.objective - std::f64::consts::LN_2).abs() > 0.01);
    }
}
