//! Records the compiler and key dependency versions for every run's manifest, and writes the
//! multicall table (`tools::multicall`) from the experiment binaries' shims, so a binary is
//! registered once, by its file under src/bin/.

use std::path::Path;
use std::process::Command;

/// `$OUT_DIR/multicall_table.rs`: every shim under src/bin/ but the tool's own (`syncbench`),
/// by file name, with the library function its `main` calls (`experiments::<path>::main()`).
fn multicall_table() {
    println!("cargo:rerun-if-changed=src/bin");
    let mut shims: Vec<_> = std::fs::read_dir("src/bin")
        .expect("src/bin is readable")
        .map(|e| e.expect("src/bin entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    shims.sort();
    let mut rows = String::new();
    for shim in shims {
        println!("cargo:rerun-if-changed={}", shim.display());
        let name = shim
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a shim's name is UTF-8")
            .to_string();
        if name == "syncbench" {
            continue;
        }
        let text = std::fs::read_to_string(&shim).expect("a shim is readable");
        let call = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with("//"))
            .find_map(|l| {
                let start = l.find("experiments::")?;
                let end = l[start..].find("::main()")? + start;
                Some(l[start + "experiments::".len()..end].to_string())
            })
            .unwrap_or_else(|| {
                panic!(
                    "{}: an experiment binary's main calls `experiments::<module>::main()`",
                    shim.display()
                )
            });
        rows.push_str(&format!("    (\"{name}\", crate::{call}::main),\n"));
    }
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("multicall_table.rs");
    std::fs::write(
        out,
        format!("/// Every experiment binary's shim (src/bin/), by name, with its entry point.\npub const SHIMS: &[(&str, Entry)] = &[\n{rows}];\n"),
    )
    .expect("OUT_DIR is writable");
}

fn main() {
    multicall_table();
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
