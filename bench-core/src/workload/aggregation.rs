//! How a parameter server combines its workers' updates: `sum` (Bösen's INC tables, the ESSP
//! paper: every worker's step is added) or `mean` (synchronous SGD with averaged gradients, the
//! parameter server Hop's and DSSP's papers compare against: with N workers each step counts
//! 1/N, so a BSP clock moves the model by the mean of the N steps).
//!
//! `mean` scales each worker's update by 1/N where it is computed, which under BSP is exactly
//! the server averaging the clock's N updates, and under the stale modes is the usual
//! per-update form of averaged SGD; the worker's read-my-writes view applies the same scaled
//! step, so every node sees one consistent model.

use super::Workload;
use crate::learning::ScaledParts;
use std::sync::Arc;

/// The parameter server's aggregation of updates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Aggregation {
    /// Add every worker's update (Bösen, ESSP).
    #[default]
    Sum,
    /// Average: each update counts 1/N of the N workers.
    Mean,
}

impl Aggregation {
    /// `workload` as the parameter-server family trains it under this aggregation.
    pub fn wrap(self, workload: Arc<dyn Workload>) -> Arc<dyn Workload> {
        match self {
            Aggregation::Sum => workload,
            Aggregation::Mean => Arc::new(Averaged { inner: workload }),
        }
    }

    /// `sum` or `mean`, for manifests.
    pub fn label(self) -> &'static str {
        match self {
            Aggregation::Sum => "sum",
            Aggregation::Mean => "mean",
        }
    }
}

/// A workload whose updates are scaled by 1/N.
struct Averaged {
    inner: Arc<dyn Workload>,
}

impl Workload for Averaged {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn initial_model(&self) -> Vec<f32> {
        self.inner.initial_model()
    }

    fn update(&self, model: &[f32], worker: usize, workers: usize, iter: u64) -> Vec<f32> {
        let scale = 1.0 / workers.max(1) as f32;
        let mut u = self.inner.update(model, worker, workers, iter);
        u.iter_mut().for_each(|x| *x *= scale);
        u
    }

    /// The inner scaled update with `1/N` as its last factor (bit for bit `update`'s
    /// `u[j] * scale`); not offered when the inner workload does not offer one, or offers one
    /// with a last factor already (no workload does: that one would then be computed twice).
    fn scaled_update(
        &self,
        model: &[f32],
        worker: usize,
        workers: usize,
        iter: u64,
    ) -> Option<ScaledParts> {
        let scale = 1.0 / workers.max(1) as f32;
        let mut parts = self.inner.scaled_update(model, worker, workers, iter)?;
        if parts.post != 1.0 {
            return None;
        }
        parts.post = scale;
        Some(parts)
    }

    fn batch_size(&self, workers: usize) -> usize {
        self.inner.batch_size(workers)
    }

    fn evaluate(&self, model: &[f32]) -> (f64, f64) {
        self.inner.evaluate(model)
    }

    fn objective(&self, model: &[f32]) -> Option<f64> {
        self.inner.objective(model)
    }

    fn keeps_worker_state(&self) -> bool {
        self.inner.keeps_worker_state()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Constant;
    impl Workload for Constant {
        fn dim(&self) -> usize {
            2
        }
        fn update(&self, _: &[f32], _: usize, _: usize, _: u64) -> Vec<f32> {
            vec![4.0, -8.0]
        }
        fn batch_size(&self, _: usize) -> usize {
            3
        }
        fn evaluate(&self, m: &[f32]) -> (f64, f64) {
            (m[0] as f64, 0.0)
        }
    }

    #[test]
    fn mean_scales_each_update_by_the_worker_count() {
        let w: Arc<dyn Workload> = Arc::new(Constant);
        let sum = Aggregation::Sum.wrap(w.clone());
        let mean = Aggregation::Mean.wrap(w);
        assert_eq!(sum.update(&[0.0; 2], 0, 4, 0), vec![4.0, -8.0]);
        assert_eq!(mean.update(&[0.0; 2], 0, 4, 0), vec![1.0, -2.0]);
        // One BSP clock of 4 workers moves the model by one mean step.
        let mut m = [0.0f32; 2];
        for w in 0..4 {
            for (x, d) in m.iter_mut().zip(mean.update(&[0.0; 2], w, 4, 0)) {
                *x += d;
            }
        }
        assert_eq!(m, [4.0, -8.0]);
        assert_eq!((mean.batch_size(4), mean.evaluate(&[2.0, 0.0]).0), (3, 2.0));
        let a: Aggregation = toml::from_str::<toml::Value>("a = \"mean\"").unwrap()["a"]
            .clone()
            .try_into()
            .unwrap();
        assert_eq!(a.label(), "mean");
    }
}
