//! A reference optimum of the matrix-factorisation objective, so that essp-fig3's MF curves can
//! be read against where the objective's minimum lies, and its targets set relative to it
//! rather than to what the compared runs happened to reach.
//!
//! [`super::MatrixFactorization`]'s SGD step on rating `(u, i, D)` is the gradient step of
//! `1/2 (D - L_u.R_i)^2 + lambda/2 (|L_u|^2 + |R_i|^2)`, so the objective it descends is
//! `F = 1/n sum_(u,i) [1/2 e_ui^2 + lambda/2 (|L_u|^2 + |R_i|^2)]`: each factor row is
//! regularised once per rating it takes part in (the weighted-lambda regularisation of Zhou et
//! al., "Large-scale parallel collaborative filtering for the Netflix prize", 2008). Its
//! minimiser in `L_u` with `R` fixed is exact:
//! `L_u = (sum_i R_i R_i^T + lambda n_u I)^-1 sum_i D_ui R_i`, and alternating least squares
//! (ALS-WR) sweeps users and items with it until `F` stops falling. `F` is not convex, so ALS
//! finds a stationary point, not a certified global minimum; it starts from the same initial
//! factors as the SGD runs, and the gradient norm at exit is reported as its certificate.
//! Rows with no training rating keep their initial values (SGD never moves them either).

use super::MatrixFactorization;
use crate::data::Rating;

/// The reference point ALS reached, and how good it is.
#[derive(Debug, Clone, PartialEq)]
pub struct MfOptimum {
    /// The factors, in [`super::Workload::initial_model`]'s layout (L rows, then R rows).
    pub model: Vec<f32>,
    /// `F` on the training ratings at `model`.
    pub objective: f64,
    /// Mean squared error on the held-out ratings at `model` (what the curves plot).
    pub test_loss: f64,
    /// Mean squared error on the training ratings at `model`.
    pub train_loss: f64,
    /// `|grad F|` at exit relative to its value at the initial factors.
    pub certificate: f64,
    /// ALS sweeps (users then items) taken.
    pub sweeps: usize,
}

/// Solves `K x K` system `a x = b` (`a` symmetric positive definite, row-major) in place by
/// Cholesky; `b` becomes `x`.
fn cholesky_solve(a: &mut [f64], b: &mut [f64], k: usize) {
    for j in 0..k {
        let mut d = a[j * k + j];
        for p in 0..j {
            d -= a[j * k + p] * a[j * k + p];
        }
        let d = d.max(f64::MIN_POSITIVE).sqrt();
        a[j * k + j] = d;
        for i in j + 1..k {
            let mut s = a[i * k + j];
            for p in 0..j {
                s -= a[i * k + p] * a[j * k + p];
            }
            a[i * k + j] = s / d;
        }
    }
    for i in 0..k {
        let mut s = b[i];
        for p in 0..i {
            s -= a[i * k + p] * b[p];
        }
        b[i] = s / a[i * k + i];
    }
    for i in (0..k).rev() {
        let mut s = b[i];
        for p in i + 1..k {
            s -= a[p * k + i] * b[p];
        }
        b[i] = s / a[i * k + i];
    }
}

/// Ratings grouped by one side: `(starts, others, values)` with the ratings of row `r` at
/// `starts[r]..starts[r + 1]`, `others` the other side's row of each.
fn group(ratings: &[Rating], rows: usize, by_user: bool) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
    let key = |r: &Rating| {
        if by_user {
            (r.user as usize, r.item as usize)
        } else {
            (r.item as usize, r.user as usize)
        }
    };
    let mut starts = vec![0usize; rows + 1];
    for r in ratings {
        starts[key(r).0 + 1] += 1;
    }
    for i in 0..rows {
        starts[i + 1] += starts[i];
    }
    let mut fill = starts.clone();
    let (mut others, mut values) = (vec![0usize; ratings.len()], vec![0.0f64; ratings.len()]);
    for r in ratings {
        let (row, other) = key(r);
        others[fill[row]] = other;
        values[fill[row]] = f64::from(r.value);
        fill[row] += 1;
    }
    (starts, others, values)
}

/// One half-sweep: every row of `mine` (K wide) with a rating re-solved exactly against the
/// fixed rows of `theirs`.
fn solve_side(
    mine: &mut [f64],
    theirs: &[f64],
    (starts, others, values): &(Vec<usize>, Vec<usize>, Vec<f64>),
    k: usize,
    lambda: f64,
) {
    let (mut a, mut b) = (vec![0.0; k * k], vec![0.0; k]);
    for row in 0..starts.len() - 1 {
        let span = starts[row]..starts[row + 1];
        if span.is_empty() {
            continue;
        }
        a.fill(0.0);
        b.fill(0.0);
        for j in span.clone() {
            let r = &theirs[others[j] * k..(others[j] + 1) * k];
            for p in 0..k {
                b[p] += values[j] * r[p];
                for q in 0..=p {
                    a[p * k + q] += r[p] * r[q];
                }
            }
        }
        let reg = lambda * span.len() as f64;
        for p in 0..k {
            a[p * k + p] += reg;
            for q in 0..p {
                a[q * k + p] = a[p * k + q];
            }
        }
        cholesky_solve(&mut a, &mut b, k);
        mine[row * k..(row + 1) * k].copy_from_slice(&b);
    }
}

