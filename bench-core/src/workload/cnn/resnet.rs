//! The CIFAR ResNets of depth 6n + 2 (He et al., CVPR 2016, §4.2): a 3x3 convolution of w
//! channels, three stages of n basic blocks (two 3x3 convolutions with batch normalisation and
//! an identity shortcut) at w, 2w and 4w channels, the first block of the second and third
//! stages striding by 2 with a 1x1 projection shortcut and batch normalisation (option B),
//! global average pooling and one fully connected layer. w = 16 is the paper's network
//! (ResNet-110: 1.7 M parameters).

use super::conv_op::Conv;
use super::dense::Dense;
use super::layers::conv;
use super::norm::BatchStatNorm;
use burn::prelude::*;
use burn::tensor::activation::relu;

/// The 1x1 convolution and normalisation of a shortcut that changes shape.
#[derive(Module, Debug)]
pub struct Projection {
    conv: Conv,
    norm: BatchStatNorm,
}

/// Two convolutions and a shortcut.
#[derive(Module, Debug)]
pub struct BasicBlock {
    c1: Conv,
    n1: BatchStatNorm,
    c2: Conv,
    n2: BatchStatNorm,
    projection: Option<Projection>,
}

impl BasicBlock {
    fn new(from: usize, to: usize, stride: usize, d: &Device) -> Self {
        Self {
            c1: conv(from, to, 3, stride, false, d),
            n1: BatchStatNorm::new(to, d),
            c2: conv(to, to, 3, 1, false, d),
            n2: BatchStatNorm::new(to, d),
            projection: (stride != 1 || from != to).then(|| Projection {
                conv: conv(from, to, 1, stride, false, d),
                norm: BatchStatNorm::new(to, d),
            }),
        }
    }

    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let y = relu(self.n1.forward(self.c1.forward(x.clone())));
        let y = self.n2.forward(self.c2.forward(y));
        let shortcut = match &self.projection {
            Some(p) => p.norm.forward(p.conv.forward(x)),
            None => x,
        };
        relu(y + shortcut)
    }
}

/// The network.
#[derive(Module, Debug)]
pub struct Resnet {
    stem: Conv,
    stem_norm: BatchStatNorm,
    blocks: Vec<BasicBlock>,
    out: Dense,
}

impl Resnet {
    /// `n` blocks per stage, width `w`, for images of `classes` classes.
    pub fn new(n: usize, w: usize, classes: usize, d: &Device) -> Self {
        let mut blocks = Vec::new();
        let mut from = w;
        for (stage, mult) in [1, 2, 4].into_iter().enumerate() {
            for b in 0..n {
                let stride = if stage > 0 && b == 0 { 2 } else { 1 };
                blocks.push(BasicBlock::new(from, mult * w, stride, d));
                from = mult * w;
            }
        }
        Self {
            stem: conv(3, w, 3, 1, false, d),
            stem_norm: BatchStatNorm::new(w, d),
            blocks,
            out: Dense::new(from, classes, d),
        }
    }

    /// Logits.
    pub fn forward(&self, x: Tensor<4>) -> Tensor<2> {
        let mut x = relu(self.stem_norm.forward(self.stem.forward(x)));
        for b in &self.blocks {
            x = b.forward(x);
        }
        let [bsz, c, _, _] = x.dims();
        let pooled = x.mean_dim(2).mean_dim(3).reshape([bsz, c]);
        self.out.forward(pooled)
    }
}
