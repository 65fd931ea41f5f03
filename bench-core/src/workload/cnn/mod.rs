//! Convolutional networks on images (feature `cnn`): the VGG, downsized AlexNet, CIFAR ResNets
//! and Hop's CNN that ASAP, DSSP and Hop train, built with burn on its pure-Rust CPU backend
//! (`flex`, one thread, so a seed gives the same bytes), with their parameters and updates as
//! one flat `f32` buffer so that every family's learning moves them unchanged.

mod alexnet;
mod config;
mod flat;
mod hop_cnn;
mod layers;
mod network;
mod norm;
mod resnet;
mod vgg;
mod workload;

pub use config::{CnnConfig, CnnModel};
pub use workload::{CnnWorkload, EVAL_BATCH};
