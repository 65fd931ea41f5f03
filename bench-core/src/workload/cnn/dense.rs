//! A fully connected layer whose product is our own ([`super::matmul`], through the
//! convolution operation as a 1x1 convolution of a 1x1 image), so that the logits' bits do not
//! depend on the CPU as flex's matmul (the `gemm` crate) does. Its parameters are burn's
//! `Linear`'s, initialised by `LinearConfig` and in the same layout (`weight` `[in, out]`), so
//! the flat buffer's shapes and order are unchanged. On LibTorch (feature `cuda`) it is burn's
//! `Linear`.

use super::conv_op::conv2d;
use super::flex_data::on_flex_device;
use burn::module::Param;
use burn::nn::LinearConfig;
use burn::prelude::*;

/// `y = x W + b`.
#[derive(Module, Debug)]
pub struct Dense {
    /// `[in, out]`.
    pub weight: Param<Tensor<2>>,
    /// `[out]`.
    pub bias: Option<Param<Tensor<1>>>,
}

impl Dense {
    /// `from` inputs to `to` outputs, with a bias.
    pub fn new(from: usize, to: usize, d: &Device) -> Self {
        let burns = LinearConfig::new(from, to).init(d);
        Dense {
            weight: burns.weight,
            bias: burns.bias,
        }
    }

    /// `[b, in]` to `[b, out]`.
    pub fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        let [b, from] = x.dims();
        let w = self.weight.val();
        let to = w.dims()[1];
        if !on_flex_device(&x.device()) {
            let y = x.matmul(w);
            return match &self.bias {
                Some(bias) => y + bias.val().unsqueeze_dim(0),
                None => y,
            };
        }
        // [out, in, 1, 1]: the transpose is a copy flex makes, and autodiff moves its gradient
        // back (permutations are exact).
        let w = w.transpose().reshape([to, from, 1, 1]);
        let y = conv2d(
            x.reshape([b, from, 1, 1]),
            w,
            self.bias.as_ref().map(|p| p.val()),
            1,
            0,
        );
        y.reshape([b, to])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::TensorData;

    fn values(n: usize, salt: usize) -> Vec<f32> {
        (0..n)
            .map(|i| ((i * 7 + salt * 13) as f32 * 0.37).sin())
            .collect()
    }

    fn close(what: &str, a: Tensor<2>, b: Tensor<2>) {
        let (a, b) = (
            a.into_data().try_to_vec::<f32>().unwrap(),
            b.into_data().try_to_vec::<f32>().unwrap(),
        );
        assert_eq!(a.len(), b.len(), "{what}");
        for (x, y) in a.iter().zip(&b) {
            assert!(
                (x - y).abs() <= 1e-5 * (1.0 + y.abs()),
                "{what}: {a:?} against {b:?}"
            );
        }
    }

    /// Ours and burn's `Linear` with the same parameters give the same output and, through
    /// autodiff, the same gradients of the input, the weight and the bias (to a float's
    /// rounding: the sums' orders differ).
    #[test]
    fn agrees_with_burns_linear_through_autodiff() {
        let d = Device::flex().autodiff();
        let (b, from, to) = (4, 37, 11);
        let ours = Dense::new(from, to, &d);
        let burns = burn::nn::Linear {
            weight: Param::from_tensor(ours.weight.val().detach().require_grad()),
            bias: ours
                .bias
                .as_ref()
                .map(|p| Param::from_tensor(p.val().detach().require_grad())),
        };
        let x = || {
            Tensor::<2>::from_data(TensorData::new(values(b * from, 1), [b, from]), &d)
                .require_grad()
        };
        let (xo, xb) = (x(), x());
        let (yo, yb) = (ours.forward(xo.clone()), burns.forward(xb.clone()));
        close("y", yo.clone(), yb.clone());
        let r = Tensor::<2>::from_data(TensorData::new(values(b * to, 2), [b, to]), &d);
        let (go, gb) = ((yo * r.clone()).sum().backward(), (yb * r).sum().backward());
        close("dx", xo.grad(&go).unwrap(), xb.grad(&gb).unwrap());
        close(
            "dw",
            ours.weight.val().grad(&go).unwrap(),
            burns.weight.val().grad(&gb).unwrap(),
        );
        let (bo, bb) = (
            ours.bias.as_ref().unwrap().val().grad(&go).unwrap(),
            burns.bias.as_ref().unwrap().val().grad(&gb).unwrap(),
        );
        close("db", bo.unsqueeze_dim(0), bb.unsqueeze_dim(0));
    }
}
