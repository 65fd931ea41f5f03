//! 2x2 max pooling with stride 2 as one burn operation on the CPU backend: flex's pooling is a
//! general 3-D window loop that recomputes each window's bounds and keeps 64-bit indices (about
//! a fifth of Hop's CNN's training step), while here each output is the larger of two pairs and
//! the gradient goes back to the one input that won. Windows, ties and NaNs are resolved as
//! flex does (row-major within the window; the first of equal values wins; a NaN always wins,
//! the last NaN of a window), so the results are flex's to the bit. A backend extension as
//! [`super::conv_op`] explains; on LibTorch the layer uses burn's pooling.

use super::flex_data::{floats, tensor};
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::tensor::FloatTensor;
use burn::backend::{backend_extension, Autodiff, Backend, Dispatch, Flex, TensorMetadata};
use burn::prelude::*;

/// `[b, c, h, w]` to `[b, c, h / 2, w / 2]`, each output the largest of its 2x2 window.
pub fn max_pool(x: Tensor<4>) -> Tensor<4> {
    Tensor::from_dispatch(<Dispatch as PoolBackend>::syncbench_max_pool2(
        x.into_dispatch(),
    ))
}

/// The pooling as a backend operation.
#[backend_extension(Flex, Autodiff)]
pub trait PoolBackend: Backend {
    /// 2x2 max pooling with stride 2 of `x` (`[b, c, h, w]`, `h, w >= 2`).
    fn syncbench_max_pool2(x: FloatTensor<Self>) -> FloatTensor<Self>;
}

/// The pooled planes of `x` (`planes` planes of `h` x `w`) and, for each output, the index
/// within its plane of the input that won.
///
/// # Panics
/// When `x` does not hold `planes * h * w` values or a side is below 2.
pub fn forward(planes: usize, h: usize, w: usize, x: &[f32]) -> (Vec<f32>, Vec<u32>) {
    assert!(
        h >= 2 && w >= 2 && x.len() == planes * h * w,
        "max pooling {planes} planes of {h}x{w} from {} values",
        x.len()
    );
    let (ho, wo) = (h / 2, w / 2);
    let mut y = Vec::with_capacity(planes * ho * wo);
    let mut at = Vec::with_capacity(planes * ho * wo);
    for plane in x.chunks_exact(h * w) {
        for oy in 0..ho {
            let (top, bottom) = (2 * oy * w, (2 * oy + 1) * w);
            for ox in 0..wo {
                let mut best = (plane[top + 2 * ox], top + 2 * ox);
                for i in [top + 2 * ox + 1, bottom + 2 * ox, bottom + 2 * ox + 1] {
                    let v = plane[i];
                    if v > best.0 || v.is_nan() {
                        best = (v, i);
                    }
                }
                y.push(best.0);
                at.push(best.1 as u32);
            }
        }
    }
    (y, at)
}

/// The gradient of [`forward`]: each output's gradient added to the input that won.
///
/// # Panics
/// When `dy` and `at` differ in length or do not fill `planes` pooled planes.
pub fn backward(planes: usize, h: usize, w: usize, dy: &[f32], at: &[u32]) -> Vec<f32> {
    let per = (h / 2) * (w / 2);
    assert!(
        dy.len() == at.len() && dy.len() == planes * per,
        "max pooling's gradient: {} values, {} indices, {planes} planes",
        dy.len(),
        at.len()
    );
    let mut dx = vec![0.0f32; planes * h * w];
    for ((plane, d), i) in dx
        .chunks_exact_mut(h * w)
        .zip(dy.chunks_exact(per))
        .zip(at.chunks_exact(per))
    {
        for (g, &i) in d.iter().zip(i) {
            plane[i as usize] += g;
        }
    }
    dx
}

/// `[b, c, h, w]` as (planes, h, w).
fn planes_of(x: &FloatTensor<Flex>) -> (usize, usize, usize) {
    let d = x.shape();
    assert_eq!(d.num_dims(), 4, "max pooling of a {d:?} tensor");
    (d[0] * d[1], d[2], d[3])
}

