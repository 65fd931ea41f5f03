//! The networks' convolution as a burn operation of our own, so that on the CPU backend both
//! its passes run [`super::conv_kernels`] (im2col and matrix products) instead of flex's
//! forward and burn's generic gradients; on LibTorch (feature `cuda`) it is LibTorch's
//! convolution with burn's generic gradients built from LibTorch's operations, as before.
//!
//! burn 0.22's way to add an operation with its own backward pass is a backend extension: a
//! trait implemented for each concrete backend and, by hand, for `Autodiff<B>`, which records
//! the operation on the graph and calls the inner backend's gradients ([`ConvKernels`]) when
//! the graph is walked back. The module [`Conv`] is burn's `Conv2d` with the same parameters,
//! initialised by burn's own `Conv2dConfig` (so a seed draws the same weights), calling it.

use super::conv_kernels::{self, ConvShape};
use super::flex_data::{floats, tensor as flex};
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::autodiff::NodeId;
use burn::backend::tensor::FloatTensor;
use burn::backend::{backend_extension, Autodiff, Backend, Dispatch, Flex, TensorMetadata};
use burn::module::Param;
use burn::nn::conv::Conv2dConfig;
use burn::nn::PaddingConfig2d;
use burn::prelude::*;

/// A square `k`x`k` convolution with stride `stride` and zero padding `k / 2`, with or without
/// a bias: burn's `Conv2d` parameters, our operation.
#[derive(Module, Debug)]
pub struct Conv {
    /// `[to, from, k, k]`.
    pub weight: Param<Tensor<4>>,
    /// `[to]`.
    pub bias: Option<Param<Tensor<1>>>,
    stride: usize,
    pad: usize,
}

impl Conv {
    /// A convolution from `from` to `to` channels, initialised as burn's `Conv2d` is.
    pub fn new(from: usize, to: usize, k: usize, stride: usize, bias: bool, d: &Device) -> Self {
        let burns = Conv2dConfig::new([from, to], [k, k])
            .with_stride([stride, stride])
            .with_padding(PaddingConfig2d::Explicit(k / 2, k / 2, k / 2, k / 2))
            .with_bias(bias)
            .init(d);
        Conv {
            weight: burns.weight,
            bias: burns.bias,
            stride,
            pad: k / 2,
        }
    }

    /// `[b, from, h, w]` to `[b, to, h', w']`.
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        conv2d(
            x,
            self.weight.val(),
            self.bias.as_ref().map(|b| b.val()),
            self.stride,
            self.pad,
        )
    }
}

/// `x` (`[n, ci, h, w]`) convolved with `weight` (`[co, ci, kh, kw]`) at `stride` with zero
/// padding `pad`, plus `bias` (`[co]`): our operation, recorded for autodiff.
pub fn conv2d(
    x: Tensor<4>,
    weight: Tensor<4>,
    bias: Option<Tensor<1>>,
    stride: usize,
    pad: usize,
) -> Tensor<4> {
    let x = x.into_dispatch();
    let w = weight.into_dispatch();
    let y = match bias {
        None => <Dispatch as ConvBackend>::syncbench_conv2d(x, w, stride, pad),
        Some(b) => {
            <Dispatch as ConvBackend>::syncbench_conv2d_bias(x, w, b.into_dispatch(), stride, pad)
        }
    };
    Tensor::from_dispatch(y)
}

/// The convolution as a backend operation (a backend extension: see the module's docs).
#[backend_extension(Flex, LibTorch: cfg(feature = "cuda"), Autodiff)]
pub trait ConvBackend: Backend {
    /// `x` (`[n, ci, h, w]`) convolved with `weight` (`[co, ci, k, k]`).
    fn syncbench_conv2d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        stride: usize,
        pad: usize,
    ) -> FloatTensor<Self>;
    /// As [`ConvBackend::syncbench_conv2d`], plus `bias` (`[co]`) on every output pixel.
    fn syncbench_conv2d_bias(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        stride: usize,
        pad: usize,
    ) -> FloatTensor<Self>;
}

/// The gradients a concrete backend gives for the convolution.
pub struct Grads<B: Backend> {
    /// Of the input, when asked for.
    pub x: Option<FloatTensor<B>>,
    /// Of the weight.
    pub weight: FloatTensor<B>,
    /// Of the bias, when asked for.
    pub bias: Option<FloatTensor<B>>,
}

