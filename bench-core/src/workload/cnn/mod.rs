//! Convolutional networks on images: the VGG, downsized AlexNet, CIFAR ResNets (ResNet-50
//! too) and Hop's CNN that ASAP, DSSP and Hop train. Their settings ([`CnnConfig`]) are always built, so every
//! build reads CNN configurations; the networks themselves (feature `cnn`) are built with burn
//! on its pure-Rust CPU backend (`flex`, one thread, so a seed gives the same bytes) or, with
//! the `cuda` feature, on LibTorch ([`CnnDevice`]), with
//! their parameters and updates as one flat `f32` buffer so that every family's learning moves
//! them unchanged.

#[cfg(feature = "cnn")]
pub mod agreement;
#[cfg(feature = "cnn")]
mod alexnet;
#[cfg(feature = "cnn")]
mod bottleneck;
mod config;
#[cfg(feature = "cnn")]
pub mod conv_kernels;
#[cfg(feature = "cnn")]
// burn 0.22 deprecates burn-tch, whose LibTorch backend the `cuda` feature's convolution names
// (device.rs says why we use it); the backend extension's generated code names it too.
#[allow(deprecated)]
mod conv_op;
#[cfg(feature = "cnn")]
pub mod cpu_level;
#[cfg(feature = "cnn")]
mod dense;
mod device;
#[cfg(feature = "cnn")]
mod flat;
#[cfg(feature = "cnn")]
mod flex_data;
#[cfg(feature = "cnn")]
mod heap;
#[cfg(feature = "cnn")]
mod hop_cnn;
#[cfg(feature = "cnn")]
mod layers;
#[cfg(feature = "cnn")]
mod loss;
#[cfg(feature = "cnn")]
pub mod matmul;
#[cfg(feature = "cnn")]
mod network;
#[cfg(feature = "cnn")]
mod norm;
#[cfg(feature = "cnn")]
mod norm_kernels;
#[cfg(feature = "cnn")]
mod norm_op;
#[cfg(feature = "cnn")]
mod pool_op;
#[cfg(feature = "cnn")]
mod resnet;
#[cfg(feature = "cnn")]
mod simd;
#[cfg(feature = "cnn")]
mod vgg;
#[cfg(feature = "cnn")]
mod workload;

pub use config::{CnnConfig, CnnModel};
pub use device::CnnDevice;
#[cfg(feature = "cnn")]
pub use workload::{CnnWorkload, StepTimes, EVAL_BATCH};