fn pooled(x: &FloatTensor<Flex>) -> (FloatTensor<Flex>, Vec<u32>) {
    let (planes, h, w) = planes_of(x);
    let (y, at) = forward(planes, h, w, &floats(x));
    let d = x.shape();
    (tensor(y, &[d[0], d[1], h / 2, w / 2]), at)
}

impl PoolBackend for Flex {
    fn syncbench_max_pool2(x: FloatTensor<Self>) -> FloatTensor<Self> {
        pooled(&x).0
    }
}

/// The recorded pooling's backward pass: the input's shape and the winners.
#[derive(Debug)]
struct PoolStep;

impl Backward<Flex, 1> for PoolStep {
    /// The input's `[b, c, h, w]` and each output's winning index.
    type State = ([usize; 4], Vec<u32>);

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [node_x] = ops.parents;
        let dy = grads.consume::<Flex>(&ops.node);
        let ([b, c, h, w], at) = ops.state;
        if let Some(node) = node_x {
            let dx = backward(b * c, h, w, &floats(&dy), &at);
            grads.register::<Flex>(node.id, tensor(dx, &[b, c, h, w]));
        }
    }
}

impl<C: CheckpointStrategy> PoolBackend for Autodiff<Flex, C> {
    fn syncbench_max_pool2(x: FloatTensor<Self>) -> FloatTensor<Self> {
        let (y, at) = pooled(x.primitive());
        match PoolStep.prepare::<C>([x.node()]).compute_bound().stateful() {
            OpsKind::Tracked(prep) => {
                let d = x.primitive().shape();
                prep.finish(([d[0], d[1], d[2], d[3]], at), y)
            }
            OpsKind::UnTracked(prep) => prep.finish(y),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::nn::pool::MaxPool2dConfig;
    use burn::tensor::TensorData;

    /// Mostly ties, as after a ReLU (0, 0, 1, repeated), and two NaNs in the first window of
    /// a 7-wide plane (offsets 7 and 8).
    fn values(len: usize) -> Vec<f32> {
        (0..len)
            .map(|i| match i {
                7 | 8 => f32::NAN,
                _ => ((i % 3) as f32 - 1.0).max(0.0),
            })
            .collect()
    }

    fn bits(t: Tensor<4>) -> Vec<u32> {
        t.into_data()
            .try_to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect()
    }

    /// Ours and burn's pooling give the same bits forward and, through autodiff, backward.
    #[test]
    fn ours_is_burns_pooling_to_the_bit() {
        let d = Device::flex().autodiff();
        let shape = [2, 3, 7, 7];
        let x = || {
            Tensor::<4>::from_data(TensorData::new(values(2 * 3 * 7 * 7), shape), &d).require_grad()
        };
        let (xo, xb) = (x(), x());
        let yo = max_pool(xo.clone());
        let yb = MaxPool2dConfig::new([2, 2])
            .with_strides([2, 2])
            .init()
            .forward(xb.clone());
        assert_eq!(yo.dims(), [2, 3, 3, 3]);
        assert_eq!(bits(yo.clone()), bits(yb.clone()));
        assert!(yo.clone().into_data().try_to_vec::<f32>().unwrap()[0].is_nan());
        let r = (0..54).map(|i| i as f32 * 0.25 - 3.0).collect::<Vec<_>>();
        let r = Tensor::<4>::from_data(TensorData::new(r, [2, 3, 3, 3]), &d);
        let (go, gb) = ((yo * r.clone()).sum().backward(), (yb * r).sum().backward());
        assert_eq!(bits(xo.grad(&go).unwrap()), bits(xb.grad(&gb).unwrap()));
    }

    #[test]
    fn ties_go_to_the_first_and_a_nan_wins() {
        let (y, at) = forward(1, 2, 2, &[1.0, 3.0, 3.0, 2.0]);
        assert_eq!((y, at), (vec![3.0], vec![1]));
        let (y, at) = forward(1, 2, 2, &[f32::NAN, 3.0, f32::NAN, 2.0]);
        assert!(y[0].is_nan());
        assert_eq!(at, vec![2]);
        assert_eq!(backward(1, 2, 2, &[5.0], &[2]), vec![0.0, 0.0, 5.0, 0.0]);
    }
}