/// A concrete backend's convolution and its gradients.
pub trait ConvKernels: Backend {
    /// The forward pass.
    fn forward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        stride: usize,
        pad: usize,
    ) -> FloatTensor<Self>;
    /// The gradients for the output gradient `dy`.
    fn backward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        dy: FloatTensor<Self>,
        stride: usize,
        pad: usize,
        want_x: bool,
        want_bias: bool,
    ) -> Grads<Self>;
}

/// The sizes of `x` convolved with `weight`.
fn shape_of(x: &[usize], weight: &[usize], stride: usize, pad: usize) -> ConvShape {
    assert!(
        x.len() == 4 && weight.len() == 4 && x[1] == weight[1],
        "convolution of a {x:?} input with a {weight:?} weight"
    );
    ConvShape {
        n: x[0],
        ci: x[1],
        h: x[2],
        w: x[3],
        co: weight[0],
        kh: weight[2],
        kw: weight[3],
        stride,
        pad,
    }
}

impl ConvKernels for Flex {
    fn forward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: Option<FloatTensor<Self>>,
        stride: usize,
        pad: usize,
    ) -> FloatTensor<Self> {
        let s = shape_of(&x.shape(), &weight.shape(), stride, pad);
        let bias = bias.as_ref().map(floats);
        let y = conv_kernels::forward(&s, &floats(&x), &floats(&weight), bias.as_deref());
        flex(y, &[s.n, s.co, s.ho(), s.wo()])
    }

    fn backward(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        dy: FloatTensor<Self>,
        stride: usize,
        pad: usize,
        want_x: bool,
        want_bias: bool,
    ) -> Grads<Self> {
        let s = shape_of(&x.shape(), &weight.shape(), stride, pad);
        let g = conv_kernels::backward(
            &s,
            &floats(&x),
            &floats(&weight),
            &floats(&dy),
            want_x,
            want_bias,
        );
        Grads {
            x: g.x.map(|v| flex(v, &[s.n, s.ci, s.h, s.w])),
            weight: flex(g.weight, &[s.co, s.ci, s.kh, s.kw]),
            bias: g.bias.map(|v| flex(v, &[s.co])),
        }
    }
}

/// A concrete backend's [`ConvBackend`]: its own [`ConvKernels::forward`].
macro_rules! concrete_conv_backend {
    ($backend:ty) => {
        impl ConvBackend for $backend {
            fn syncbench_conv2d(
                x: FloatTensor<Self>,
                weight: FloatTensor<Self>,
                stride: usize,
                pad: usize,
            ) -> FloatTensor<Self> {
                <Self as ConvKernels>::forward(x, weight, None, stride, pad)
            }

            fn syncbench_conv2d_bias(
                x: FloatTensor<Self>,
                weight: FloatTensor<Self>,
                bias: FloatTensor<Self>,
                stride: usize,
                pad: usize,
            ) -> FloatTensor<Self> {
                <Self as ConvKernels>::forward(x, weight, Some(bias), stride, pad)
            }
        }
    };
}

concrete_conv_backend!(Flex);

#[cfg(feature = "cuda")]
mod libtorch {
    use super::{ConvBackend, ConvKernels, Grads};
    use burn::backend::ops::{FloatTensorOps, ModuleOps};
    use burn::backend::tensor::FloatTensor;
    #[allow(deprecated)]
    // burn 0.22 deprecates burn-tch; device.rs says why we use it
    use burn::backend::LibTorch;
    use burn::backend::TensorMetadata;
    use burn::tensor::ops::ConvOptions;
    use burn::tensor::FloatDType;

    fn options(stride: usize, pad: usize) -> ConvOptions<2> {
        ConvOptions::new([stride, stride], [pad, pad], [1, 1], 1)
    }

    #[allow(deprecated)]
    impl ConvKernels for LibTorch {
        fn forward(
            x: FloatTensor<Self>,
            weight: FloatTensor<Self>,
            bias: Option<FloatTensor<Self>>,
            stride: usize,
            pad: usize,
        ) -> FloatTensor<Self> {
            Self::conv2d(x, weight, bias, options(stride, pad))
        }

