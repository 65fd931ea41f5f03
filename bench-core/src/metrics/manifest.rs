//! `manifest.json`: what produced a result, so that it can be trusted and re-run.

use serde::Serialize;

/// Identity of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Manifest {
    /// Experiment (figure) id.
    pub experiment: String,
    /// Full configuration as resolved (defaults, file and flags).
    pub config: serde_json::Value,
    /// Run seed; every RNG derives from it.
    pub seed: u64,
    /// `quick` or `paper`.
    pub scale: String,
    /// Driver(s) used.
    pub driver: String,
    /// `git rev-parse HEAD` plus `-dirty` when the tree has changes, or `unknown`.
    pub git_revision: String,
    /// Host name.
    pub host: String,
    /// Versions of the syncbench crates and rustc that built them.
    pub versions: serde_json::Value,
    /// Command line.
    pub command: Vec<String>,
    /// Wall-clock seconds the run took.
    pub wall_seconds: f64,
    /// Conventions and choices the results depend on.
    pub notes: Vec<String>,
    /// Where this run's configuration departs from its paper's setup, each with the paper's
    /// value and the reason (the experiments crate's `deviations.toml`, checked against the
    /// configuration the run used); empty where none is recorded.
    #[serde(default)]
    pub deviations: Vec<serde_json::Value>,
    /// The environment variables the run read that can change what it computes or where it
    /// reads from, as they were set ([`environment`]); flags win over them where both exist.
    #[serde(default)]
    pub environment: std::collections::BTreeMap<String, String>,
    /// Files the run read by path beside its configuration and datasets (a straggler trace),
    /// each with its size and SHA-256.
    #[serde(default)]
    pub inputs: Vec<serde_json::Value>,
}

/// Names of the environment variables a run reads besides its flags: every `SYNCBENCH_*`
/// (the CNN kernels' level, the dataset cache, the RDMA device and GID, fault points),
/// libfabric's `FI_*`, the cache root's fallback and the GPUs a LibTorch run sees.
fn read_by_runs(name: &str) -> bool {
    name.starts_with("SYNCBENCH_")
        || name.starts_with("FI_")
        || matches!(name, "XDG_CACHE_HOME" | "CUDA_VISIBLE_DEVICES")
}

/// The variables of [`read_by_runs`] that are set in this process, by name.
pub fn environment() -> std::collections::BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .filter(|(k, _)| read_by_runs(k))
        .collect()
}

/// The code revision, `unknown` outside a git checkout.
pub fn git_revision() -> String {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output();
    let Ok(out) = out else {
        return "unknown".into();
    };
    if !out.status.success() {
        return "unknown".into();
    }
    let mut rev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let dirty = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    if dirty {
        rev.push_str("-dirty");
    }
    rev
}

/// The platform the simulator's bytes are promised on: architecture, OS and C library
/// (`x86_64-linux-gnu`). Within one, the CNNs' arithmetic is fixed whatever the CPU
/// (`bench_core::workload::cpu_level`: one order at every instruction-set level, no cache-sized
/// blocking) and the linear models' is IEEE arithmetic in a fixed order; across them (another
/// architecture, or another C library's `exp` and `log`) `syncbench regress` lists changed bytes as "other
/// platform" instead of failing on them.
pub fn numeric_platform() -> String {
    format!(
        "{}-{}-{}",
        std::env::consts::ARCH,
        std::env::consts::OS,
        if cfg!(target_env = "gnu") {
            "gnu"
        } else if cfg!(target_env = "musl") {
            "musl"
        } else {
            "other"
        }
    )
}

/// The host name from `/etc/hostname` or `$HOSTNAME`, else `unknown`.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}
