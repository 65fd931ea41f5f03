//! Helpers the experiment CLI tests share: temporary directories and small configurations.

#![allow(dead_code)]

use std::path::PathBuf;

/// A fresh directory under the system's temporary directory, named by `tag` and the process.
pub fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("syncbench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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

/// Whether a `claims.csv` row passed for every seed that evaluated it: a one-seed row ends in
/// `,pass`; a several-seed row in `,pass,<seeds>,<passes>` with passes = seeds.
pub fn passes_every_seed(line: &str) -> bool {
    if line.ends_with(",pass") {
        return true;
    }
    // Several seeds: `...,verdict,seeds,passes,median,min,max`.
    let mut it = line.rsplitn(6, ',').skip(3);
    match (it.next(), it.next(), it.next()) {
        (Some(passes), Some(seeds), Some(rest)) => {
            passes == seeds && passes != "0" && rest.ends_with(",pass")
        }
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
