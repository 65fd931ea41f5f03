//! The `cuda` feature: the one model definition on LibTorch gives the CPU backend's numbers
//! (bench_core::workload::agreement). LibTorch's CPU side (`torch-cpu`) runs here and in CI;
//! the CUDA tests need a GPU and are ignored (scripts/gpu-check.sh runs the same comparison on a
//! GPU machine through `syncbench devices --compare cuda:0`).
#![cfg(feature = "cuda")]

use bench_core::data::{ImageSet, ImageShape};
use bench_core::workload::{agreement, CnnConfig, CnnDevice, CnnModel, CnnWorkload, Workload};

fn agrees_for_every_model(device: CnnDevice) {
    for model in CnnModel::ALL {
        let rows = agreement::compare(model, device).unwrap();
        assert_eq!(rows.len(), 2);
        for r in rows {
            assert!(
                r.holds(device),
                "{model:?} on {device}, point {}: gradients differ by {:.2e} of the largest entry (allowed {:.2e}; the CPU's own sensitivity {:.2e}), losses {:?}",
                r.point,
                r.relative,
                r.allowed(device),
                r.sensitivity,
                r.losses
            );
        }
    }
}

#[test]
fn libtorch_on_the_cpu_gives_the_cpu_backends_numbers() {
    agrees_for_every_model(CnnDevice::TorchCpu);
}

/// Where the networks are well conditioned the two backends agree to float precision, far
/// inside the tolerance: the comparison is not passing on a loose bound.
#[test]
fn where_well_conditioned_libtorch_agrees_to_float_precision() {
    for model in [CnnModel::HopCnn, CnnModel::Vgg11, CnnModel::Resnet8] {
        for r in agreement::compare(model, CnnDevice::TorchCpu).unwrap() {
            assert!(
                r.relative < 2e-5,
                "{model:?} point {}: {:.2e}",
                r.point,
                r.relative
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU; scripts/gpu-check.sh checks the same on a GPU machine"]
fn a_cuda_gpu_gives_the_cpu_backends_numbers() {
    agrees_for_every_model(CnnDevice::Cuda(0));
}

fn twin(seed: u64) -> (ImageSet, ImageSet) {
    let mut all = ImageShape {
        images: 80,
        side: 16,
        classes: 10,
        noise: 0.15,
    }
    .generate(seed)
    .unwrap();
    let stats = all.channel_stats();
    all.normalise(&stats);
    (all.slice(0..64), all.slice(64..80))
}

fn resnet8() -> CnnConfig {
    CnnConfig::quick(CnnModel::Resnet8)
}

#[test]
#[ignore = "needs a CUDA GPU; scripts/gpu-check.sh trains on one"]
fn a_network_learns_on_a_cuda_gpu() {
    let (train, test) = twin(5);
    let w = CnnWorkload::new_on(resnet8(), train, test, 1, CnnDevice::Cuda(0)).unwrap();
    let mut m = w.initial_model();
    let (before, _) = w.evaluate(&m);
    for iter in 0..60 {
        let u = w.update(&m, 0, 1, iter);
        m.iter_mut().zip(u).for_each(|(p, u)| *p += u);
    }
    let (after, _) = w.evaluate(&m);
    assert!(after < 0.8 * before, "loss {before} -> {after}");
}

#[test]
fn a_missing_gpu_is_refused_by_name() {
    let (train, test) = twin(1);
    let n = CnnDevice::cuda_devices();
    let e = CnnWorkload::new_on(resnet8(), train, test, 1, CnnDevice::Cuda(n))
        .unwrap_err()
        .to_string();
    assert!(e.contains(&format!("cuda:{n}")), "{e}");
}
