//! One type for every network, so the workload holds any of them.

use super::alexnet::AlexnetSmall;
use super::bottleneck::Resnet50;
use super::config::{CnnConfig, CnnModel};
use super::hop_cnn::HopCnn;
use super::resnet::Resnet;
use super::vgg::Vgg11;
use burn::prelude::*;

/// A network the papers train.
#[derive(Module, Debug)]
pub enum Network {
    /// Hop's CNN.
    Hop(HopCnn),
    /// DSSP's downsized AlexNet.
    Alexnet(AlexnetSmall),
    /// ASAP's VGG-11.
    Vgg(Vgg11),
    /// A CIFAR ResNet of depth 6n + 2.
    Resnet(Resnet),
    /// ResNet-50 (bottleneck blocks).
    Resnet50(Resnet50),
}

impl Network {
    /// The network `cfg` names, for `side`-pixel images of `classes` classes, on `device`.
    /// Building one also keeps the memory its steps free for the next ones
    /// ([`super::heap::keep_freed_memory`]).
    pub fn new(cfg: &CnnConfig, side: usize, classes: usize, device: &Device) -> Self {
        super::heap::keep_freed_memory();
        let (w, h) = (cfg.width, cfg.hidden);
        match cfg.model {
            CnnModel::HopCnn => Network::Hop(HopCnn::new(w, h, side, classes, device)),
            CnnModel::AlexnetSmall => {
                Network::Alexnet(AlexnetSmall::new(w, h, side, classes, device))
            }
            CnnModel::Vgg11 => Network::Vgg(Vgg11::new(w, h, side, classes, device)),
            CnnModel::Resnet50 => Network::Resnet50(Resnet50::new(w, classes, device)),
            m => Network::Resnet(Resnet::new(
                m.resnet_blocks().expect("every other model is a ResNet"),
                w,
                classes,
                device,
            )),
        }
    }

    /// Logits of `x` (`[batch, 3, side, side]`).
    pub fn forward(&self, x: Tensor<4>) -> Tensor<2> {
        match self {
            Network::Hop(n) => n.forward(x),
            Network::Alexnet(n) => n.forward(x),
            Network::Vgg(n) => n.forward(x),
            Network::Resnet(n) => n.forward(x),
            Network::Resnet50(n) => n.forward(x),
        }
    }
}
