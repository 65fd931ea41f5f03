//! Least squares, the problem of the ASYNC experiments (ASYNC §2, Eq 4), with a reference
//! optimum so that errors are `objective - optimum` as the paper plots.

use crate::data::{sparse_dot, CsrMatrix};
use crate::error::{CoreError, Result};

/// `F(w) = 1/(2n) * sum_i (x_i . w - y_i)^2` over the rows of a data matrix (labels are y).
///
/// The factor 1/2 is MLlib's `LeastSquaresGradient` (loss `diff^2 / 2`, gradient `diff * x`),
/// which the paper's SGD baseline uses.
#[derive(Debug, Clone)]
pub struct LeastSquares {
    data: CsrMatrix,
}

/// The minimiser found by [`LeastSquares::optimum`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Optimum {
    /// Objective at the minimiser.
    pub objective: f64,
    /// CGLS iterations used.
    pub iterations: usize,
    /// Norm of the normal-equation residual `X^T (X w - y)` relative to `X^T y` at the end.
    pub relative_residual: f64,
    /// The minimiser `w*` (not written to manifests).
    #[serde(skip)]
    pub minimiser: Vec<f64>,
}

impl LeastSquares {
    /// The problem on `data`.
    ///
    /// # Errors
    /// [`CoreError::Config`] for data without rows or features, or with non-finite values.
    pub fn new(data: CsrMatrix) -> Result<Self> {
        if data.rows() == 0 || data.cols == 0 {
            return Err(CoreError::Config(
                "least squares needs at least one row and one feature".into(),
            ));
        }
        if let Some(r) = (0..data.rows())
            .find(|&r| !data.labels[r].is_finite() || !data.row(r).1.iter().all(|v| v.is_finite()))
        {
            return Err(CoreError::Config(format!(
                "least squares data row {r} holds a non-finite value"
            )));
        }
        Ok(LeastSquares { data })
    }

    /// The data matrix.
    pub fn data(&self) -> &CsrMatrix {
        &self.data
    }

    /// Number of parameters.
    pub fn dim(&self) -> usize {
        self.data.cols
    }

    /// Rows n.
    pub fn rows(&self) -> usize {
        self.data.rows()
    }

    /// Residual `x_r . w - y_r` of row `r` (the dot product summed as [`sparse_dot`] does).
    pub fn residual(&self, r: usize, w: &[f32]) -> f64 {
        let (idx, val) = self.data.row(r);
        sparse_dot(idx, val, w) - f64::from(self.data.labels[r])
    }

    /// Adds `scale * x_r` to `acc`.
    pub fn add_row(&self, r: usize, scale: f64, acc: &mut [f64]) {
        let (idx, val) = self.data.row(r);
        for (&j, &v) in idx.iter().zip(val) {
            acc[j as usize] += scale * f64::from(v);
        }
    }

    /// `F(w)`.
    pub fn objective(&self, w: &[f32]) -> f64 {
        self.objective_and_accuracy(w).0
    }

    /// Fraction of rows where `sign(x . w)` agrees with the sign of the label.
    pub fn sign_accuracy(&self, w: &[f32]) -> f64 {
        self.objective_and_accuracy(w).1
    }

    /// `F(w)` and the sign accuracy from one pass over the rows: an evaluation point of an
    /// ASYNC run needs both, and the residuals are nearly all of its cost (each residual is
    /// [`Self::residual`]'s, bit for bit).
    pub fn objective_and_accuracy(&self, w: &[f32]) -> (f64, f64) {
        let n = self.rows();
        let (mut squares, mut hits) = (0.0f64, 0usize);
        for r in 0..n {
            let res = self.residual(r, w);
            squares += res.powi(2);
            let y = f64::from(self.data.labels[r]);
            hits += usize::from(((res + y) >= 0.0) == (y > 0.0));
        }
        (squares / (2.0 * n as f64), hits as f64 / n as f64)
    }

