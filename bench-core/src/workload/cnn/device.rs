//! Where a CNN computes: burn's pure-Rust CPU backend (`cpu`, the default and the one that gives
//! the same bytes for a seed), a CUDA GPU through burn's LibTorch backend (`cuda:N`, feature
//! `cuda`), or LibTorch on the CPU (`torch-cpu`, feature `cuda`: the same kernels' host side,
//! which checks the GPU build's path on a machine without a GPU).
//!
//! Why LibTorch and not burn's own CUDA backend: burn 0.22's CUDA backend builds cubecl-llvm,
//! whose build script downloads an LLVM bundle from GitHub (no registry has it), and burn
//! 0.21's, which builds, ran 0.10x-0.14x PyTorch eager on an H200. LibTorch runs
//! PyTorch's own kernels (cuDNN), and burn's dispatch runs the one model definition on it
//! unchanged. The libtorch is an installed PyTorch's (docs/cnn-and-gpu.md).
//!
//! The choice is always parsed, so a build without the feature still reads it and refuses a
//! device it cannot use by name.

use crate::error::{CoreError, Result};
use std::fmt;
use std::str::FromStr;

/// A device a CNN workload runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CnnDevice {
    /// burn's flex backend on the CPU, one thread: seeded runs give the same bytes.
    #[default]
    Cpu,
    /// CUDA GPU `N` through LibTorch (feature `cuda`).
    Cuda(usize),
    /// LibTorch on the CPU (feature `cuda`).
    TorchCpu,
}

impl CnnDevice {
    /// Whether this build can use the device at all (it may still be absent on the machine:
    /// see [`CnnDevice::check`]).
    pub fn built(self) -> bool {
        match self {
            CnnDevice::Cpu => true,
            CnnDevice::Cuda(_) | CnnDevice::TorchCpu => cfg!(feature = "cuda"),
        }
    }

    /// Whether two runs with the same seed give the same bytes on this device.
    pub fn deterministic(self) -> bool {
        self == CnnDevice::Cpu
    }

    /// Checks that this build has the device's backend and this machine has the device.
    ///
    /// # Errors
    /// [`CoreError::Config`] naming the device asked for: a build without the `cuda` feature,
    /// or (with it) no CUDA device of that index.
    pub fn check(self) -> Result<()> {
        self.check_built()?;
        #[cfg(feature = "cuda")]
        if let CnnDevice::Cuda(n) = self {
            let count = Self::cuda_devices();
            if n >= count {
                return Err(CoreError::Config(format!(
                    "device {self}: LibTorch sees {count} CUDA device(s) on this machine{}",
                    if count == 0 {
                        " (no GPU, no driver, or a PyTorch without CUDA)"
                    } else {
                        ""
                    }
                )));
            }
        }
        Ok(())
    }

    /// CUDA devices LibTorch sees on this machine (0 without the `cuda` feature).
    pub fn cuda_devices() -> usize {
        #[cfg(feature = "cuda")]
        {
            usize::try_from(tch::Cuda::device_count()).unwrap_or(0)
        }
        #[cfg(not(feature = "cuda"))]
        {
            0
        }
    }

    /// Checks that this build has the device's backend (not whether the machine has the
    /// device).
    ///
    /// # Errors
    /// [`CoreError::Config`] naming the device, for a LibTorch device without the `cuda`
    /// feature.
    pub fn check_built(self) -> Result<()> {
        if self.built() {
            return Ok(());
        }
        Err(CoreError::Config(format!(
            "device {self}: this build has no LibTorch backend; build with the `cuda` feature over an installed PyTorch (eval \"$(scripts/torch-env.sh)\"; cargo build --release --features experiments/cuda; or make gpu-build: docs/cnn-and-gpu.md), or use --device cpu"
        )))
    }

    /// A line for manifests: the device and its backend.
    pub fn describe(self) -> String {
        match self {
            CnnDevice::Cpu => "cpu (burn 0.22 flex backend with syncbench's convolution and batch-norm kernels, one thread)".into(),
            CnnDevice::Cuda(n) => format!(
                "cuda:{n} (burn 0.22 LibTorch backend{}; not bitwise reproducible: a seed does not fix the bytes)",
                cudnn()
            ),
            CnnDevice::TorchCpu => "torch-cpu (burn 0.22 LibTorch backend on the CPU; its threads make it not bitwise reproducible)".into(),
        }
    }

