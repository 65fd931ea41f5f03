//! What a CNN run trains: the network, its width, and the SGD settings the papers train with.

use crate::error::{CoreError, Result};
use serde::{Deserialize, Serialize};

/// The networks the papers train (each scaled by [`CnnConfig::width`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CnnModel {
    /// Hop's CNN. The Hop paper does not describe it beyond "CNN on CIFAR-10" on TensorFlow; we
    /// take TensorFlow's CIFAR-10 tutorial network (two 5x5 convolutions with pooling, then fully
    /// connected layers of 384 and 192 at width 64), the CNN a TensorFlow prototype of that time
    /// trained on CIFAR-10.
    HopCnn,
    /// DSSP's downsized AlexNet: 3 convolutional and 2 fully connected layers (DSSP §V).
    AlexnetSmall,
    /// ASAP's VGG with 11 layers (8 convolutions in 5 blocks, 3 fully connected; ASAP §6).
    Vgg11,
    /// A CIFAR ResNet of depth 6n+2 (He et al. 2016 §4.2) with n = 1: one residual block per
    /// stage. No paper trains it; the quick reproduction does, as the smallest member of the
    /// family, so that the default `make reproduce-all` fits its time budget on two cores.
    Resnet8,
    /// Depth 20 (n = 3): the smallest of He et al.'s CIFAR ResNets (20, 32, 44, 56, 110).
    Resnet20,
    /// Depth 32.
    Resnet32,
    /// Depth 56.
    Resnet56,
    /// Depth 110 (DSSP Fig 3(e), Table I).
    Resnet110,
    /// ResNet-50 (DSSP Fig 3(c), (d)): He et al.'s bottleneck network (stages of 3, 4, 6 and
    /// 3 blocks of 1x1, 3x3 and 1x1 convolutions, expansion 4) on CIFAR's 32x32 images as the
    /// common CIFAR adaptation has it (a 3x3 stem without max pooling, stage strides 1, 2, 2,
    /// 2; e.g. the pytorch-cifar repository): the DSSP paper names the network and not its CIFAR
    /// form, so this is our choice. Width 64 is that network (23.5 M parameters on CIFAR-10).
    Resnet50,
}

impl CnnModel {
    /// Every model, for `--help` and errors.
    pub const ALL: [CnnModel; 9] = [
        CnnModel::HopCnn,
        CnnModel::AlexnetSmall,
        CnnModel::Vgg11,
        CnnModel::Resnet8,
        CnnModel::Resnet20,
        CnnModel::Resnet32,
        CnnModel::Resnet56,
        CnnModel::Resnet110,
        CnnModel::Resnet50,
    ];

    /// The name configs and the command line use.
    pub fn name(self) -> &'static str {
        match self {
            CnnModel::HopCnn => "hop-cnn",
            CnnModel::AlexnetSmall => "alexnet-small",
            CnnModel::Vgg11 => "vgg11",
            CnnModel::Resnet8 => "resnet8",
            CnnModel::Resnet20 => "resnet20",
            CnnModel::Resnet32 => "resnet32",
            CnnModel::Resnet56 => "resnet56",
            CnnModel::Resnet110 => "resnet110",
            CnnModel::Resnet50 => "resnet50",
        }
    }

    /// Parses a name.
    ///
    /// # Errors
    /// [`CoreError::Config`] naming the known models.
    pub fn parse(s: &str) -> Result<CnnModel> {
        CnnModel::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                CoreError::Config(format!(
                    "unknown CNN model '{s}' (known: {})",
                    CnnModel::ALL.map(CnnModel::name).join(", ")
                ))
            })
    }

    /// The width of the paper's network: 16 for the CIFAR ResNets of depth 6n + 2, 64 for the
    /// others (ResNet-50's stem, VGG, AlexNet, Hop's CNN).
    pub fn paper_width(self) -> usize {
        if self.resnet_blocks().is_some() {
            16
        } else {
            64
        }
    }

    /// Residual blocks per stage of a CIFAR ResNet of depth 6n + 2 (`(depth - 2) / 6`), None
    /// for the others (ResNet-50 included: its stages differ).
    pub fn resnet_blocks(self) -> Option<usize> {
        match self {
            CnnModel::Resnet8 => Some(1),
            CnnModel::Resnet20 => Some(3),
            CnnModel::Resnet32 => Some(5),
            CnnModel::Resnet56 => Some(9),
            CnnModel::Resnet110 => Some(18),
            _ => None,
        }
    }
}

