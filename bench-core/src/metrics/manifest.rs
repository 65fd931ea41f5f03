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
    /// When the run started, UTC, as `2026-12-04T04:37:08Z` ([`utc_timestamp`]).
    #[serde(default)]
    pub started_utc: String,
    /// The machine's CPU model and how many logical CPUs the run could use ([`cpu_model`]).
    #[serde(default)]
    pub cpu: String,
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

/// The CPU model name from `/proc/cpuinfo` (`unknown CPU` where there is none).
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown CPU".into())
}

/// `t` as an RFC 3339 UTC timestamp to the second (`2026-12-04T04:37:08Z`), by the civil
/// calendar from the Unix epoch (Howard Hinnant's days-to-date algorithm): a manifest's
/// `started_utc` without a date crate.
pub fn utc_timestamp(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
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

#[cfg(test)]
mod tests {
    use super::utc_timestamp;
    use std::time::{Duration, UNIX_EPOCH};

    /// The epoch, a leap day, the turn of a century and a time of day.
    #[test]
    fn timestamps_follow_the_civil_calendar() {
        let at = |s: u64| utc_timestamp(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(946_684_799), "1999-12-31T23:59:59Z");
        assert_eq!(at(1_796_359_028), "2026-12-04T04:37:08Z");
    }
}
