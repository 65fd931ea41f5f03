//! ResNet-50 with bottleneck blocks (He et al., CVPR 2016, Table 1 and Fig 5 right) in its
//! common CIFAR form: a 3x3 stem convolution of w channels with batch normalisation and no max
//! pooling, then four stages of 3, 4, 6 and 3 bottleneck blocks (1x1 down to m channels, 3x3
//! at m, 1x1 up to 4m; m = w, 2w, 4w, 8w), the first block of stages 2-4 striding by 2 in its
//! 3x3 convolution, a 1x1 projection shortcut with normalisation wherever the shape changes
//! (option B), global average pooling and one fully connected layer of 32w inputs.

use super::conv_op::Conv;
use super::dense::Dense;
use super::layers::conv;
use super::norm::BatchStatNorm;
use burn::prelude::*;
use burn::tensor::activation::relu;

/// Blocks per stage.
const STAGES: [usize; 4] = [3, 4, 6, 3];
/// Output channels of a block over its inner channels.
const EXPANSION: usize = 4;

/// The 1x1 convolution and normalisation of a shortcut that changes shape.
#[derive(Module, Debug)]
pub struct Projection {
    conv: Conv,
    norm: BatchStatNorm,
}

/// Three convolutions (1x1, 3x3, 1x1) and a shortcut.
#[derive(Module, Debug)]
pub struct Bottleneck {
    c1: Conv,
    n1: BatchStatNorm,
    c2: Conv,
    n2: BatchStatNorm,
    c3: Conv,
    n3: BatchStatNorm,
    projection: Option<Projection>,
}

impl Bottleneck {
    fn new(from: usize, inner: usize, stride: usize, d: &Device) -> Self {
        let to = inner * EXPANSION;
        Self {
            c1: conv(from, inner, 1, 1, false, d),
            n1: BatchStatNorm::new(inner, d),
            c2: conv(inner, inner, 3, stride, false, d),
            n2: BatchStatNorm::new(inner, d),
            c3: conv(inner, to, 1, 1, false, d),
            n3: BatchStatNorm::new(to, d),
            projection: (stride != 1 || from != to).then(|| Projection {
                conv: conv(from, to, 1, stride, false, d),
                norm: BatchStatNorm::new(to, d),
            }),
        }
    }

    fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        let y = relu(self.n1.forward(self.c1.forward(x.clone())));
        let y = relu(self.n2.forward(self.c2.forward(y)));
        let y = self.n3.forward(self.c3.forward(y));
        let shortcut = match &self.projection {
            Some(p) => p.norm.forward(p.conv.forward(x)),
            None => x,
        };
        relu(y + shortcut)
    }
}

/// The network.
#[derive(Module, Debug)]
pub struct Resnet50 {
    stem: Conv,
    stem_norm: BatchStatNorm,
    blocks: Vec<Bottleneck>,
    out: Dense,
}

impl Resnet50 {
    /// Stem width `w`, for images of `classes` classes.
    pub fn new(w: usize, classes: usize, d: &Device) -> Self {
        let mut blocks = Vec::new();
        let mut from = w;
        for (stage, (&n, mult)) in STAGES.iter().zip([1, 2, 4, 8]).enumerate() {
            for b in 0..n {
                let stride = if stage > 0 && b == 0 { 2 } else { 1 };
                blocks.push(Bottleneck::new(from, mult * w, stride, d));
                from = mult * w * EXPANSION;
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

#[cfg(test)]
mod tests {
    use super::*;
    use burn::module::Module;

    /// The pytorch-cifar ResNet-50 has 23,520,842 parameters for 10 classes (its summary);
    /// ours differs only in each normalisation's scale being `1 + gamma` (same count).
    #[test]
    fn the_paper_width_has_the_reference_parameter_count() {
        let d = Device::default();
        assert_eq!(Resnet50::new(64, 10, &d).num_params(), 23_520_842);
    }

    #[test]
    fn a_narrow_network_keeps_the_shape() {
        let d = Device::default();
        let n = Resnet50::new(2, 5, &d);
        let y = n.forward(Tensor::<4>::zeros([3, 3, 8, 8], &d));
        assert_eq!(y.dims(), [3, 5]);
        assert_eq!(n.blocks.len(), 16);
    }
}
