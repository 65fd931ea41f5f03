//! Hop's CNN, taken as TensorFlow's CIFAR-10 tutorial network (see [`super::CnnModel::HopCnn`]):
//! conv 5x5 (w) - pool - conv 5x5 (w) - pool - fc (hidden) - fc (hidden / 2) - fc (classes).

use super::conv_op::Conv;
use super::dense::Dense;
use super::layers::{conv, flat, pool, pooled};
use burn::prelude::*;
use burn::tensor::activation::relu;

/// The network.
#[derive(Module, Debug)]
pub struct HopCnn {
    c1: Conv,
    c2: Conv,
    f1: Dense,
    f2: Dense,
    out: Dense,
}

impl HopCnn {
    /// Width `w`, `hidden` units, for `side`-pixel images of `classes` classes.
    pub fn new(w: usize, hidden: usize, side: usize, classes: usize, d: &Device) -> Self {
        let s = pooled(side, 2);
        let h2 = (hidden / 2).max(1);
        Self {
            c1: conv(3, w, 5, 1, true, d),
            c2: conv(w, w, 5, 1, true, d),
            f1: Dense::new(w * s * s, hidden, d),
            f2: Dense::new(hidden, h2, d),
            out: Dense::new(h2, classes, d),
        }
    }

    /// Logits.
    pub fn forward(&self, x: Tensor<4>) -> Tensor<2> {
        let x = pool(relu(self.c1.forward(x)));
        let x = pool(relu(self.c2.forward(x)));
        let x = relu(self.f1.forward(flat(x)));
        let x = relu(self.f2.forward(x));
        self.out.forward(x)
    }
}
