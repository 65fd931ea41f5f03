//! ASAP's VGG with 11 layers (VGG-11, configuration "A" of Simonyan and Zisserman): eight 3x3
//! convolutions in five blocks of w, 2w, 4w 4w, 8w 8w, 8w 8w channels, each block ending in 2x2
//! max pooling, batch-normalised as CIFAR VGGs are, then fully connected layers of `hidden`,
//! `hidden` and `classes` units. At w = 64 and hidden = 512 it has 9.8 M parameters on 32x32
//! images (ASAP §6 says 7.5 M; it does not give its layer sizes).

use super::conv_op::Conv;
use super::dense::Dense;
use super::layers::{conv, flat, pool, pooled};
use super::norm::BatchStatNorm;
use burn::prelude::*;
use burn::tensor::activation::relu;

/// Convolutions per block, as multiples of the width.
const BLOCKS: [&[usize]; 5] = [&[1], &[2], &[4, 4], &[8, 8], &[8, 8]];

/// One convolution with its normalisation.
#[derive(Module, Debug)]
pub struct ConvNorm {
    conv: Conv,
    norm: BatchStatNorm,
}

/// The network.
#[derive(Module, Debug)]
pub struct Vgg11 {
    convs: Vec<ConvNorm>,
    f1: Dense,
    f2: Dense,
    out: Dense,
}

impl Vgg11 {
    /// Width `w`, `hidden` units, for `side`-pixel images of `classes` classes.
    pub fn new(w: usize, hidden: usize, side: usize, classes: usize, d: &Device) -> Self {
        let mut convs = Vec::new();
        let mut from = 3;
        for block in BLOCKS {
            for &m in block {
                convs.push(ConvNorm {
                    conv: conv(from, m * w, 3, 1, false, d),
                    norm: BatchStatNorm::new(m * w, d),
                });
                from = m * w;
            }
        }
        let s = pooled(side, BLOCKS.len());
        Self {
            convs,
            f1: Dense::new(from * s * s, hidden, d),
            f2: Dense::new(hidden, hidden, d),
            out: Dense::new(hidden, classes, d),
        }
    }

    /// Logits.
    pub fn forward(&self, mut x: Tensor<4>) -> Tensor<2> {
        let mut layer = 0;
        for block in BLOCKS {
            for _ in block.iter() {
                let c = &self.convs[layer];
                x = relu(c.norm.forward(c.conv.forward(x)));
                layer += 1;
            }
            x = pool(x);
        }
        let x = relu(self.f1.forward(flat(x)));
        let x = relu(self.f2.forward(x));
        self.out.forward(x)
    }
}
