//! Records the compiler and key dependency versions for every run's manifest.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=../Cargo.lock");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("-V")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SYNCBENCH_RUSTC={version}");
    let lock = std::fs::read_to_string("../Cargo.lock").unwrap_or_default();
    let wanted = [
        "nalgebra",
        "plotters",
        "clap",
        "serde",
        "csv",
        "hdrhistogram",
        "rand_chacha",
        "toml",
    ];
    let mut found = Vec::new();
    let mut name = String::new();
    for line in lock.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = n.trim_matches('"').to_string();
        } else if let Some(v) = line.strip_prefix("version = ") {
            if wanted.contains(&name.as_str()) {
                found.push(format!("{name}={}", v.trim_matches('"')));
            }
        }
    }
    println!("cargo:rustc-env=SYNCBENCH_DEPS={}", found.join(","));
}
