//! Building blocks the networks share: a 3x3 or 5x5 "same" convolution, 2x2 max pooling, and
//! flattening to the fully connected layers.

use super::conv_op::Conv;
use super::flex_data::on_flex;
use super::pool_op;
use burn::nn::pool::MaxPool2dConfig;
use burn::prelude::*;

/// A `k`x`k` convolution from `from` to `to` channels with stride `stride` that keeps the
/// spatial size at stride 1 (padding `k / 2`).
pub fn conv(from: usize, to: usize, k: usize, stride: usize, bias: bool, d: &Device) -> Conv {
    Conv::new(from, to, k, stride, bias, d)
}

/// 2x2 max pooling with stride 2 (a no-op below 2 pixels, so a network built for 32x32 images
/// also runs on smaller quick-scale ones): ours on the CPU backend ([`pool_op`], the same bits
/// as burn's), burn's elsewhere.
pub fn pool(x: Tensor<4>) -> Tensor<4> {
    let [_, _, h, w] = x.dims();
    if h < 2 || w < 2 {
        return x;
    }
    if on_flex(&x) {
        return pool_op::max_pool(x);
    }
    MaxPool2dConfig::new([2, 2])
        .with_strides([2, 2])
        .init()
        .forward(x)
}

/// `[b, c, h, w]` to `[b, c * h * w]`.
pub fn flat(x: Tensor<4>) -> Tensor<2> {
    let [b, c, h, w] = x.dims();
    x.reshape([b, c * h * w])
}

/// Spatial size after `pools` 2x2 poolings of a `side`-pixel image.
pub fn pooled(side: usize, pools: usize) -> usize {
    (0..pools).fold(side, |s, _| if s >= 2 { s / 2 } else { s })
}
