//! What a new user hits first, from the command line: a closed output pipe ends a command
//! quietly, usage errors exit 2, flags win over the environment (and the environment read is in
//! the manifest), and every missing dataset is named at once, before any seed runs.

use std::process::{Command, Stdio};

mod common;

/// Runs `bin args` with its stdout a pipe whose read end is closed before the command writes.
fn with_closed_stdout(bin: &str, args: &[&str]) -> (std::process::ExitStatus, String) {
    let mut child = Command::new(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    (out.status, String::from_utf8_lossy(&out.stderr).to_string())
}

#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    for (bin, args) in [
        (env!("CARGO_BIN_EXE_syncbench"), &["datasets", "list"][..]),
        (env!("CARGO_BIN_EXE_syncbench"), &["--help"][..]),
    ] {
        let (status, stderr) = with_closed_stdout(bin, args);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{args:?}: {stderr}"
        );
        // Killed by SIGPIPE as `cat` is, or done before it wrote: never a panic's 101.
        assert!(
            status.success() || status.signal() == Some(libc::SIGPIPE),
            "{args:?}: {status:?}"
        );
    }
}

#[test]
fn usage_errors_found_after_parsing_exit_2_as_clap_does() {
    let fig7 = env!("CARGO_BIN_EXE_asap-fig7");
    let dir = common::tmpdir("usage");
    for args in [
        &["--device", "tpu"][..],
        &["--cnn"][..],
        &["--driver", "simulator"][..],
    ] {
        let o = Command::new(fig7)
            .args(args)
            .arg("--out")
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        assert!(!dir.join("asap-fig7").exists(), "{args:?} wrote results");
    }
}

#[test]
fn flags_win_over_the_environment_and_the_environment_read_is_in_the_manifest() {
    let dir = common::tmpdir("environment");
    std::fs::write(dir.join("cfg.toml"), common::ASAP_SMALL).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_asap-fig7"))
        .args(["--driver", "sim", "--seeds", "1", "--config", "cfg.toml"])
        .args(["--out", "out"])
        .current_dir(&dir)
        // SCALE is make's variable, not the binaries': it must not turn this into a paper run.
        .env("SCALE", "paper")
        .env("SYNCBENCH_CPU_LEVEL", "avx2")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join("out/config/cfg/asap-fig7/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m["scale"], "quick");
    assert_eq!(m["environment"]["SYNCBENCH_CPU_LEVEL"], "avx2", "{m}");
    assert!(m["environment"].get("SCALE").is_none());
}

/// A run on a configuration of one's own writes beside the figure's run, under
/// `<out>/config/<name>/`, and leaves the figure's results as they were; a configuration whose
/// text is the binary's own (as `make fig-<id>` passes for a CNN headline) writes the figure's.
#[test]
fn a_config_run_writes_beside_the_figures_run_not_over_it() {
    let dir = common::tmpdir("config-beside");
    let bin = env!("CARGO_BIN_EXE_ps-modes");
    let own = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/ps-modes.quick.toml"),
    )
    .unwrap();
    let run = |cfg: &str| {
        let o = Command::new(bin)
            .args([
                "--seeds", "1", "--driver", "sim", "--out", "out", "--config", cfg,
            ])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    // The committed configuration's text, under any name: the figure's own results.
    std::fs::write(dir.join("copy.toml"), &own).unwrap();
    run("copy.toml");
    let figure = dir.join("out/ps-modes/manifest.json");
    let before = std::fs::read(&figure).unwrap();
    assert!(!dir.join("out/config").exists());
    // One changed line: a run of one's own, beside.
    std::fs::write(
        dir.join("mine.toml"),
        own.replacen("iterations = 150", "iterations = 100", 1),
    )
    .unwrap();
    run("mine.toml");
    assert!(dir.join("out/config/mine/ps-modes/manifest.json").is_file());
    assert_eq!(
        std::fs::read(&figure).unwrap(),
        before,
        "the figure's run was overwritten"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_missing_dataset_is_named_at_once_before_any_seed() {
    let dir = common::tmpdir("missing-datasets");
    let o = Command::new(env!("CARGO_BIN_EXE_asap-fig6"))
        .args(["--scale", "paper", "--out"])
        .arg(dir.join("out"))
        .env("SYNCBENCH_DATA", dir.join("empty-cache"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("syncbench datasets fetch rcv1-train splice-site-train webspam-trigram"),
        "{err}"
    );
    assert!(!err.contains("seed 1"), "{err}");
    assert!(!dir.join("out/asap-fig6").exists());
}

/// hop-fig12 with `args` into `out`, stderr a pipe as in a log, the progress interval
/// `interval`: its stderr, after checking that it succeeded.
fn hop_fig12_logged(args: &[&str], out: &std::path::Path, interval: &str) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_hop-fig12"))
        .args(args)
        .arg("--out")
        .arg(out)
        .env("SYNCBENCH_PROGRESS_SECONDS", interval)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    err
}

#[test]
fn a_log_gets_progress_lines_and_seed_lines_in_seed_order() {
    let dir = common::tmpdir("progress-lines");
    // stderr is a pipe here, as in a log: indicatif draws nothing, the progress log writes.
    let err = hop_fig12_logged(
        &["--seeds", "3", "--max-seeds", "3", "--jobs", "2"],
        &dir.join("out"),
        "0.05",
    );
    // Each seed's line, in seed order, the last without an estimate.
    let at = |s: &str| err.find(s).unwrap_or_else(|| panic!("no {s:?} in {err}"));
    let (one, two, three) = (
        at("hop-fig12: seed 1 done in "),
        at("hop-fig12: seed 2 done in "),
        at("hop-fig12: seed 3 done in "),
    );
    assert!(one < two && two < three, "{err}");
    assert!(
        err.contains("hop-fig12: seed 3 done in ") && err.contains(" (3 of 3)"),
        "{err}"
    );
    // Progress lines inside the seeds: how far, since when, and what is left.
    assert!(
        err.lines()
            .any(|l| l.contains(" after ")
                && (l.ends_with(" left") || l.ends_with("no estimate yet"))),
        "{err}"
    );
    // A malformed interval is said, and the default used.
    let err = hop_fig12_logged(
        &["--seeds", "1", "--max-seeds", "1"],
        &dir.join("out2"),
        "soon",
    );
    assert!(
        err.contains("SYNCBENCH_PROGRESS_SECONDS=\"soon\" is not 0 or a number of seconds"),
        "{err}"
    );
}