    /// burn's device for it.
    #[cfg(feature = "cnn")]
    pub(crate) fn burn(self) -> Result<burn::prelude::Device> {
        self.check()?;
        Ok(match self {
            CnnDevice::Cpu => burn::prelude::Device::flex(),
            #[cfg(feature = "cuda")]
            #[allow(deprecated)]
            // burn 0.22 deprecates burn-tch; see the module's docs for why
            CnnDevice::Cuda(n) => burn::prelude::Device::libtorch_cuda(n),
            #[cfg(feature = "cuda")]
            #[allow(deprecated)]
            CnnDevice::TorchCpu => burn::prelude::Device::libtorch(),
            #[cfg(not(feature = "cuda"))]
            _ => unreachable!("check() refuses LibTorch devices without the cuda feature"),
        })
    }
}

#[cfg(feature = "cuda")]
fn cudnn() -> &'static str {
    if tch::Cuda::cudnn_is_available() {
        ", cuDNN"
    } else {
        ", no cuDNN"
    }
}

#[cfg(not(feature = "cuda"))]
fn cudnn() -> &'static str {
    ""
}

impl fmt::Display for CnnDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CnnDevice::Cpu => f.write_str("cpu"),
            CnnDevice::Cuda(n) => write!(f, "cuda:{n}"),
            CnnDevice::TorchCpu => f.write_str("torch-cpu"),
        }
    }
}

impl FromStr for CnnDevice {
    type Err = CoreError;

    /// `cpu`, `cuda:N` (`cuda` is `cuda:0`) or `torch-cpu`.
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            CoreError::Config(format!(
                "unknown device '{s}': cpu, cuda:N (a GPU index, e.g. cuda:0) or torch-cpu"
            ))
        };
        match s.trim() {
            "cpu" => Ok(CnnDevice::Cpu),
            "torch-cpu" => Ok(CnnDevice::TorchCpu),
            "cuda" => Ok(CnnDevice::Cuda(0)),
            t => {
                let n = t.strip_prefix("cuda:").ok_or_else(bad)?;
                n.parse().map(CnnDevice::Cuda).map_err(|_| bad())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_every_form() {
        for (text, d) in [
            ("cpu", CnnDevice::Cpu),
            ("cuda:0", CnnDevice::Cuda(0)),
            ("cuda:3", CnnDevice::Cuda(3)),
            ("torch-cpu", CnnDevice::TorchCpu),
        ] {
            assert_eq!(text.parse::<CnnDevice>().unwrap(), d);
            assert_eq!(d.to_string(), text);
        }
        assert_eq!("cuda".parse::<CnnDevice>().unwrap(), CnnDevice::Cuda(0));
    }

    #[test]
    fn refuses_unknown_devices_by_name() {
        for bad in ["gpu", "cuda:", "cuda:x", "cuda:-1", "CPU", ""] {
            let e = bad.parse::<CnnDevice>().unwrap_err().to_string();
            assert!(e.contains(&format!("'{bad}'")), "{e}");
            assert!(e.contains("cuda:N"), "{e}");
        }
    }

    #[test]
    fn the_cpu_is_always_there_and_the_others_need_the_feature() {
        assert!(CnnDevice::Cpu.check().is_ok());
        assert!(CnnDevice::Cpu.deterministic());
        assert!(!CnnDevice::Cuda(0).deterministic());
        if !cfg!(feature = "cuda") {
            for d in [CnnDevice::Cuda(0), CnnDevice::TorchCpu] {
                let e = d.check().unwrap_err().to_string();
                assert!(e.contains(&d.to_string()), "{e}");
                assert!(e.contains("`cuda` feature"), "{e}");
            }
        } else {
            assert!(CnnDevice::TorchCpu.check().is_ok());
            // No machine has a GPU of index 4096: the error names the device and the count.
            let e = CnnDevice::Cuda(4096).check().unwrap_err().to_string();
            assert!(e.contains("cuda:4096"), "{e}");
            assert!(e.contains("CUDA device(s)"), "{e}");
        }
    }
}
