//! mode-matrix end to end on a small matrix: one row per (pattern, mode) with the documented
//! columns, the baseline at 1, the same bytes from the same seed, a ranking per pattern (each
//! seed's, and the median over the seeds that the heatmap draws), headline claims, and impossible matrices refused before anything is written.

mod common;

use common::tmpdir;
use std::path::Path;
use std::process::{Command, Output};

const SMALL: &str = r#"
workers = 4
iterations = 120
eval_every = 8
hold_evals = 2
aggregation = "mean"
baseline = "ps/bsp"
modes = ["ps/bsp", "ps/ssp2", "async/asp", "peer/ring/standard", "peer/complete/standard"]

[[patterns]]
name = "none"
about = "no straggler"
stragglers = {}

[[patterns]]
name = "slow"
about = "worker 0 three times slower"
stragglers = { jitter_sigma = 0.05, slow = [{ worker = 0, factor = 3.0 }] }

[[headlines]]
name = "asgd-slow"
paper = "ASYNC §6.3: ASGD beats SGD with a straggler"
pattern = "slow"
mode = "async/asp"
than = "ps/bsp"

[[headlines]]
name = "ring-bytes"
paper = "ASAP §6.1: a sparse graph sends fewer bytes than all-reduce"
pattern = "none"
mode = "peer/ring/standard"
than = "peer/complete/standard"
metric = "bytes_per_node"

[data]
train_rows = 2000
test_rows = 400
features = 254
nnz_per_row = 40.0
label_noise = 0.03
informative = 0.1

[svm]
loss = "log"
lambda = 1e-6
eta0 = 50.0
batch = 16

[compute]
ns_per_example = 100000.0

[network]
latency_ns = 20000
bandwidth_gbps = 10.0

[threads]
ring_depth = 64
stall_timeout_ms = 60000
"#;

fn run(dir: &Path, cfg: &str, out: &str) -> Output {
    run_seeds(dir, cfg, out, "1")
}

fn run_seeds(dir: &Path, cfg: &str, out: &str, seeds: &str) -> Output {
    let path = dir.join("cfg.toml");
    std::fs::write(&path, cfg).unwrap();
    Command::new(env!("CARGO_BIN_EXE_mode-matrix"))
        .arg("--out")
        .arg(dir.join(out))
        .arg("--config")
        .arg(&path)
        .args(["--seeds", seeds, "--max-seeds", seeds])
        .output()
        .unwrap()
}

/// Over three seeds, ranking.csv holds each (pattern, mode)'s median ratio to the baseline
/// over the seeds' matrix.csv files (the heatmap's statistic), not the first seed's.
#[test]
fn the_ranking_over_seeds_is_the_median_of_the_seeds_ratios() {
    let dir = tmpdir("mm-seeds");
    let o = run_seeds(&dir, SMALL, "a", "3");
    assert!(o.status.success(), "{}", common::output_text(&o));
    let top = dir.join("a/config/cfg/mode-matrix");
    let read = |p: std::path::PathBuf| std::fs::read_to_string(&p).unwrap();
    let matrices = [
        read(top.join("matrix.csv")),
        read(top.join("seeds/2/matrix.csv")),
        read(top.join("seeds/3/matrix.csv")),
    ];
    let ranking = read(top.join("ranking.csv"));
    let mut checked = 0;
    for line in ranking.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (pattern, mode, median) = (f[0], f[2], f[3]);
        assert_eq!(f[6], "3", "{line}");
        let mut ratios: Vec<f64> = matrices
            .iter()
            .filter_map(|m| {
                let row: Vec<&str> = m
                    .lines()
                    .map(|l| l.split(',').collect::<Vec<_>>())
                    .find(|r| r[0] == pattern && r[1] == mode)?
                    .into_iter()
                    .collect();
                row[4].parse::<f64>().ok()
            })
            .collect();
        if ratios.len() == 3 {
            ratios.sort_by(f64::total_cmp);
            assert_eq!(median.parse::<f64>().unwrap(), ratios[1], "{line}");
            checked += 1;
        }
    }
    assert!(checked >= 5, "{ranking}");
    assert!(top.join("seeds/2/seed-ranking.csv").is_file());
}

