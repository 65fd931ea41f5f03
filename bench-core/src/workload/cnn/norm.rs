//! Batch normalisation without running statistics.
//!
//! A batch-norm layer's running mean and variance are per-worker state that no sync mode
//! exchanges (only parameters and gradients travel), and a model rebuilt from the flat parameter
//! buffer would start them afresh at every step. So this layer always normalises with the
//! statistics of the batch it sees, in training and at evaluation (which runs in batches of
//! [`super::workload::EVAL_BATCH`]). The scale is parameterised as `1 + gamma` so that every
//! one-dimensional parameter of the networks starts at zero.

use super::flex_data::on_flex;
use super::norm_op;
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

    /// Normalises `x` over the batch and the spatial positions of each channel: one fused
    /// operation on the CPU backend ([`super::norm_op`]), burn's tensor operations elsewhere.
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        if on_flex(&x) {
            return norm_op::batch_norm(x, self.gamma.val().add_scalar(1.0), self.beta.val());
        }
        self.composed(x)
    }

    /// The layer from burn's tensor operations.
    fn composed(&self, x: Tensor<4>) -> Tensor<4> {
        let [_, c, _, _] = x.dims();
        let mean = x.clone().mean_dim(0).mean_dim(2).mean_dim(3);
        let centred = x - mean;
        let var = centred
            .clone()
            .powi_scalar(2)
            .mean_dim(0)
            .mean_dim(2)
            .mean_dim(3);
        let normed = centred / var.add_scalar(super::norm_kernels::EPSILON).sqrt();
        let scale = self.gamma.val().add_scalar(1.0).reshape([1, c, 1, 1]);
        normed * scale + self.beta.val().reshape([1, c, 1, 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    fn values(len: usize, seed: u64) -> Vec<f32> {
        (0..len)
            .map(|i| (((i as u64 + 5) * (seed * 2 + 104729) % 997) as f32 / 498.5) - 1.0)
            .collect()
    }

    fn close(name: &str, a: Tensor<1>, b: Tensor<1>) {
        let (a, b) = (
            a.into_data().try_to_vec::<f32>().unwrap(),
            b.into_data().try_to_vec::<f32>().unwrap(),
        );
        let scale = b.iter().fold(1e-3f32, |m, v| m.max(v.abs()));
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert!(
                (x - y).abs() <= 2e-4 * scale,
                "{name}[{i}]: fused {x}, composed {y}"
            );
        }
    }

    /// The fused operation and burn's composed one give the same output and, through autodiff,
    /// the same gradients of the input, the scale and the shift.
    #[test]
    fn the_fused_layer_agrees_with_the_composed_one() {
        let d = Device::flex().autodiff();
        let t1 = |v: Vec<f32>| {
            Param::from_tensor(Tensor::<1>::from_data(TensorData::new(v, [3]), &d).require_grad())
        };
        let layer = BatchStatNorm {
            gamma: t1(vec![0.5, -0.3, 0.0]),
            beta: t1(vec![0.1, 0.0, -0.2]),
        };
        let x = || {
            Tensor::<4>::from_data(TensorData::new(values(2 * 3 * 4 * 5, 1), [2, 3, 4, 5]), &d)
                .require_grad()
        };
        let (xf, xc) = (x(), x());
        assert!(on_flex(&xf));
        let (yf, yc) = (layer.forward(xf.clone()), layer.composed(xc.clone()));
        let r = Tensor::<4>::from_data(TensorData::new(values(120, 2), [2, 3, 4, 5]), &d);
        close("y", yf.clone().flatten(0, 3), yc.clone().flatten(0, 3));
        let (gf, gc) = ((yf * r.clone()).sum().backward(), (yc * r).sum().backward());
        close(
            "dx",
            xf.grad(&gf).unwrap().flatten(0, 3),
            xc.grad(&gc).unwrap().flatten(0, 3),
        );
        close(
            "dgamma",
            layer.gamma.val().grad(&gf).unwrap(),
            layer.gamma.val().grad(&gc).unwrap(),
        );
        close(
            "dbeta",
            layer.beta.val().grad(&gf).unwrap(),
            layer.beta.val().grad(&gc).unwrap(),
        );
    }
}