/// `(F, |grad F|, training MSE)` of factors `l`, `r` on `ratings`.
fn objective(ratings: &[Rating], l: &[f64], r: &[f64], k: usize, lambda: f64) -> (f64, f64, f64) {
    let (mut gl, mut gr) = (vec![0.0; l.len()], vec![0.0; r.len()]);
    let (mut f, mut se) = (0.0, 0.0);
    for x in ratings {
        let (u, i) = (x.user as usize * k, x.item as usize * k);
        let (lu, ri) = (&l[u..u + k], &r[i..i + k]);
        let e = f64::from(x.value) - lu.iter().zip(ri).map(|(a, b)| a * b).sum::<f64>();
        se += e * e;
        let sq = lu.iter().map(|a| a * a).sum::<f64>() + ri.iter().map(|a| a * a).sum::<f64>();
        f += 0.5 * e * e + 0.5 * lambda * sq;
        for p in 0..k {
            gl[u + p] += -e * ri[p] + lambda * lu[p];
            gr[i + p] += -e * lu[p] + lambda * ri[p];
        }
    }
    let n = ratings.len().max(1) as f64;
    let g = gl.iter().chain(&gr).map(|g| g * g).sum::<f64>().sqrt() / n;
    (f / n, g, se / n)
}

impl MatrixFactorization {
    /// ALS-WR from the workload's initial factors until `F` falls by less than `tol`
    /// (relative) in a sweep, or `max_sweeps` sweeps.
    pub fn reference_optimum(&self, max_sweeps: usize, tol: f64) -> MfOptimum {
        use super::Workload;
        let k = self.rank();
        let lambda = self.config().lambda;
        let init: Vec<f64> = self.initial_model().iter().map(|&x| f64::from(x)).collect();
        let (mut l, mut r) = {
            let (l, r) = init.split_at(self.users() * k);
            (l.to_vec(), r.to_vec())
        };
        let train = self.train();
        let by_user = group(train, self.users(), true);
        let by_item = group(train, self.items(), false);
        let (mut f, g0, _) = objective(train, &l, &r, k, lambda);
        let mut sweeps = 0;
        while sweeps < max_sweeps {
            solve_side(&mut l, &r, &by_user, k, lambda);
            solve_side(&mut r, &l, &by_item, k, lambda);
            sweeps += 1;
            let (next, _, _) = objective(train, &l, &r, k, lambda);
            let fell = f - next;
            f = next;
            if fell <= tol * f.abs().max(f64::MIN_POSITIVE) {
                break;
            }
        }
        let (objective, g, train_loss) = objective(train, &l, &r, k, lambda);
        let model: Vec<f32> = l.iter().chain(&r).map(|&x| x as f32).collect();
        let test_loss = self.evaluate(&model).0;
        MfOptimum {
            model,
            objective,
            test_loss,
            train_loss,
            certificate: if g0 > 0.0 { g / g0 } else { 0.0 },
            sweeps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::RatingsShape;
    use crate::workload::{MfConfig, Workload};

    fn workload(lambda: f64) -> MatrixFactorization {
        let shape = RatingsShape {
            users: 150,
            items: 80,
            ratings: 8_000,
            rank: 3,
            noise: 0.1,
            popularity_exponent: 0.5,
        };
        let all = shape.generate(4);
        let (test, train) = all.split_at(800);
        let cfg = MfConfig {
            rank: 3,
            lambda,
            step: 0.05,
            minibatch_fraction: 0.05,
            init_scale: 0.3,
            init_seed: 2,
        };
        MatrixFactorization::new(cfg, 150, 80, train.to_vec(), test.to_vec()).unwrap()
    }

    #[test]
    fn cholesky_solves_a_known_system() {
        let mut a = vec![4.0, 2.0, 2.0, 3.0];
        let mut b = vec![2.0, 1.0];
        cholesky_solve(&mut a, &mut b, 2);
        // [4 2; 2 3] x = [2 1] -> x = [0.5, 0]
        assert!((b[0] - 0.5).abs() < 1e-12 && b[1].abs() < 1e-12, "{b:?}");
    }

    #[test]
    fn als_reaches_a_stationary_point_below_sgd() {
        let w = workload(0.01);
        let opt = w.reference_optimum(500, 1e-12);
        assert!(opt.certificate < 1e-4, "gradient not small: {opt:?}");
        // Noise sd 0.1: the held-out error at the optimum is near the noise floor, far below
        // the initial factors'.
        let start = w.evaluate(&w.initial_model()).0;
        assert!(
            opt.test_loss < 0.1 * start,
            "{} vs start {start}",
            opt.test_loss
        );
        // No SGD run on the same objective gets below the optimum's objective.
        let mut m = w.initial_model();
        for it in 0..400 {
            let u = w.update(&m, 0, 1, it);
            m.iter_mut().zip(u).for_each(|(a, d)| *a += d);
        }
        let k = w.rank();
        let f64s: Vec<f64> = m.iter().map(|&x| f64::from(x)).collect();
        let (l, r) = f64s.split_at(w.users() * k);
        let (f_sgd, _, _) = objective(w.train(), l, r, k, 0.01);
        assert!(opt.objective <= f_sgd + 1e-9, "{} > {f_sgd}", opt.objective);
    }

    #[test]
    fn stronger_regularisation_raises_the_objective_and_shrinks_factors() {
        let (weak, strong) = (workload(0.01), workload(0.5));
        let (a, b) = (
            weak.reference_optimum(200, 1e-10),
            strong.reference_optimum(200, 1e-10),
        );
        let norm = |m: &[f32]| m.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>();
        assert!(
            b.objective > a.objective,
            "{} vs {}",
            b.objective,
            a.objective
        );
        assert!(norm(&b.model) < norm(&a.model));
    }
}
