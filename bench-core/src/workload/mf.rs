//! Low-rank matrix factorisation by SGD (ESSP §"SGD for Low Rank Matrix Factorization").
//!
//! Parameters are `L` (users x K) followed by `R` (items x K), row-major, in one vector. A
//! worker's update for a clock is the change a sequential SGD pass over its next mini-batch
//! (a fixed share of its ratings, 1% in the paper) makes to its local copy:
//! `L_i += g (e_ij R_j - lambda L_i)`, `R_j += g (e_ij L_i - lambda R_j)`, `e_ij = D_ij - L_i.R_j`.
//! Evaluation reports the mean squared error on held-out ratings (the paper records squared
//! loss, not the penalised objective); accuracy is not defined and reported as NaN.

use super::Workload;
use crate::data::Rating;
use crate::error::{CoreError, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Hyper-parameters.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MfConfig {
    /// Rank K.
    pub rank: usize,
    /// Regularisation lambda.
    pub lambda: f64,
    /// Step size gamma.
    pub step: f64,
    /// Share of a worker's ratings processed per clock (0, 1].
    pub minibatch_fraction: f64,
    /// Initial factors are uniform in `[-init_scale, init_scale]`.
    pub init_scale: f64,
    /// Seed of the random initial factors.
    pub init_seed: u64,
}

/// Matrix factorisation over `train` (partitioned contiguously over workers), evaluated on `test`.
#[derive(Debug)]
pub struct MatrixFactorization {
    cfg: MfConfig,
    users: usize,
    items: usize,
    train: Vec<Rating>,
    test: Vec<Rating>,
}

impl MatrixFactorization {
    /// # Errors
    /// [`CoreError::Config`] for a bad hyper-parameter or a rating outside `users x items`.
    pub fn new(
        cfg: MfConfig,
        users: usize,
        items: usize,
        train: Vec<Rating>,
        test: Vec<Rating>,
    ) -> Result<Self> {
        if cfg.rank == 0 {
            return Err(CoreError::out_of_range("mf.rank", ">= 1", cfg.rank));
        }
        if !(cfg.minibatch_fraction > 0.0 && cfg.minibatch_fraction <= 1.0) {
            return Err(CoreError::out_of_range(
                "mf.minibatch_fraction",
                "in (0, 1]",
                cfg.minibatch_fraction,
            ));
        }
        if !(cfg.step > 0.0 && cfg.step.is_finite() && cfg.lambda >= 0.0) {
            return Err(CoreError::Config(
                "mf.step must be > 0 and mf.lambda >= 0".into(),
            ));
        }
        if train.is_empty() || test.is_empty() {
            return Err(CoreError::Config(
                "mf needs non-empty train and test ratings".into(),
            ));
        }
        if let Some(r) = train
            .iter()
            .chain(&test)
            .find(|r| r.user as usize >= users || r.item as usize >= items)
        {
            return Err(CoreError::Config(format!(
                "rating ({}, {}) outside the {users} x {items} matrix",
                r.user, r.item
            )));
        }
        Ok(MatrixFactorization {
            cfg,
            users,
            items,
            train,
            test,
        })
    }

    /// The hyper-parameters.
    pub fn config(&self) -> &MfConfig {
        &self.cfg
    }

    /// The training ratings, in worker order.
    pub fn train(&self) -> &[Rating] {
        &self.train
    }

    /// Rank K (the length of every factor row).
    pub fn rank(&self) -> usize {
        self.cfg.rank
    }

    /// Users (rows of `L`).
    pub fn users(&self) -> usize {
        self.users
    }

    /// Items (rows of `R`).
    pub fn items(&self) -> usize {
        self.items
    }

    /// The ratings worker `worker` of `workers` processes at `clock`, in order: the next
    /// `batch_size` of its contiguous share of the training ratings, wrapping around.
    pub fn minibatch(
        &self,
        worker: usize,
        workers: usize,
        clock: u64,
    ) -> impl Iterator<Item = Rating> + '_ {
        self.minibatch_part(worker, workers, clock, 0..self.batch_size(workers))
    }

    /// Ratings `part` (positions in the mini-batch) of [`Self::minibatch`], without walking
    /// the ones before.
    pub fn minibatch_part(
        &self,
        worker: usize,
        workers: usize,
        clock: u64,
        part: std::ops::Range<usize>,
    ) -> impl Iterator<Item = Rating> + '_ {
        let n = self.train.len();
        let share = (n / workers.max(1)).max(1);
        let base = (worker * share) % n;
        let batch = self.batch_size(workers);
        (part.start..part.end.min(batch))
            .map(move |b| self.train[(base + (clock as usize * batch + b) % share) % n])
    }

    /// One SGD step on rating `value` of user row `l` and item row `r` (each K long):
    /// `e = value - l.r`, `l += g (e r - lambda l)`, `r += g (e l - lambda r)`.
    pub fn sgd_step(&self, l: &mut [f32], r: &mut [f32], value: f32) {
        let (g, lambda) = (self.cfg.step as f32, self.cfg.lambda as f32);
        let e = value - l.iter().zip(r.iter()).map(|(a, b)| a * b).sum::<f32>();
        for (lf, rf) in l.iter_mut().zip(r.iter_mut()) {
            let (a, b) = (*lf, *rf);
            *lf = a + g * (e * b - lambda * a);
            *rf = b + g * (e * a - lambda * b);
        }
    }

    fn predict(&self, m: &[f32], u: usize, i: usize) -> f32 {
        let k = self.cfg.rank;
        let l = &m[u * k..(u + 1) * k];
        let r = &m[(self.users + i) * k..(self.users + i + 1) * k];
        l.iter().zip(r).map(|(a, b)| a * b).sum()
    }
}