        fn backward(
            x: FloatTensor<Self>,
            weight: FloatTensor<Self>,
            dy: FloatTensor<Self>,
            stride: usize,
            pad: usize,
            want_x: bool,
            want_bias: bool,
        ) -> Grads<Self> {
            let o = options(stride, pad);
            let gx = want_x
                .then(|| Self::conv2d_x_backward(x.clone(), weight.clone(), dy.clone(), o.clone()));
            let gb = want_bias.then(|| {
                let co = TensorMetadata::shape(&weight)[0];
                let device = TensorMetadata::device(&weight);
                let bias = Self::float_zeros([co].into(), &device, FloatDType::F32);
                Self::conv2d_bias_backward(x.clone(), bias, dy.clone())
            });
            Grads {
                x: gx,
                weight: Self::conv2d_weight_backward(x, weight, dy, o),
                bias: gb,
            }
        }
    }

    concrete_conv_backend!(LibTorch);
}

/// The checkpointed input and weight, the stride and the padding.
type ConvState = (NodeId, NodeId, usize, usize);

/// Registers the gradients for the output gradient `dy` of the parents that want one: `ids`
/// are the input's, the weight's and the bias's nodes (the bias's `None` without one).
fn register_grads<B: ConvKernels>(
    ids: [Option<NodeId>; 3],
    dy: FloatTensor<B>,
    state: ConvState,
    grads: &mut Gradients,
    checkpointer: &mut Checkpointer,
) {
    let [x_id, weight_id, bias_id] = ids;
    let (x_state, weight_state, stride, pad) = state;
    let x = checkpointer.retrieve_node_output::<FloatTensor<B>>(x_state);
    let weight = checkpointer.retrieve_node_output::<FloatTensor<B>>(weight_state);
    let g = B::backward(
        x,
        weight,
        dy,
        stride,
        pad,
        x_id.is_some(),
        bias_id.is_some(),
    );
    for (id, grad) in [(x_id, g.x), (weight_id, Some(g.weight)), (bias_id, g.bias)] {
        if let (Some(id), Some(grad)) = (id, grad) {
            grads.register::<B>(id, grad);
        }
    }
}

/// The recorded convolution's backward pass: parents (x, weight, bias).
#[derive(Debug)]
struct ConvStep;

impl<B: ConvKernels> Backward<B, 3> for ConvStep {
    type State = ConvState;

    fn backward(
        self,
        ops: Ops<Self::State, 3>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let ids = ops.parents.map(|p| p.map(|n| n.id));
        let dy = grads.consume::<B>(&ops.node);
        register_grads::<B>(ids, dy, ops.state, grads, checkpointer);
    }
}

/// As [`ConvStep`] without a bias: parents (x, weight).
#[derive(Debug)]
struct ConvStepNoBias;

impl<B: ConvKernels> Backward<B, 2> for ConvStepNoBias {
    type State = ConvState;

    fn backward(
        self,
        ops: Ops<Self::State, 2>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let [x, weight] = ops.parents.map(|p| p.map(|n| n.id));
        let dy = grads.consume::<B>(&ops.node);
        register_grads::<B>([x, weight, None], dy, ops.state, grads, checkpointer);
    }
}

