//! Batch normalisation without running statistics.
//!
//! A batch-norm layer's running mean and variance are per-worker state that no sync mode
//! exchanges (only parameters and gradients travel), and a model rebuilt from the flat parameter
//! buffer would start them afresh at every step. So this layer always normalises with the
//! statistics of the batch it sees, in training and at evaluation (which runs in batches of
//! [`super::workload::EVAL_BATCH`]). The scale is parameterised as `1 + gamma` so that every
//! one-dimensional parameter of the networks starts at zero.

use burn::module::{Module, Param};
use burn::prelude::*;

/// Per-channel normalisation of `[batch, channels, h, w]` activations.
#[derive(Module, Debug)]
pub struct BatchStatNorm {
    /// Scale minus one, per channel.
    pub gamma: Param<Tensor<1>>,
    /// Shift, per channel.
    pub beta: Param<Tensor<1>>,
}

impl BatchStatNorm {
    /// A layer for `channels` channels on `device`.
    pub fn new(channels: usize, device: &Device) -> Self {
        let zeros = || Param::from_tensor(Tensor::<1>::zeros([channels], device));
        Self {
            gamma: zeros(),
            beta: zeros(),
        }
    }

    /// Normalises `x` over the batch and the spatial positions of each channel.
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let [_, c, _, _] = x.dims();
        let mean = x.clone().mean_dim(0).mean_dim(2).mean_dim(3);
        let centred = x - mean;
        let var = centred
            .clone()
            .powi_scalar(2)
            .mean_dim(0)
            .mean_dim(2)
            .mean_dim(3);
        let normed = centred / var.add_scalar(1e-5).sqrt();
        let scale = self.gamma.val().add_scalar(1.0).reshape([1, c, 1, 1]);
        normed * scale + self.beta.val().reshape([1, c, 1, 1])
    }
}
