//! Helpers the experiment CLI tests share: temporary directories and small configurations.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A fresh directory under the system's temporary directory, named by `tag` and the process.
pub fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("syncbench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Where a run with `--out out --config config` writes its figures: `out/config/<the file's
/// name without .toml>/`, beside the built-in run's (the binaries' rule for a configuration that
/// is not one of their committed ones).
pub fn config_root(out: &Path, config: &Path) -> PathBuf {
    out.join("config")
        .join(config.file_stem().expect("a config file name"))
}

/// A small ps-modes configuration: `workers` workers, `iterations` iterations, the modelled
/// compute `ns_per_example` (batch 8).
pub fn ps_config(workers: usize, iterations: u64, ns_per_example: f64) -> String {
    experiments::tools::faults::ps_config(workers, iterations, ns_per_example, 60_000)
}

/// A small asap-fig7 configuration: 8 peers all-reduce, 12 iterations, a 3,000-feature model.
pub const ASAP_SMALL: &str = r#"
good_inputs = 5
[common]
workers = 8
graph = "complete"
iterations = 12
eval_every = 4
jitter_sigma = 0.3
copy_gbps = 5.0
stall_timeout_ms = 30000
[common.data]
train_rows = 1600
test_rows = 200
features = 3000
nnz_per_row = 40.0
label_noise = 0.1
informative = 0.05
[common.svm]
loss = "hinge"
lambda = 1e-4
eta0 = 20.0
batch = 16
[common.compute]
ns_per_example = 1000.0
[common.network]
latency_ns = 2000
bandwidth_gbps = 40.0
"#;

/// The fields of one `claims.csv` row: `claim_id,statement,paper_value,measured_value,verdict`,
/// then (several seeds) `seeds,passes,median,min,max`, then `kind,class,why`.
pub fn claim_fields(line: &str) -> Vec<String> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(line.as_bytes())
        .records()
        .next()
        .and_then(Result::ok)
        .map(|r| r.iter().map(str::to_string).collect())
        .unwrap_or_default()
}

/// A `claims.csv` row's verdict (empty for a line that is not a row).
pub fn verdict(line: &str) -> String {
    claim_fields(line).get(4).cloned().unwrap_or_default()
}

/// Whether a `claims.csv` row passed for every seed that evaluated it: a one-seed row's
/// verdict is pass; a several-seed row's too, with passes = seeds.
pub fn passes_every_seed(line: &str) -> bool {
    let f = claim_fields(line);
    match f.len() {
        8 => f[4] == "pass",
        13 => f[4] == "pass" && f[5] == f[6] && f[6] != "0",
        _ => false,
    }
}

/// `syncbench regress ARGS --results RESULTS --baseline BASELINE`, run to completion.
pub fn regress(
    args: &[&str],
    results: &std::path::Path,
    baseline: &std::path::Path,
) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_syncbench"))
        .arg("regress")
        .args(args)
        .arg("--results")
        .arg(results)
        .arg("--baseline")
        .arg(baseline)
        .output()
        .unwrap()
}

/// A finished command's stdout and stderr, for assertion messages.
pub fn output_text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
