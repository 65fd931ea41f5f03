//! `syncbench devices`: the CNN devices this build and machine offer, and (`--compare`) whether
//! one of them computes what the CPU backend computes: for each quick model, the gradient of two
//! SGD updates and the evaluation on both devices, from the same seed. scripts/gpu-check.sh
//! runs it on a GPU machine (no cargo there, so the `#[ignore]`d GPU tests cannot run).

use anyhow::{bail, Result};
use bench_core::workload::CnnDevice;

/// Flags of `syncbench devices`.
#[derive(Debug, Clone, clap::Args)]
pub struct DevicesArgs {
    /// Compare this device (cuda:N or torch-cpu) with the CPU backend, every model's gradients
    /// and evaluation (bench_core::workload::agreement); exit 1 when they disagree.
    #[arg(long)]
    pub compare: Option<String>,
}

/// `syncbench devices`.
///
/// # Errors
/// An unknown or absent device, or a comparison that fails.
pub fn run(a: &DevicesArgs) -> Result<()> {
    println!(
        "cpu: burn 0.22 flex backend (always)\ntorch-cpu: {}\ncuda: {} device(s) visible to LibTorch{}",
        if CnnDevice::TorchCpu.built() {
            "LibTorch on the CPU"
        } else {
            "not in this build (the `cuda` feature)"
        },
        CnnDevice::cuda_devices(),
        if cfg!(feature = "cuda") {
            ""
        } else {
            " (this build has no LibTorch backend: the `cuda` feature)"
        }
    );
    let Some(text) = &a.compare else {
        return Ok(());
    };
    let device: CnnDevice = text.parse()?;
    device.check()?;
    compare(device)
}

#[cfg(feature = "cnn")]
fn compare(device: CnnDevice) -> Result<()> {
    use bench_core::workload::{agreement, CnnModel};
    println!("\n| model | parameters | point | largest gradient entry | relative difference | CPU's own sensitivity | allowed | evaluation loss cpu / {device} |\n|---|---|---|---|---|---|---|---|");
    let mut failed = Vec::new();
    for model in CnnModel::ALL {
        for r in agreement::compare(model, device)? {
            println!(
                "| {} | {} | {} | {:.4e} | {:.2e} | {:.2e} | {:.2e} | {} |",
                model.name(),
                r.parameters,
                if r.point == 0 {
                    "initial"
                } else {
                    "after one update"
                },
                r.scale,
                r.relative,
                r.sensitivity,
                r.allowed(device),
                r.losses
                    .map_or(String::new(), |(a, b)| format!("{a:.5} / {b:.5}"))
            );
            if !r.holds(device) {
                failed.push(format!(
                    "{} point {} ({:.2e})",
                    model.name(),
                    r.point,
                    r.relative
                ));
            }
        }
    }
    if !failed.is_empty() {
        bail!(
            "{device} disagrees with the CPU backend: {}",
            failed.join(", ")
        );
    }
    println!(
        "\n{device} agrees with the CPU backend for every model (bench_core::workload::agreement)"
    );
    Ok(())
}

#[cfg(not(feature = "cnn"))]
fn compare(_: CnnDevice) -> Result<()> {
    bail!(crate::workloads::cnn::NO_CNN)
}
