//! Interrupts: SIGINT or SIGTERM on an experiment binary (or on `syncbench launch`, which
//! forwards it) stops the run, removes its partial results, leaves the previous complete
//! results untouched, says what was interrupted and exits with 128 + the signal; a partial
//! directory left by a killed process is removed by the next run of that figure.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::ps_config;

fn setup(tag: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = common::tmpdir(&format!("interrupt-{tag}"));
    let out = dir.join("results");
    let cfg = dir.join("cfg.toml");
    // An earlier, complete result that must survive the interrupted run, where the run writes
    // (a configuration of one's own: under <out>/config/cfg/).
    let root = common::config_root(&out, &cfg);
    std::fs::create_dir_all(root.join("ps-modes")).unwrap();
    std::fs::write(root.join("ps-modes/claims.csv"), "earlier\n").unwrap();
    // 4000 BSP iterations under the threads driver: far longer than the test waits.
    std::fs::write(&cfg, ps_config(4, 4000, 200_000.0)).unwrap();
    (dir, out, cfg)
}

fn entries(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

/// Waits until the run has its partial directory (it is computing), at most 60 s.
fn wait_for_partial(out: &Path, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !entries(out).iter().any(|e| e.contains(".partial-")) {
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        assert!(Instant::now() < deadline, "no partial directory appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// ps-modes under `driver` into `out` with `cfg`, stdout discarded.
fn ps_modes(driver: &str, out: &Path, cfg: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ps-modes"));
    c.args(["--driver", driver, "--out"])
        .arg(out)
        .arg("--config")
        .arg(cfg)
        .stdout(Stdio::null());
    c
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
}

fn interrupted(sig: i32, code: i32, name: &str) {
    let (_dir, out, cfg) = setup(name);
    let root = common::config_root(&out, &cfg);
    let mut c = ps_modes("threads", &out, &cfg)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_partial(&root, &mut c);
    let sent = Instant::now();
    signal(&c, sig);
    let o = c.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "took {:?}",
        sent.elapsed()
    );
    assert!(
        err.contains(&format!("interrupted by {name}"))
            && err.contains("ps-modes")
            && err.contains("partial results were removed"),
        "{err}"
    );
    assert_eq!(entries(&root), vec!["ps-modes".to_string()]);
    assert_eq!(
        std::fs::read_to_string(root.join("ps-modes/claims.csv")).unwrap(),
        "earlier\n"
    );
}

#[test]
fn sigint_stops_the_run_removes_its_partial_results_and_exits_130() {
    interrupted(libc::SIGINT, 130, "SIGINT");
}

#[test]
fn sigterm_stops_the_run_removes_its_partial_results_and_exits_143() {
    interrupted(libc::SIGTERM, 143, "SIGTERM");
}

#[test]
fn a_killed_runs_partial_directory_is_removed_by_the_next_run() {
    let (_dir, out, cfg) = setup("SIGKILL");
    let root = common::config_root(&out, &cfg);
    let mut c = ps_modes("threads", &out, &cfg)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_partial(&root, &mut c);
    c.kill().unwrap();
    c.wait().unwrap();
    let left = entries(&root);
    assert_eq!(
        left.len(),
        2,
        "a SIGKILL leaves its partial directory: {left:?}"
    );
    // The next run (short) sweeps it and writes its own result.
    std::fs::write(&cfg, ps_config(4, 8, 1000.0)).unwrap();
    let o = ps_modes("sim", &out, &cfg).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("which is gone"), "{err}");
    assert_eq!(entries(&root), vec!["ps-modes".to_string()]);
    assert_ne!(
        std::fs::read_to_string(root.join("ps-modes/claims.csv")).unwrap(),
        "earlier\n"
    );
}

#[test]
fn launch_forwards_sigterm_to_its_ranks() {
    let (_dir, out, cfg) = setup("launch");
    let root = common::config_root(&out, &cfg);
    let mut c = Command::new(env!("CARGO_BIN_EXE_syncbench"))
        .args(["launch", "--ranks", "2", "--"])
        .arg(env!("CARGO_BIN_EXE_ps-modes"))
        .args(["--driver", "cluster", "--out"])
        .arg(&out)
        .arg("--config")
        .arg(&cfg)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_partial(&root, &mut c);
    signal(&c, libc::SIGTERM);
    let o = c.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(143), "{err}");
    assert!(err.contains("forwarding it to the ranks"), "{err}");
    assert!(err.contains("interrupted by SIGTERM"), "{err}");
    assert_eq!(entries(&root), vec!["ps-modes".to_string()]);
    assert_eq!(
        std::fs::read_to_string(root.join("ps-modes/claims.csv")).unwrap(),
        "earlier\n"
    );
}
