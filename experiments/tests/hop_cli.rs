//! hop-table1 end to end on a tiny search: the CSV schema, and impossible settings rejected
//! before anything is written.

mod common;

use common::tmpdir;
use std::process::{Command, Output};

const TINY: &str = r#"
schedules = 20
iterations = 12
nodes = 6
graphs = ["ring", "random-regular-2"]
[[settings]]
mode = { kind = "standard" }
[[settings]]
mode = { kind = "backup", backups = 1 }
max_i = 2
[[settings]]
mode = { kind = "notify-ack" }
"#;

fn run(dir: &std::path::Path, cfg: &str) -> Output {
    let path = dir.join("cfg.toml");
    std::fs::write(&path, cfg).unwrap();
    Command::new(env!("CARGO_BIN_EXE_hop-table1"))
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--config")
        .arg(&path)
        .output()
        .unwrap()
}

#[test]
fn writes_gaps_with_the_documented_columns() {
    let dir = tmpdir("ok");
    let o = run(&dir, TINY);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let gaps = std::fs::read_to_string(dir.join("out/config/cfg/hop-table1/gaps.csv")).unwrap();
    let mut lines = gaps.lines();
    assert_eq!(
        lines.next(),
        Some("setting,graph,nodes,schedules,max_observed_gap,bound,violations")
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 6, "{gaps}");
    assert!(
        rows.iter().all(|r| r.ends_with(",0")),
        "no violations: {gaps}"
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("standard,ring-6,6,20,3,3,")),
        "{gaps}"
    );
    let claims = std::fs::read_to_string(dir.join("out/config/cfg/hop-table1/claims.csv")).unwrap();
    assert!(
        claims.contains("hop-table1/standard/ring-6/no-violation"),
        "{claims}"
    );
}

#[test]
fn impossible_settings_fail_before_writing() {
    for (cfg, want) in [
        (
            TINY.replace("max_i = 2\n", ""),
            "backup workers need token queues",
        ),
        (
            TINY.replace("backups = 1", "backups = 2"),
            "backup workers must be in 1..in-degree",
        ),
        (TINY.replace("\"ring\"", "\"chain\""), "strongly connected"),
        (TINY.replace("\"ring\"", "\"moebius\""), "moebius"),
    ] {
        let dir = tmpdir("bad");
        let o = run(&dir, &cfg);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success());
        assert!(err.contains(want), "{want}: {err}");
        assert!(!dir.join("out/config/cfg/hop-table1").exists());
    }
}

const TRAIN: &str = r#"
[common]
workers = 6
iterations = 12
eval_every = 12
[common.data]
train_rows = 1200
test_rows = 200
features = 100
nnz_per_row = 20.0
label_noise = 0.05
informative = 0.1
[common.svm]
loss = "log"
lambda = 1e-6
eta0 = 10.0
batch = 8
[common.compute]
ns_per_example = 100000.0
[common.network]
latency_ns = 20000
bandwidth_gbps = 10.0
[common.threads]
ring_depth = 64
stall_timeout_ms = 30000
"#;

fn run_bin(bin: &str, dir: &std::path::Path, cfg: &str, extra: &[&str]) -> Output {
    let path = dir.join("cfg.toml");
    std::fs::write(&path, cfg).unwrap();
    Command::new(bin)
        .args(extra)
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--config")
        .arg(&path)
        .output()
        .unwrap()
}

