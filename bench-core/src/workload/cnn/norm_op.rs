//! Batch normalisation ([`super::norm`]) as one burn operation on the CPU backend, so that its
//! passes are [`super::norm_kernels`]' few instead of the composed operations' many; a backend
//! extension as [`super::conv_op`] explains. Only flex has it: on LibTorch the layer composes
//! burn's tensor operations (LibTorch runs each as one kernel).

use super::flex_data::{floats, tensor as flex};
use super::norm_kernels::{self, NormShape, Stats};
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::autodiff::NodeId;
use burn::backend::tensor::FloatTensor;
use burn::backend::{backend_extension, Autodiff, Backend, Dispatch, Flex, TensorMetadata};
use burn::prelude::*;

/// `(x - mean) / sqrt(var + eps) * scale + shift` with the batch's per-channel statistics.
pub fn batch_norm(x: Tensor<4>, scale: Tensor<1>, shift: Tensor<1>) -> Tensor<4> {
    Tensor::from_dispatch(<Dispatch as NormBackend>::syncbench_batch_norm(
        x.into_dispatch(),
        scale.into_dispatch(),
        shift.into_dispatch(),
    ))
}

/// The normalisation as a backend operation.
#[backend_extension(Flex, Autodiff)]
pub trait NormBackend: Backend {
    /// `x` (`[n, c, h, w]`) normalised per channel, scaled by `scale` and shifted by `shift`
    /// (both `[c]`).
    fn syncbench_batch_norm(
        x: FloatTensor<Self>,
        scale: FloatTensor<Self>,
        shift: FloatTensor<Self>,
    ) -> FloatTensor<Self>;
}

fn shape_of(x: &FloatTensor<Flex>) -> NormShape {
    let d = x.shape();
    assert_eq!(d.num_dims(), 4, "batch norm of a {d:?} tensor");
    NormShape {
        n: d[0],
        c: d[1],
        hw: d[2] * d[3],
    }
}

/// The forward pass on flex, with the statistics the backward pass reuses.
fn forward(x: &FloatTensor<Flex>, scale: &[f32], shift: &[f32]) -> (FloatTensor<Flex>, Stats) {
    let (y, st) = norm_kernels::forward(&shape_of(x), &floats(x), scale, shift);
    (flex(y, &x.shape()), st)
}

impl NormBackend for Flex {
    fn syncbench_batch_norm(
        x: FloatTensor<Self>,
        scale: FloatTensor<Self>,
        shift: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        forward(&x, &floats(&scale), &floats(&shift)).0
    }
}

/// The recorded normalisation's backward pass: parents (x, scale, shift).
#[derive(Debug)]
struct NormStep;

impl Backward<Flex, 3> for NormStep {
    /// The checkpointed input, the scale, the batch statistics.
    type State = (NodeId, Vec<f32>, Stats);

    fn backward(
        self,
        ops: Ops<Self::State, 3>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let [node_x, node_scale, node_shift] = ops.parents;
        let dy = grads.consume::<Flex>(&ops.node);
        let (x_state, scale, st) = ops.state;
        let x = checkpointer.retrieve_node_output::<FloatTensor<Flex>>(x_state);
        let s = shape_of(&x);
        let g = norm_kernels::backward(&s, &floats(&x), &scale, &st, &floats(&dy));
        if let Some(node) = node_x {
            grads.register::<Flex>(node.id, flex(g.x, &x.shape()));
        }
        if let Some(node) = node_scale {
            grads.register::<Flex>(node.id, flex(g.scale, &[s.c]));
        }
        if let Some(node) = node_shift {
            grads.register::<Flex>(node.id, flex(g.shift, &[s.c]));
        }
    }
}

impl<C: CheckpointStrategy> NormBackend for Autodiff<Flex, C> {
    fn syncbench_batch_norm(
        x: FloatTensor<Self>,
        scale: FloatTensor<Self>,
        shift: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let (sc, sh) = (
            floats(scale.primitive()).into_owned(),
            floats(shift.primitive()).into_owned(),
        );
        match NormStep
            .prepare::<C>([x.node(), scale.node(), shift.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(mut prep) => {
                let xs = prep.checkpoint(&x);
                let (y, st) = forward(x.primitive(), &sc, &sh);
                prep.finish((xs, sc, st), y)
            }
            OpsKind::UnTracked(prep) => prep.finish(forward(x.primitive(), &sc, &sh).0),
        }
    }
}
