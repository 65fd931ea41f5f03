//! Whether a device computes what the CPU backend computes, for one model: the gradients at the
//! same parameters (the initial ones, and those after one SGD update) and the evaluation after
//! it. What `syncbench devices --compare` prints and the `cuda` feature's tests assert; on a
//! GPU machine scripts/gpu-check.sh runs it, since the `#[ignore]`d GPU tests need cargo.
//!
//! A device agrees when its largest gradient difference, relative to the largest gradient
//! entry, is within [`tolerance`] or within three times the larger of the two backends' own
//! change when each parameter moves by a relative 1e-6 (float noise; signs fixed per entry):
//! where a deep network's batch statistics of nearly constant channels divide by sqrt(1e-5),
//! any two summation orders differ by that much, and a wrong kernel differs by the gradient's
//! own size. The CPU backend's fused batch norm sums its statistics in f64 and barely moves
//! (2.7e-5 for ResNet-56); LibTorch's, composed from f32 tensor operations, moves as the CPU
//! backend's composed one did (0.3% to 4% for the deep ResNets), so the device's own change is
//! measured too.

use super::config::{CnnConfig, CnnModel};
use super::device::CnnDevice;
use super::workload::CnnWorkload;
use crate::data::ImageShape;
use crate::error::Result;
use crate::learning::Workload;

/// One gradient compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Agreement {
    /// The network.
    pub model: CnnModel,
    /// Its parameter count.
    pub parameters: usize,
    /// 0: the initial parameters; 1: after one SGD update.
    pub point: u64,
    /// The largest entry of the CPU backend's gradient.
    pub scale: f32,
    /// The largest difference between the two gradients, over `scale`.
    pub relative: f32,
    /// The larger of the two backends' own largest change, over `scale`, for parameters each
    /// scaled by 1 +- 1e-6 (signs fixed per entry).
    pub sensitivity: f32,
    /// The evaluation loss after the update on the CPU and on the device (point 1 only).
    pub losses: Option<(f64, f64)>,
}

impl Agreement {
    /// The relative difference allowed here (see the module's docs).
    pub fn allowed(&self, device: CnnDevice) -> f32 {
        tolerance(device).max(3.0 * self.sensitivity)
    }

    /// Whether the device agrees: the gradient within [`Self::allowed`], the evaluation loss
    /// within [`tolerance`] (a mean over many images, well conditioned).
    pub fn holds(&self, device: CnnDevice) -> bool {
        let allowed = self.allowed(device);
        let losses = self.losses.is_none_or(|(a, b)| {
            (a - b).abs() <= f64::from(tolerance(device)) * a.abs().max(1.0) && b.is_finite()
        });
        self.scale > 0.0 && self.relative.is_finite() && self.relative <= allowed && losses
    }
}

/// The relative gradient difference a device may always show: 1e-3 (float sums in another
/// order), 2e-2 on a GPU, whose convolutions run in TF32 by default (10-bit mantissa, as
/// PyTorch's `torch.backends.cudnn.allow_tf32`).
pub fn tolerance(device: CnnDevice) -> f32 {
    match device {
        CnnDevice::Cuda(_) => 2e-2,
        _ => 1e-3,
    }
}

/// Compares `model` ([`CnnConfig::quick`], augmented) on `device` with the CPU backend, on a
/// seeded 16-pixel image twin (32-pixel for ResNet-50, whose last stage would be 2x2).
///
/// # Errors
/// A device this build or machine lacks, or an image set the network refuses.
pub fn compare(model: CnnModel, device: CnnDevice) -> Result<Vec<Agreement>> {
    let side = if model == CnnModel::Resnet50 { 32 } else { 16 };
    let mut all = ImageShape {
        images: 80,
        side,
        classes: 10,
        noise: 0.15,
    }
    .generate(3)?;
    let stats = all.channel_stats();
    all.normalise(&stats);
    let (train, test) = (all.slice(0..64), all.slice(64..80));
    // With augmentation, so the batch assembly's crops and flips are compared too.
    let cfg = CnnConfig {
        augment: true,
        ..CnnConfig::quick(model)
    };
    let cpu = CnnWorkload::new(cfg.clone(), train.clone(), test.clone(), 4)?;
    let other = CnnWorkload::new_on(cfg, train, test, 4, device)?;
    let mut p = cpu.initial_model();
    let mut out = Vec::new();
    for point in 0..2 {
        let ga = cpu.gradient(&p, 1, 2, point);
        let gb = other.gradient(&p, 1, 2, point);
        // Signs drawn per entry: a uniform scale would vanish under batch normalisation.
        let nudged: Vec<f32> = p
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let sign = if (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 63 == 0 {
                    1.0
                } else {
                    -1.0
                };
                x * (1.0 + sign * 1e-6)
            })
            .collect();
        let gn = cpu.gradient(&nudged, 1, 2, point);
        let gn_other = other.gradient(&nudged, 1, 2, point);
        let scale = ga.iter().fold(0f32, |s, v| s.max(v.abs()));
        let largest = |g: &[f32]| {
            ga.iter()
                .zip(g)
                .fold(0f32, |s, (x, y)| s.max((x - y).abs()))
                / scale.max(f32::MIN_POSITIVE)
        };
        // The device's own change, against its own gradient.
        let own = |g: &[f32], nudged: &[f32]| {
            g.iter()
                .zip(nudged)
                .fold(0f32, |s, (x, y)| s.max((x - y).abs()))
                / scale.max(f32::MIN_POSITIVE)
        };
        let losses = if point == 1 {
            Some((cpu.evaluate(&p).0, other.evaluate(&p).0))
        } else {
            None
        };
        out.push(Agreement {
            model,
            parameters: cpu.dim(),
            point,
            scale,
            relative: if gb.iter().all(|v| v.is_finite()) {
                largest(&gb)
            } else {
                f32::NAN
            },
            sensitivity: largest(&gn).max(own(&gb, &gn_other)),
            losses,
        });
        let u = cpu.update(&p, 1, 2, point);
        p.iter_mut().zip(u).for_each(|(w, u)| *w += u);
    }
    Ok(out)
}
