//! Between flex's tensors and plain `f32` slices, for the operations whose kernels work on
//! slices ([`super::conv_op`], [`super::norm_op`]).

use burn::backend::tensor::FloatTensor;
use burn::backend::{DispatchDevice, Flex};
use burn::prelude::*;
use burn::tensor::TensorData;
use std::borrow::Cow;

/// A flex tensor's floats, borrowed where they are already contiguous `f32`.
///
/// # Panics
/// On a tensor that is not `f32` (the networks are `f32` throughout).
pub fn floats(t: &FloatTensor<Flex>) -> Cow<'_, [f32]> {
    match t.as_slice::<f32>() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(
            t.to_contiguous()
                .as_slice::<f32>()
                .unwrap_or_else(|| {
                    panic!("a {:?} tensor where the CNN kernels take f32", t.dtype())
                })
                .to_vec(),
        ),
    }
}

/// A flex tensor of `shape` holding `values`.
pub fn tensor(values: Vec<f32>, shape: &[usize]) -> FloatTensor<Flex> {
    FloatTensor::<Flex>::from_data(TensorData::new(values, shape.to_vec()))
}

/// Whether `x` lives on flex, the backend that has our operations (on LibTorch the layers use
/// burn's own).
pub fn on_flex(x: &Tensor<4>) -> bool {
    on_flex_device(&x.device())
}

/// Whether `d` is flex (plain or under autodiff).
pub fn on_flex_device(d: &Device) -> bool {
    matches!(d.as_dispatch().clone().inner(), DispatchDevice::Flex(_))
}
