//! asap-fig7 end to end on a small model under both drivers: reduces.csv carries the documented
//! columns and one row per reduce, NOTIFY-ACK uses every input, and impossible settings fail
//! before anything is written.

use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::tmpdir;
use common::ASAP_SMALL as SMALL;

fn run(dir: &Path, bin: &str, cfg: &str) -> Output {
    let path = dir.join("cfg.toml");
    std::fs::write(&path, cfg).unwrap();
    Command::new(bin)
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--config")
        .arg(&path)
        .output()
        .unwrap()
}

#[test]
fn fig7_writes_one_row_per_reduce_with_the_documented_columns() {
    let dir = tmpdir("ok");
    let o = run(&dir, env!("CARGO_BIN_EXE_asap-fig7"), SMALL);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.join("out/config/cfg/asap-fig7");
    for (file, driver) in [("reduces.csv", "threads"), ("reduces-sim.csv", "sim")] {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        let mut lines = text.lines();
        assert_eq!(
            lines.next(),
            Some("mode,worker,iter,inputs_expected,inputs_consistent"),
            "{driver}"
        );
        let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
        assert_eq!(
            rows.len(),
            3 * 8 * 12,
            "{driver}: 3 modes x 8 peers x 12 iterations"
        );
        for r in &rows {
            assert_eq!(r[3], "7");
            let k: usize = r[4].parse().unwrap();
            assert!(k <= 7);
            if r[0] == "notify-ack" {
                assert_eq!(k, 7, "{driver}: NOTIFY-ACK reduced a torn buffer: {r:?}");
            }
        }
    }
    let claims = std::fs::read_to_string(out.join("claims.csv")).unwrap();
    assert!(
        claims.contains("asap-fig7/sim/notify-ack-all-inputs,") && claims.contains(",pass"),
        "{claims}"
    );
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("\"driver\": \"threads,sim\""),
        "{manifest}"
    );
}

#[test]
fn impossible_settings_fail_before_writing() {
    for (cfg, want) in [
        (
            SMALL.replace("good_inputs = 5", "good_inputs = 8"),
            "good_inputs must be in 1..=7",
        ),
        (
            SMALL.replace("copy_gbps = 5.0", "copy_gbps = 0.0"),
            "common.copy_gbps = 0 is out of range: it must be a finite number above 0",
        ),
        (
            SMALL.replace("graph = \"complete\"", "graph = \"moebius\""),
            "moebius",
        ),
        (
            SMALL.replace("iterations = 12", "iterations = 0"),
            "iterations",
        ),
    ] {
        let dir = tmpdir("bad");
        let o = run(&dir, env!("CARGO_BIN_EXE_asap-fig7"), &cfg);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{want}: accepted");
        assert!(err.contains(want), "{want}: {err}");
        assert!(
            !dir.join("out/config/cfg/asap-fig7").exists(),
            "{want}: wrote results"
        );
    }
}

#[test]
fn fig9_compares_the_three_modes_on_a_sparse_graph() {
    let dir = tmpdir("fig9");
    let cfg = SMALL
        .replace("good_inputs = 5\n", "")
        .replace("workers = 8", "workers = 9")
        .replace("\"complete\"", "\"root-expander\"");
    let o = run(&dir, env!("CARGO_BIN_EXE_asap-fig9"), &cfg);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.join("out/config/cfg/asap-fig9");
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let modes: Vec<&str> = summary
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(modes, ["notify-ack", "bsp", "async"], "{summary}");
    let claims = std::fs::read_to_string(out.join("claims.csv")).unwrap();
    assert!(
        claims.contains("asap-fig9/sim/notify-ack-before-bsp"),
        "{claims}"
    );
    assert!(
        claims.contains("asap-fig9/sim/async-misses-target"),
        "{claims}"
    );
    assert!(out.join("curves.csv").exists());
}