    /// Minimises `F` by CGLS (conjugate gradients on the normal equations, in f64) until the
    /// normal-equation residual falls below `tol` relative to `X^T y`, or `max_iter`
    /// iterations. CGLS reaches the least-squares minimum also for rank-deficient data.
    ///
    /// # Errors
    /// [`CoreError::Numeric`] when the tolerance is not met within `max_iter` iterations.
    pub fn optimum(&self, tol: f64, max_iter: usize) -> Result<Optimum> {
        let (n, d) = (self.rows(), self.dim());
        let mut x = vec![0.0f64; d];
        let mut r: Vec<f64> = self.data.labels.iter().map(|&y| f64::from(y)).collect();
        let xt = |v: &[f64], out: &mut [f64]| {
            out.iter_mut().for_each(|o| *o = 0.0);
            for (row, &vr) in v.iter().enumerate() {
                self.add_row(row, vr, out);
            }
        };
        let xv = |p: &[f64], out: &mut [f64]| {
            for (row, o) in out.iter_mut().enumerate() {
                let (idx, val) = self.data.row(row);
                *o = idx
                    .iter()
                    .zip(val)
                    .map(|(&j, &v)| f64::from(v) * p[j as usize])
                    .sum();
            }
        };
        let mut s = vec![0.0; d];
        xt(&r, &mut s);
        let mut p = s.clone();
        let mut gamma: f64 = s.iter().map(|v| v * v).sum();
        let gamma0 = gamma;
        let mut q = vec![0.0; n];
        let mut iterations = 0;
        while gamma > tol * tol * gamma0 && gamma0 > 0.0 {
            if iterations == max_iter {
                return Err(CoreError::Numeric(format!(
                    "CGLS did not reach relative residual {tol:e} in {max_iter} iterations (at {:e})",
                    (gamma / gamma0).sqrt()
                )));
            }
            iterations += 1;
            xv(&p, &mut q);
            let qq: f64 = q.iter().map(|v| v * v).sum();
            if qq == 0.0 {
                break;
            }
            let alpha = gamma / qq;
            x.iter_mut().zip(&p).for_each(|(xi, pi)| *xi += alpha * pi);
            r.iter_mut().zip(&q).for_each(|(ri, qi)| *ri -= alpha * qi);
            xt(&r, &mut s);
            let g: f64 = s.iter().map(|v| v * v).sum();
            let beta = g / gamma;
            gamma = g;
            p.iter_mut()
                .zip(&s)
                .for_each(|(pi, si)| *pi = si + beta * *pi);
        }
        let objective = r.iter().map(|v| v * v).sum::<f64>() / (2.0 * n as f64);
        Ok(Optimum {
            objective,
            iterations,
            minimiser: x,
            relative_residual: if gamma0 > 0.0 {
                (gamma / gamma0).sqrt()
            } else {
                0.0
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::RandomDesign;

    #[test]
    fn optimum_matches_the_normal_equations() {
        // Two features, four rows: solve the 2x2 normal equations by hand.
        let mut m = CsrMatrix::new(2);
        for (a, b, y) in [
            (1.0, 0.0, 1.0),
            (0.0, 1.0, 2.0),
            (1.0, 1.0, 2.0),
            (2.0, 1.0, 3.0),
        ] {
            m.push_row(&[(0, a), (1, b)], y);
        }
        let ls = LeastSquares::new(m).unwrap();
        // X^T X = [[6, 3], [3, 3]], X^T y = [9, 7] -> w = [2/3, 5/3].
        let w = [2.0f32 / 3.0, 5.0 / 3.0];
        let opt = ls.optimum(1e-12, 100).unwrap();
        assert!((opt.objective - ls.objective(&w)).abs() < 1e-6, "{opt:?}");
        assert!(opt.iterations <= 3);
    }

    #[test]
    fn optimum_is_below_every_perturbation() {
        let d = RandomDesign {
            rows: 300,
            features: 20,
            density: 0.5,
            nonnegative: false,
            label_noise: 0.1,
        }
        .generate(4);
        let ls = LeastSquares::new(d).unwrap();
        let opt = ls.optimum(1e-10, 500).unwrap();
        assert!(opt.relative_residual <= 1e-10);
        assert!(opt.objective < ls.objective(&[0.0; 20]));
        assert!(ls.sign_accuracy(&[0.0; 20]) <= 1.0);
    }

    #[test]
    fn one_pass_evaluation_is_the_row_by_row_sums_bit_for_bit() {
        // Rows of different lengths (density 0.3) and a count that is not a multiple of four.
        let d = RandomDesign {
            rows: 203,
            features: 40,
            density: 0.3,
            nonnegative: false,
            label_noise: 0.2,
        }
        .generate(9);
        let ls = LeastSquares::new(d).unwrap();
        let w: Vec<f32> = (0..40)
            .map(|j| ((j * 37 % 11) as f32 - 5.0) / 7.0)
            .collect();
        let n = ls.rows();
        let squares: f64 = (0..n).map(|r| ls.residual(r, &w).powi(2)).sum();
        let hits = (0..n)
            .filter(|&r| {
                let y = f64::from(ls.data.labels[r]);
                ((ls.residual(r, &w) + y) >= 0.0) == (y > 0.0)
            })
            .count();
        let (objective, accuracy) = ls.objective_and_accuracy(&w);
        assert_eq!(objective.to_bits(), (squares / (2.0 * n as f64)).to_bits());
        assert_eq!(accuracy.to_bits(), (hits as f64 / n as f64).to_bits());
        assert!(accuracy > 0.0 && accuracy < 1.0, "{accuracy}");
    }

    #[test]
    fn bad_data_and_unmet_tolerance_are_errors() {
        assert!(LeastSquares::new(CsrMatrix::new(3)).is_err());
        let mut m = CsrMatrix::new(1);
        m.push_row(&[(0, f32::NAN)], 1.0);
        let e = LeastSquares::new(m).unwrap_err().to_string();
        assert!(e.contains("row 0"), "{e}");
        let d = RandomDesign {
            rows: 200,
            features: 30,
            density: 1.0,
            nonnegative: false,
            label_noise: 0.2,
        }
        .generate(1);
        let e = LeastSquares::new(d).unwrap().optimum(1e-14, 1).unwrap_err();
        assert!(e.to_string().contains("CGLS"), "{e}");
    }
}
