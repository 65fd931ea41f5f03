//! hop-table1 end to end on a tiny search: the CSV schema, and impossible settings rejected
//! before anything is written.

use std::path::PathBuf;
use std::process::{Command, Output};

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("syncbench-hop-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

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
    let gaps = std::fs::read_to_string(dir.join("out/hop-table1/gaps.csv")).unwrap();
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
    let claims = std::fs::read_to_string(dir.join("out/hop-table1/claims.csv")).unwrap();
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
        assert!(!dir.join("out/hop-table1").exists());
    }
}