#[test]
fn writes_the_matrix_and_its_claims_reproducibly() {
    let dir = tmpdir("mm-ok");
    let o = run(&dir, SMALL, "a");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = std::fs::read_to_string(dir.join("a/config/cfg/mode-matrix/matrix.csv")).unwrap();
    let mut lines = m.lines();
    assert_eq!(
        lines.next(),
        Some("pattern,mode,family,time_to_target_s,vs_baseline,iterations_to_target,makespan_s,final_loss,bytes_per_node,mean_wait_us,max_staleness,dropped_updates")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 10, "{m}");
    for r in &rows {
        if r[1] == "ps/bsp" {
            assert_eq!(
                r[4].parse::<f64>().ok(),
                Some(1.0),
                "the baseline is 1: {r:?}"
            );
        }
        if r[1] == "ps/ssp2" {
            assert!(r[10].parse::<u64>().unwrap() <= 2, "SSP(2) bound: {r:?}");
        }
    }
    // the straggler makes BSP slower in time, not in iterations
    let bsp = |p: &str| {
        rows.iter()
            .find(|r| r[0] == p && r[1] == "ps/bsp")
            .unwrap()
            .clone()
    };
    let (none, slow) = (bsp("none"), bsp("slow"));
    assert!(slow[6].parse::<f64>().unwrap() > 2.0 * none[6].parse::<f64>().unwrap());
    let ranking =
        std::fs::read_to_string(dir.join("a/config/cfg/mode-matrix/ranking.csv")).unwrap();
    assert_eq!(
        ranking.lines().next(),
        Some("pattern,rank,mode,vs_baseline_median,seeds_reached,seeds_compared,seeds_run")
    );
    assert_eq!(
        ranking.lines().filter(|l| l.starts_with("slow,")).count(),
        5
    );
    // one seed: the median is that seed's own ratio, in its own order
    let own =
        std::fs::read_to_string(dir.join("a/config/cfg/mode-matrix/seed-ranking.csv")).unwrap();
    let modes = |t: &str, col: usize| -> Vec<String> {
        t.lines()
            .skip(1)
            .map(|l| l.split(',').nth(col).unwrap().to_string())
            .collect()
    };
    assert_eq!(modes(&ranking, 2), modes(&own, 2), "{ranking}\n{own}");
    let claims = std::fs::read_to_string(dir.join("a/config/cfg/mode-matrix/claims.csv")).unwrap();
    for id in [
        "mode-matrix/asgd-slow",
        "mode-matrix/ring-bytes",
        "mode-matrix/none/best-run-near-optimum",
    ] {
        assert!(claims.contains(id), "{id}: {claims}");
    }
    // a ring sends 1 model per node and iteration, all-reduce 3 with 4 nodes
    assert!(
        claims
            .lines()
            .any(|l| l.starts_with("mode-matrix/ring-bytes") && common::verdict(l) == "pass"),
        "{claims}"
    );
    let o = run(&dir, SMALL, "b");
    assert!(o.status.success());
    for f in [
        "matrix.csv",
        "ranking.csv",
        "seed-ranking.csv",
        "curves.csv",
        "claims.csv",
    ] {
        assert_eq!(
            std::fs::read(dir.join("a/config/cfg/mode-matrix").join(f)).unwrap(),
            std::fs::read(dir.join("b/config/cfg/mode-matrix").join(f)).unwrap(),
            "{f}"
        );
    }
}

/// A recorded trace replays as stragglers: worker 0 at 3x the modelled time in the trace
/// slows BSP as the configured 3x straggler does.
#[test]
fn a_trace_file_replays_as_stragglers() {
    let dir = tmpdir("mm-trace");
    let mut trace = String::from("worker,iter,compute_ns,wait_ns\n");
    for w in 0..4 {
        for k in 0..10 {
            let t = if w == 0 { 4_800_000 } else { 1_600_000 };
            trace.push_str(&format!("{w},{k},{t},0\n"));
        }
    }
    let path = dir.join("trace.csv");
    std::fs::write(&path, trace).unwrap();
    let cfg = SMALL.replacen(
        "[[headlines]]",
        &format!(
            "[[patterns]]\nname = \"traced\"\nabout = \"a trace\"\nstragglers = {{ trace = {{ path = {:?}, unit_ns = 1600000 }} }}\n\n[[headlines]]",
            path.display().to_string()
        ),
        1,
    );
    let o = run(&dir, &cfg, "out");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = std::fs::read_to_string(dir.join("out/config/cfg/mode-matrix/matrix.csv")).unwrap();
    let makespan = |p: &str| -> f64 {
        m.lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|r| r[0] == p && r[1] == "ps/bsp")
            .unwrap()[6]
            .parse()
            .unwrap()
    };
    let (none, slow, traced) = (makespan("none"), makespan("slow"), makespan("traced"));
    assert!(traced > 2.5 * none, "{traced} vs {none}");
    assert!((traced / slow - 1.0).abs() < 0.1, "{traced} vs {slow}");
    // The manifest names the trace by its bytes, not only its path.
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join("out/config/cfg/mode-matrix/manifest.json")).unwrap(),
    )
    .unwrap();
    let want = bench_core::data::digest_file(&path).unwrap().sha256;
    assert_eq!(
        manifest["inputs"][0]["sha256"].as_str(),
        Some(want.as_str()),
        "{}",
        manifest["inputs"]
    );
    // a trace that does not cover the run's workers is refused up front
    std::fs::write(&path, "worker,iter,compute_ns,wait_ns\n0,0,5,0\n").unwrap();
    let o = run(&dir, &cfg, "bad");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("the run has worker"),
        "{err}"
    );
    assert!(!dir.join("bad/config/cfg/mode-matrix").exists());
}

