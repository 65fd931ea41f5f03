//! A workload that learns nothing and counts: every update adds 1 to its single parameter, so
//! a model's value is the number of updates it holds. For protocol tests (the count checks what
//! was applied) and for simulator benchmarks (the event loop is measured, not the arithmetic).

use super::Workload;

/// One parameter; each update is `+1`; evaluation reports the count as the "loss" and 0 accuracy.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingProbe;

impl Workload for CountingProbe {
    fn dim(&self) -> usize {
        1
    }

    fn update(&self, _model: &[f32], _worker: usize, _workers: usize, _iter: u64) -> Vec<f32> {
        vec![1.0]
    }

    fn batch_size(&self, _workers: usize) -> usize {
        1
    }

    fn evaluate(&self, model: &[f32]) -> (f64, f64) {
        (model[0] as f64, 0.0)
    }
}