/// A CNN workload's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CnnConfig {
    /// The network.
    pub model: CnnModel,
    /// Channels of the first convolution; later layers scale from it as the paper's network
    /// does (the papers' networks: 64 for VGG, AlexNet, Hop's CNN and ResNet-50, 16 for the
    /// CIFAR ResNets of depth 6n + 2).
    pub width: usize,
    /// Units of the fully connected hidden layers (AlexNet, Hop's CNN, VGG).
    #[serde(default = "default_hidden")]
    pub hidden: usize,
    /// Images per worker per update.
    pub batch: usize,
    /// Learning rate.
    pub lr: f64,
    /// Momentum of each worker's SGD (0: plain SGD).
    #[serde(default)]
    pub momentum: f64,
    /// L2 weight decay added to the gradient.
    #[serde(default)]
    pub weight_decay: f64,
    /// Epochs (passes of all workers over the training images) at which the learning rate is
    /// multiplied by `lr_decay` (DSSP §V: 200 and 250 of 300).
    #[serde(default)]
    pub lr_decay_epochs: Vec<f64>,
    /// Factor applied at each of `lr_decay_epochs`.
    #[serde(default = "default_decay")]
    pub lr_decay: f64,
    /// Random crop (padding 4) and horizontal flip of every training image.
    #[serde(default)]
    pub augment: bool,
}

fn default_hidden() -> usize {
    384
}

fn default_decay() -> f64 {
    0.1
}

impl CnnConfig {
    /// A small configuration of `model` for tests and checks: width 4 for the ResNets and 8
    /// for the others, 32 hidden units, batch 16, SGD at rate 0.05 with momentum 0.9 and weight
    /// decay 5e-4, no decay schedule, no augmentation.
    pub fn quick(model: CnnModel) -> Self {
        let resnet = model.resnet_blocks().is_some() || model == CnnModel::Resnet50;
        CnnConfig {
            model,
            width: if resnet { 4 } else { 8 },
            hidden: 32,
            batch: 16,
            lr: 0.05,
            momentum: 0.9,
            weight_decay: 5e-4,
            lr_decay_epochs: vec![],
            lr_decay: 0.1,
            augment: false,
        }
    }

    /// Checks the settings.
    ///
    /// # Errors
    /// [`CoreError::Config`] naming the field out of range.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(CoreError::Config(format!("cnn.{what}")));
        if self.width == 0 || self.width > 1024 {
            return bad(&format!("width must be in 1..=1024, got {}", self.width));
        }
        if self.hidden == 0 {
            return bad("hidden must be >= 1");
        }
        if self.batch == 0 {
            return bad("batch must be >= 1");
        }
        if !(self.lr > 0.0 && self.lr.is_finite()) {
            return bad(&format!("lr must be > 0, got {}", self.lr));
        }
        if !(0.0..1.0).contains(&self.momentum) {
            return bad(&format!(
                "momentum must be in [0, 1), got {}",
                self.momentum
            ));
        }
        if !(self.weight_decay >= 0.0 && self.weight_decay.is_finite()) {
            return bad(&format!(
                "weight_decay must be >= 0, got {}",
                self.weight_decay
            ));
        }
        if !(self.lr_decay > 0.0 && self.lr_decay <= 1.0) {
            return bad(&format!(
                "lr_decay must be in (0, 1], got {}",
                self.lr_decay
            ));
        }
        if self.lr_decay_epochs.iter().any(|e| e.is_nan() || *e < 0.0) {
            return bad("lr_decay_epochs must be >= 0");
        }
        Ok(())
    }

    /// The learning rate after `epochs` passes over the data.
    pub fn lr_at(&self, epochs: f64) -> f64 {
        let passed = self
            .lr_decay_epochs
            .iter()
            .filter(|&&e| epochs >= e)
            .count();
        self.lr * self.lr_decay.powi(passed as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_known() {
        for m in CnnModel::ALL {
            assert_eq!(CnnModel::parse(m.name()).unwrap(), m);
        }
        let e = CnnModel::parse("resnet18").unwrap_err().to_string();
        assert!(
            e.contains("resnet18") && e.contains("resnet110") && e.contains("resnet50"),
            "{e}"
        );
    }

    #[test]
    fn the_rate_decays_at_the_stated_epochs() {
        let c = CnnConfig {
            model: CnnModel::Resnet20,
            width: 4,
            hidden: 8,
            batch: 8,
            lr: 0.05,
            momentum: 0.9,
            weight_decay: 5e-4,
            lr_decay_epochs: vec![200.0, 250.0],
            lr_decay: 0.1,
            augment: false,
        };
        c.validate().unwrap();
        assert_eq!(c.lr_at(199.9), 0.05);
        assert!((c.lr_at(200.0) - 0.005).abs() < 1e-12);
        assert!((c.lr_at(299.0) - 0.0005).abs() < 1e-12);
        let e = CnnConfig { momentum: 1.0, ..c }.validate().unwrap_err();
        assert!(e.to_string().contains("cnn.momentum"), "{e}");
    }
}