#[test]
fn impossible_matrices_are_refused_before_anything_is_written() {
    let dir = tmpdir("mm-bad");
    for (bad, says) in [
        (SMALL.replace("\"ps/ssp2\"", "\"ps/fast\""), "fast"),
        (
            SMALL.replace("\"peer/ring/standard\"", "\"peer/ring/backup1\""),
            "token queues",
        ),
        (
            SMALL.replace("baseline = \"ps/bsp\"", "baseline = \"ps/asp\""),
            "baseline",
        ),
        (
            SMALL.replace("pattern = \"slow\"", "pattern = \"fast\""),
            "pattern fast",
        ),
        (
            SMALL.replace(
                "{ worker = 0, factor = 3.0 }",
                "{ worker = 9, factor = 3.0 }",
            ),
            "out of range",
        ),
        (
            SMALL.replace("\"async/asp\", ", "\"async/asp\", \"async/asp\", "),
            "twice",
        ),
        (
            SMALL.replace(
                "[svm]\nloss = \"log\"\nlambda = 1e-6\neta0 = 50.0\nbatch = 16\n",
                "",
            ),
            "[data] is the SVM's",
        ),
        (
            SMALL.replace("aggregation = \"mean\"", "aggregation = \"sum\""),
            "leave the peers out",
        ),
        (format!("{SMALL}{MF_SECTIONS}"), "found 2"),
    ] {
        let o = run(&dir, &bad, "out");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{says}: {err}");
        assert!(!dir.join("out/config/cfg/mode-matrix").exists(), "{says}");
    }
}

/// `[mf]` in place of `[data]` and `[svm]`.
const MF_SECTIONS: &str = r#"
[mf.data]
users = 120
items = 60
ratings = 6000
rank = 4
noise = 0.1
popularity_exponent = 0.5
test_fraction = 0.1

[mf.settings]
rank = 4
lambda = 0.05
step = 0.02
minibatch_fraction = 0.2
init_scale = 0.3
init_seed = 1
"#;

/// The matrix trains matrix factorisation when `[mf]` replaces `[data]` and `[svm]`: the
/// server families (summing updates, as Bösen's INC) learn it to the ALS reference optimum's
/// neighbourhood, the target is read against that optimum, and the manifest names both.
#[test]
fn matrix_factorisation_is_a_matrix_workload() {
    let dir = tmpdir("mm-mf");
    let head = SMALL.split("[data]").next().unwrap();
    let cfg = head
        .replace("aggregation = \"mean\"", "aggregation = \"sum\"")
        .replace(
            r#"modes = ["ps/bsp", "ps/ssp2", "async/asp", "peer/ring/standard", "peer/complete/standard"]"#,
            r#"modes = ["ps/bsp", "ps/ssp2", "async/asp"]"#,
        )
        .replace("metric = \"bytes_per_node\"", "")
        .replace("mode = \"peer/ring/standard\"", "mode = \"ps/ssp2\"")
        .replace("than = \"peer/complete/standard\"", "than = \"ps/bsp\"")
        + MF_SECTIONS
        + "[compute]\nns_per_example = 10000.0\n[network]\nlatency_ns = 20000\nbandwidth_gbps = 10.0\n[threads]\nring_depth = 64\nstall_timeout_ms = 60000\n";
    let o = run(&dir, &cfg, "mf");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.join("mf/config/cfg/mode-matrix");
    let m = std::fs::read_to_string(out.join("matrix.csv")).unwrap();
    assert_eq!(m.lines().count(), 1 + 2 * 3, "{m}");
    let reference = std::fs::read_to_string(out.join("reference.csv")).unwrap();
    assert_eq!(reference.lines().count(), 2, "one optimum: {reference}");
    let claims = std::fs::read_to_string(out.join("claims.csv")).unwrap();
    let near = claims
        .lines()
        .find(|l| l.starts_with("mode-matrix/none/best-run-near-optimum"))
        .unwrap();
    assert_eq!(common::verdict(near), "pass", "BSP on MF converges: {near}");
    // ps/bsp reaches the optimum-relative target without a straggler
    let bsp = m.lines().find(|l| l.starts_with("none,ps/bsp,")).unwrap();
    assert_eq!(bsp.split(',').nth(4), Some("1.0"), "{bsp}");
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("ALS-WR") && manifest.contains("workload: matrix factorisation"),
        "{manifest}"
    );
}
