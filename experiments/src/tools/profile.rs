//! `syncbench profile`: measures a CNN's training step on a device (warm-up, then timed steps
//! split into forward, backward and optimizer) and writes a time profile the simulator reads
//! (`bench_core::driver::TimeProfile`: seconds per batch, bytes per update, where measured).

use anyhow::{bail, Context, Result};
use bench_core::workload::{CnnDevice, CnnModel};
use std::path::PathBuf;

/// Flags of `syncbench profile`.
#[derive(Debug, Clone, clap::Args)]
pub struct ProfileArgs {
    /// The network: hop-cnn, alexnet-small, vgg11, resnet8, resnet20, resnet32, resnet56, resnet110,
    /// resnet50.
    #[arg(long)]
    pub model: String,
    /// Where to run: `cpu` (burn's pure-Rust backend, one thread), `cuda:N` (GPU N through
    /// LibTorch; the `cuda` feature) or `torch-cpu` (LibTorch on the CPU).
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// What the device is, for the profile's source line (scripts/gpu-check.sh passes the
    /// GPU's name, driver, CUDA and PyTorch versions); the CPU's model is read by itself.
    #[arg(long)]
    pub device_note: Option<String>,
    /// Images per step.
    #[arg(long, default_value_t = 128)]
    pub batch: usize,
    /// Channels of the first convolution (default: the paper's network, 16 for the CIFAR
    /// ResNets of depth 6n + 2 and 64 for the others, ResNet-50 included).
    #[arg(long)]
    pub width: Option<usize>,
    /// Units of the fully connected hidden layers.
    #[arg(long, default_value_t = 384)]
    pub hidden: usize,
    /// Image width and height.
    #[arg(long, default_value_t = 32)]
    pub side: usize,
    /// Classes (10: CIFAR-10, 100: CIFAR-100).
    #[arg(long, default_value_t = 10)]
    pub classes: usize,
    /// Untimed steps first.
    #[arg(long, default_value_t = 2)]
    pub warmup: usize,
    /// Timed steps.
    #[arg(long, default_value_t = 5)]
    pub steps: usize,
    /// Write the profile here (TOML); printed to stdout when absent.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Measured seconds of the timed steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Parameters of the network.
    pub parameters: usize,
    /// Seconds per step, each timed step.
    pub totals: Vec<f64>,
    /// Median seconds of the forward, backward and optimizer parts.
    pub parts: [f64; 3],
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Checks the flags.
///
/// # Errors
/// An unknown model, a device this build cannot use, or a zero batch or step count.
pub fn validate(a: &ProfileArgs) -> Result<(CnnModel, CnnDevice)> {
    let model = CnnModel::parse(&a.model)?;
    let device: CnnDevice = a.device.parse()?;
    device.check()?;
    if a.batch == 0 || a.steps == 0 {
        bail!("--batch and --steps must be >= 1");
    }
    Ok((model, device))
}

#[cfg(feature = "cnn")]
/// Runs the warm-up and timed steps.
///
/// # Errors
/// Bad flags (see [`validate`]) or settings the network refuses.
pub fn measure(a: &ProfileArgs) -> Result<Measured> {
    use bench_core::data::ImageShape;
    use bench_core::workload::{CnnConfig, CnnWorkload, Workload};
    let (model, device) = validate(a)?;
    let cfg = CnnConfig {
        model,
        width: a.width.unwrap_or(model.paper_width()),
        hidden: a.hidden,
        batch: a.batch,
        lr: 0.01,
        momentum: 0.9,
        weight_decay: 5e-4,
        lr_decay_epochs: vec![],
        lr_decay: 0.1,
        augment: true,
    };
    let mut images = ImageShape {
        images: a.batch * 2 + 1,
        side: a.side,
        classes: a.classes,
        noise: 0.15,
    }
    .generate(1)?;
    let stats = images.channel_stats();
    images.normalise(&stats);
    let n = images.len();
    let w = CnnWorkload::new_on(
        cfg,
        images.slice(0..n - 1),
        images.slice(n - 1..n),
        1,
        device,
    )?;
    let m = w.initial_model();
    for i in 0..a.warmup {
        w.timed_step(&m, i as u64);
    }
    let times: Vec<_> = (0..a.steps)
        .map(|i| w.timed_step(&m, (a.warmup + i) as u64))
        .collect();
    let part = |f: fn(&bench_core::workload::StepTimes) -> f64| {
        median(&mut times.iter().map(f).collect::<Vec<_>>())
    };
    Ok(Measured {
        parameters: w.dim(),
        totals: times.iter().map(|t| t.total()).collect(),
        parts: [
            part(|t| t.forward),
            part(|t| t.backward),
            part(|t| t.optimizer),
        ],
    })
}

#[cfg(not(feature = "cnn"))]
/// Without the `cnn` feature there is nothing to measure.
///
/// # Errors
/// Always, saying how to build with it (after checking the flags).
pub fn measure(a: &ProfileArgs) -> Result<Measured> {
    validate(a)?;
    bail!(crate::workloads::cnn::NO_CNN)
}

/// The profile's TOML text.
pub fn profile_toml(a: &ProfileArgs, m: &Measured) -> Result<String> {
    let mut totals = m.totals.clone();
    let med = median(&mut totals);
    let (lo, hi) = (totals[0], totals[totals.len() - 1]);
    let host = bench_core::metrics::hostname();
    let cpu = bench_core::metrics::cpu_model();
    let name = format!(
        "{}-{}px-{}classes-batch{}",
        a.model, a.side, a.classes, a.batch
    );
    let profile = bench_core::driver::TimeProfile {
        model: name,
        bytes_per_update: 4 * m.parameters as u64,
        devices: vec![bench_core::driver::DeviceTime {
            name: a.device.clone(),
            seconds_per_batch: med,
        }],
        worker_devices: vec![a.device.clone()],
        source: format!(
            "measured by syncbench profile on {host} ({cpu}), device {}{}: {} parameters; median of {} steps after {} warm-up, {med:.4} s per batch (min {lo:.4}, max {hi:.4}); forward {:.4} s, backward {:.4} s, optimizer {:.4} s; {:.1} images/s; revision {}",
            validate(a)?.1.describe(),
            a.device_note
                .as_ref()
                .map_or(String::new(), |n| format!(" ({n})")),
            m.parameters,
            m.totals.len(),
            a.warmup,
            m.parts[0],
            m.parts[1],
            m.parts[2],
            a.batch as f64 / med,
            bench_core::metrics::git_revision(),
        ),
    };
    let mut text = String::from(
        "# A measured time profile (syncbench profile). worker_devices lists one worker; repeat\n# the device name once per worker of the run that uses it.\n",
    );
    text.push_str(&toml::to_string(&profile).context("cannot write the profile as TOML")?);
    Ok(text)
}

/// `syncbench profile`.
///
/// # Errors
/// Bad flags, a build without `cnn`, or a file that cannot be written.
pub fn run(a: &ProfileArgs) -> Result<()> {
    let m = measure(a)?;
    let text = profile_toml(a, &m)?;
    match &a.out {
        Some(path) => {
            let tmp = path.with_extension("toml.partial");
            std::fs::write(&tmp, &text)
                .with_context(|| format!("cannot write {}", tmp.display()))?;
            std::fs::rename(&tmp, path)
                .with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!("profile: {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}