impl Workload for MatrixFactorization {
    fn dim(&self) -> usize {
        (self.users + self.items) * self.cfg.rank
    }

    fn initial_model(&self) -> Vec<f32> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.cfg.init_seed);
        let scale = self.cfg.init_scale as f32;
        (0..self.dim())
            .map(|_| (rng.gen::<f32>() - 0.5) * 2.0 * scale)
            .collect()
    }

    fn batch_size(&self, workers: usize) -> usize {
        let share = (self.train.len() / workers.max(1)).max(1);
        ((share as f64 * self.cfg.minibatch_fraction).ceil() as usize).max(1)
    }

    fn update(&self, model: &[f32], worker: usize, workers: usize, iter: u64) -> Vec<f32> {
        let k = self.cfg.rank;
        let mut local = model.to_vec();
        for r in self.minibatch(worker, workers, iter) {
            let (lo, ro) = (r.user as usize * k, (self.users + r.item as usize) * k);
            // L rows come before R rows, so the two rows never overlap.
            let (left, right) = local.split_at_mut(ro);
            self.sgd_step(&mut left[lo..lo + k], &mut right[..k], r.value);
        }
        for (l, m) in local.iter_mut().zip(model) {
            *l -= m;
        }
        local
    }

    fn evaluate(&self, model: &[f32]) -> (f64, f64) {
        let se: f64 = self
            .test
            .iter()
            .map(|r| {
                let e = (r.value - self.predict(model, r.user as usize, r.item as usize)) as f64;
                e * e
            })
            .sum();
        (se / self.test.len() as f64, f64::NAN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::RatingsShape;

    #[test]
    fn sgd_reduces_held_out_error() {
        let shape = RatingsShape {
            users: 200,
            items: 100,
            ratings: 20_000,
            rank: 4,
            noise: 0.05,
            popularity_exponent: 0.5,
        };
        let all = shape.generate(3);
        let (train, test) = all.split_at(18_000);
        let cfg = MfConfig {
            rank: 4,
            lambda: 0.01,
            step: 0.05,
            minibatch_fraction: 0.05,
            init_scale: 0.3,
            init_seed: 1,
        };
        let w = MatrixFactorization::new(cfg, 200, 100, train.to_vec(), test.to_vec()).unwrap();
        let mut m = w.initial_model();
        let (e0, acc) = w.evaluate(&m);
        assert!(acc.is_nan());
        for it in 0..200 {
            let u = w.update(&m, 0, 1, it);
            for (a, d) in m.iter_mut().zip(u) {
                *a += d;
            }
        }
        let (e1, _) = w.evaluate(&m);
        assert!(e1 < 0.5 * e0, "{e0} -> {e1}");
    }

    #[test]
    fn rejects_out_of_range_ratings() {
        let cfg = MfConfig {
            rank: 2,
            lambda: 0.1,
            step: 0.01,
            minibatch_fraction: 0.01,
            init_scale: 0.3,
            init_seed: 1,
        };
        let bad = vec![Rating {
            user: 5,
            item: 0,
            value: 1.0,
        }];
        let e = MatrixFactorization::new(cfg, 3, 3, bad.clone(), bad).unwrap_err();
        assert!(e.to_string().contains("(5, 0)"), "{e}");
    }
}
