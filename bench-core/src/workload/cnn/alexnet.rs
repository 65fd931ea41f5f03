//! DSSP's downsized AlexNet: three convolutions and two fully connected layers (DSSP §V:
//! "a network with 3 convolutional layers and 2 fully connected layers"). The layer sizes are
//! not given; we keep AlexNet's kernel pattern (5x5, 5x5, 3x3) and channel growth (w, 2w, 2w),
//! each convolution followed by 2x2 max pooling, then fc (hidden) and fc (classes).

use super::conv_op::Conv;
use super::dense::Dense;
use super::layers::{conv, flat, pool, pooled};
use burn::prelude::*;
use burn::tensor::activation::relu;

/// The network.
#[derive(Module, Debug)]
pub struct AlexnetSmall {
    c1: Conv,
    c2: Conv,
    c3: Conv,
    f1: Dense,
    out: Dense,
}

impl AlexnetSmall {
    /// Width `w`, `hidden` units, for `side`-pixel images of `classes` classes.
    pub fn new(w: usize, hidden: usize, side: usize, classes: usize, d: &Device) -> Self {
        let s = pooled(side, 3);
        Self {
            c1: conv(3, w, 5, 1, true, d),
            c2: conv(w, 2 * w, 5, 1, true, d),
            c3: conv(2 * w, 2 * w, 3, 1, true, d),
            f1: Dense::new(2 * w * s * s, hidden, d),
            out: Dense::new(hidden, classes, d),
        }
    }

    /// Logits.
    pub fn forward(&self, x: Tensor<4>) -> Tensor<2> {
        let x = pool(relu(self.c1.forward(x)));
        let x = pool(relu(self.c2.forward(x)));
        let x = pool(relu(self.c3.forward(x)));
        let x = relu(self.f1.forward(flat(x)));
        self.out.forward(x)
    }
}