#[test]
fn training_figures_run_under_both_drivers() {
    let dir = tmpdir("fig12");
    let cfg =
        format!("graphs = [\"ring\", \"double-ring\"]\nslowdown = {{ factor = 6.0 }}\n{TRAIN}");
    let o = run_bin(
        env!("CARGO_BIN_EXE_hop-fig12"),
        &dir,
        &cfg,
        &["--driver", "sim,threads"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = std::fs::read_to_string(dir.join("out/config/cfg/hop-fig12/summary.csv")).unwrap();
    assert!(
        s.contains("ring-6/sim,true") && s.contains("double-ring-6/threads,false"),
        "{s}"
    );
    let dir = tmpdir("fig14");
    let cfg = format!(
        "graphs = [\"ring-based\"]\nmin_iteration_speedup = 1.2\nslowdown = {{ factor = 6.0 }}\n[[settings]]\nmode = {{ kind = \"backup\", backups = 1 }}\nmax_i = 3\n{TRAIN}"
    );
    let o = run_bin(env!("CARGO_BIN_EXE_hop-fig14-16"), &dir, &cfg, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let claims =
        std::fs::read_to_string(dir.join("out/config/cfg/hop-fig14-16/claims.csv")).unwrap();
    assert!(
        claims.contains("hop-fig14-16/ring-based-6/backup1+tokens3-time-to-target"),
        "{claims}"
    );
    // Backup workers without token queues: refused before anything runs.
    let bad = cfg.replace("max_i = 3\n", "");
    let dir = tmpdir("fig14bad");
    let o = run_bin(env!("CARGO_BIN_EXE_hop-fig14-16"), &dir, &bad, &[]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("token queues"));
    assert!(!dir.join("out/config/cfg/hop-fig14-16").exists());
}

#[test]
fn asap_fig6_counts_bytes_by_out_degree() {
    let dir = tmpdir("asap6");
    let part = TRAIN
        .replace("[common]", "[parts.common]")
        .replace("[common.", "[parts.common.");
    let cfg = format!(
        "[[parts]]\nname = \"tiny\"\ngraphs = [\"chain\", \"root-expander\", \"complete\"]\n{part}"
    );
    let o = run_bin(env!("CARGO_BIN_EXE_asap-fig6"), &dir, &cfg, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let claims = std::fs::read_to_string(dir.join("out/config/cfg/asap-fig6/claims.csv")).unwrap();
    assert!(
        claims.contains("asap-fig6/tiny/bytes-proportional-to-out-degree,")
            && claims.contains(",pass"),
        "{claims}"
    );
    let s = std::fs::read_to_string(dir.join("out/config/cfg/asap-fig6/summary.csv")).unwrap();
    // complete-6 sends 5 copies per iteration, the chain 5/6 on average.
    assert!(s.contains("tiny,complete-6,6,5.0,"), "{s}");
    assert!(s.contains("tiny,chain-6,6,0.8333"), "{s}");
}

const TWO_LEVEL: &str = r#"
[[graphs]]
name = "ring-based"
paper_gap = 0.6667
[[graphs]]
name = "hierarchical-shared"
paper_gap = 0.2682
[[graphs]]
name = "hierarchical-spread"
paper_gap = 0.2688
[common]
workers = 8
iterations = 10
eval_every = 16
[common.data]
train_rows = 800
test_rows = 100
features = 2000
nnz_per_row = 20.0
label_noise = 0.05
informative = 0.05
[common.svm]
loss = "log"
lambda = 1e-6
eta0 = 10.0
batch = 8
[common.compute]
ns_per_example = 100000.0
[common.network]
latency_ns = 100000
bandwidth_gbps = 1.0
[common.network.hosts]
placement = [0, 0, 0, 0, 1, 1, 2, 2]
intra_latency_ns = 20000
intra_bandwidth_gbps = 20.0
[common.threads]
ring_depth = 16
stall_timeout_ms = 30000
"#;

fn run_fig20(dir: &std::path::Path, cfg: &str) -> Output {
    run_bin(env!("CARGO_BIN_EXE_hop-fig20-21"), dir, cfg, &[])
}

#[test]
fn fig20_21_reports_the_papers_gaps_and_times() {
    let dir = tmpdir("fig20");
    let o = run_fig20(&dir, TWO_LEVEL);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let gaps = std::fs::read_to_string(dir.join("out/config/cfg/hop-fig20-21/gaps.csv")).unwrap();
    assert!(
        gaps.starts_with("graph,gap_paper_convention,gap_footnote,paper_gap\n"),
        "{gaps}"
    );
    let claims =
        std::fs::read_to_string(dir.join("out/config/cfg/hop-fig20-21/claims.csv")).unwrap();
    for g in [
        "ring-based-8",
        "hierarchical-shared-4-2-2",
        "hierarchical-spread-4-2-2",
    ] {
        let line = claims
            .lines()
            .find(|l| l.starts_with(&format!("hop-fig20-21/{g}/gap,")))
            .unwrap_or_else(|| panic!("{g}: {claims}"));
        assert!(common::passes_every_seed(line), "{line}");
    }
    assert!(
        claims.contains("hop-fig20-21/hierarchical-shared-4-2-2-before-ring-based-8"),
        "{claims}"
    );
}

#[test]
fn fig20_21_needs_a_placement_of_every_worker() {
    for (cfg, want) in [
        (
            TWO_LEVEL.replace(
                "placement = [0, 0, 0, 0, 1, 1, 2, 2]",
                "placement = [0, 0, 1, 1, 2, 2]",
            ),
            "placement lists 6 nodes but the run has 8",
        ),
        (
            TWO_LEVEL.replace(
                "placement = [0, 0, 0, 0, 1, 1, 2, 2]",
                "placement = [0, 0, 0, 0, 1, 1, 3, 3]",
            ),
            "machine 2 has no worker",
        ),
        (
            TWO_LEVEL
                .replace("[common.network.hosts]\n", "")
                .replace("placement = [0, 0, 0, 0, 1, 1, 2, 2]\n", "")
                .replace("intra_latency_ns = 20000\n", "")
                .replace("intra_bandwidth_gbps = 20.0\n", ""),
            "common.network.hosts must place the workers",
        ),
    ] {
        let dir = tmpdir("fig20bad");
        let o = run_fig20(&dir, &cfg);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{want}: accepted");
        assert!(err.contains(want), "{want}: {err}");
        assert!(
            !dir.join("out/config/cfg/hop-fig20-21").exists(),
            "{want}: wrote results"
        );
    }
}
