//! What the `figures` binary's integration tests share: running it on a results folder, its
//! output as one text, and a fresh temporary folder per test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `figures --results <results> <args>`, run to completion.
pub fn figures(results: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_figures"))
        .arg("--results")
        .arg(results)
        .args(args)
        .output()
        .expect("figures runs")
}

/// A run's stdout then stderr.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// An empty folder of its own under the temporary directory, for the test `suite` and `tag`.
pub fn tmpdir(suite: &str, tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("figures-{suite}-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