impl<B: ConvKernels, C: CheckpointStrategy> ConvBackend for Autodiff<B, C> {
    fn syncbench_conv2d(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        stride: usize,
        pad: usize,
    ) -> FloatTensor<Self> {
        let forward = |x: &FloatTensor<Self>, w: &FloatTensor<Self>| {
            B::forward(
                x.primitive().clone(),
                w.primitive().clone(),
                None,
                stride,
                pad,
            )
        };
        match ConvStepNoBias
            .prepare::<C>([x.node(), weight.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(mut prep) => {
                let xs = prep.checkpoint(&x);
                let ws = prep.checkpoint(&weight);
                let y = forward(&x, &weight);
                prep.finish((xs, ws, stride, pad), y)
            }
            OpsKind::UnTracked(prep) => prep.finish(forward(&x, &weight)),
        }
    }

    fn syncbench_conv2d_bias(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        stride: usize,
        pad: usize,
    ) -> FloatTensor<Self> {
        let forward = |x: &FloatTensor<Self>, w: &FloatTensor<Self>, b: &FloatTensor<Self>| {
            B::forward(
                x.primitive().clone(),
                w.primitive().clone(),
                Some(b.primitive().clone()),
                stride,
                pad,
            )
        };
        match ConvStep
            .prepare::<C>([x.node(), weight.node(), bias.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(mut prep) => {
                let xs = prep.checkpoint(&x);
                let ws = prep.checkpoint(&weight);
                let y = forward(&x, &weight, &bias);
                prep.finish((xs, ws, stride, pad), y)
            }
            OpsKind::UnTracked(prep) => prep.finish(forward(&x, &weight, &bias)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::nn::conv::Conv2d;
    use burn::tensor::TensorData;

    fn values(len: usize, seed: u64) -> Vec<f32> {
        (0..len)
            .map(|i| (((i as u64 + 1) * (seed * 2 + 7919) % 1009) as f32 / 504.5) - 1.0)
            .collect()
    }

    fn close(name: &str, ours: Tensor<1>, burns: Tensor<1>) {
        let (a, b) = (
            ours.into_data().try_to_vec::<f32>().unwrap(),
            burns.into_data().try_to_vec::<f32>().unwrap(),
        );
        assert_eq!(a.len(), b.len(), "{name}");
        let scale = b.iter().fold(1e-3f32, |m, v| m.max(v.abs()));
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert!(
                (x - y).abs() <= 1e-4 * scale,
                "{name}[{i}]: ours {x}, burn's {y}"
            );
        }
    }

    /// Ours and burn's `Conv2d` with the same parameters give the same output and, through
    /// autodiff, the same gradients of the input, the weight and the bias.
    fn agrees(from: usize, to: usize, k: usize, stride: usize, bias: bool, side: usize) {
        let d = Device::flex().autodiff();
        let ours = Conv::new(from, to, k, stride, bias, &d);
        let burns: Conv2d = Conv2dConfig::new([from, to], [k, k])
            .with_stride([stride, stride])
            .with_padding(PaddingConfig2d::Explicit(k / 2, k / 2, k / 2, k / 2))
            .with_bias(bias)
            .init(&d);
        let burns = Conv2d {
            weight: Param::from_tensor(ours.weight.val().detach().require_grad()),
            bias: ours
                .bias
                .as_ref()
                .map(|b| Param::from_tensor(b.val().detach().require_grad())),
            ..burns
        };
        let n = 3;
        let x = || {
            Tensor::<4>::from_data(
                TensorData::new(values(n * from * side * side, 1), [n, from, side, side]),
                &d,
            )
            .require_grad()
        };
        let (xo, xb) = (x(), x());
        let (yo, yb) = (ours.forward(xo.clone()), burns.forward(xb.clone()));
        assert_eq!(yo.dims(), yb.dims());
        let r = Tensor::<4>::from_data(
            TensorData::new(values(yo.dims().iter().product(), 2), yo.dims()),
            &d,
        );
        let name = format!("{from}->{to} k{k} s{stride} bias {bias} side {side}");
        close(
            &format!("y of {name}"),
            yo.clone().flatten(0, 3),
            yb.clone().flatten(0, 3),
        );
        let (go, gb) = ((yo * r.clone()).sum().backward(), (yb * r).sum().backward());
        close(
            &format!("dx of {name}"),
            xo.grad(&go).unwrap().flatten(0, 3),
            xb.grad(&gb).unwrap().flatten(0, 3),
        );
        let (wo, wb) = (
            ours.weight.val().grad(&go).unwrap(),
            burns.weight.val().grad(&gb).unwrap(),
        );
        close(&format!("dw of {name}"), wo.flatten(0, 3), wb.flatten(0, 3));
        if bias {
            let bo = ours.bias.as_ref().unwrap().val().grad(&go).unwrap();
            let bb = burns.bias.as_ref().unwrap().val().grad(&gb).unwrap();
            close(&format!("db of {name}"), bo, bb);
        }
    }

    #[test]
    fn our_convolution_agrees_with_burns_through_autodiff() {
        agrees(3, 4, 3, 1, false, 6);
        agrees(3, 5, 5, 1, true, 7);
        agrees(4, 6, 3, 2, false, 8);
        agrees(4, 6, 1, 2, false, 8);
        agrees(6, 2, 1, 1, true, 3);
    }

    #[test]
    fn without_autodiff_it_is_the_forward_pass_alone() {
        let d = Device::flex();
        let c = Conv::new(2, 3, 3, 1, true, &d);
        let x = Tensor::<4>::from_data(TensorData::new(values(2 * 2 * 5 * 5, 3), [2, 2, 5, 5]), &d);
        assert_eq!(c.forward(x).dims(), [2, 3, 5, 5]);
    }
}
