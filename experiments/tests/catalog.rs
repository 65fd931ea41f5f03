//! The figure catalogue against the tree: every figure's binary exists, was built and answers
//! `--help`; every experiment binary and every shipped config belongs to some figure; a binary
//! that makes several figures accepts the per-figure arguments the catalogue gives.

use experiments::harness::catalog::entries;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Built binaries sit beside the `deps/` directory holding this test.
fn built(binary: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().join(binary)
}

#[test]
fn every_figure_has_a_built_binary_that_answers_help() {
    let binaries: BTreeSet<String> = entries().into_iter().map(|e| e.binary).collect();
    for b in &binaries {
        let src = manifest_dir().join(format!("src/bin/{b}.rs"));
        assert!(src.is_file(), "{b}: no {}", src.display());
        let o = Command::new(built(b))
            .arg("--help")
            .output()
            .unwrap_or_else(|e| {
                panic!("{b}: cannot run {}: {e}", built(b).display());
            });
        assert!(o.status.success(), "{b} --help failed");
        assert!(String::from_utf8_lossy(&o.stdout).contains("--scale"));
    }
}

/// The config files `path` compiles in (`include_str!("…configs/<name>")`).
fn included_configs(path: &Path, into: &mut BTreeSet<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    for line in text.lines().filter(|l| l.contains("include_str!(")) {
        if let Some(i) = line.find("configs/") {
            let tail = &line[i + "configs/".len()..];
            if let Some(end) = tail.find('"') {
                into.insert(tail[..end].to_string());
            }
        }
    }
}

#[test]
fn every_experiment_binary_and_config_belongs_to_a_figure() {
    let binaries: BTreeSet<String> = entries().into_iter().map(|e| e.binary).collect();
    let mut used_configs = BTreeSet::new();
    for f in std::fs::read_dir(manifest_dir().join("src/bin")).unwrap() {
        let path = f.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if name == "syncbench" {
            continue; // the tool, not an experiment
        }
        included_configs(&path, &mut used_configs);
        if experiments::harness::catalog::BENCHMARKS.contains(&name.as_str()) {
            continue; // a benchmark with its own make target
        }
        assert!(
            binaries.contains(&name),
            "experiment binary {name} makes no figure of experiments/figures.tsv"
        );
    }
    // The figures' code (src/papers, src/studies) and the shared runners (e.g. papers/async/cds.rs)
    // include the configs: every .rs file under src/.
    let mut dirs = vec![manifest_dir().join("src")];
    while let Some(dir) = dirs.pop() {
        for f in std::fs::read_dir(&dir).unwrap() {
            let path = f.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                included_configs(&path, &mut used_configs);
            }
        }
    }
    for f in std::fs::read_dir(manifest_dir().join("configs")).unwrap() {
        let name = f.unwrap().file_name().to_string_lossy().to_string();
        assert!(
            used_configs.contains(&name),
            "configs/{name} is included by no experiment (used: {used_configs:?})"
        );
    }
}

#[test]
fn per_figure_arguments_select_one_figure() {
    let out = std::env::temp_dir().join(format!("syncbench-catalog-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    for e in entries().into_iter().filter(|e| !e.args.is_empty()) {
        let cnn_half = e.is_cnn_half();
        if cnn_half && cfg!(feature = "cnn") {
            // A CNN half trains for 20-70 s at quick scale; its shortened run is
            // experiments_cli's (cnn_hop_fig20_21_on_a_short_run).
            continue;
        }
        let o = Command::new(built(&e.binary))
            .args(&e.args)
            .args(["--scale", "quick", "--seeds", "1", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        if cnn_half {
            // Without the cnn feature a CNN half is refused, saying how to build it, and
            // writes nothing.
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert!(
                !o.status.success() && stderr.contains("--features cnn"),
                "{} {:?}: {stderr}",
                e.binary,
                e.args
            );
            assert!(!out.join(&e.figure).exists(), "{} was written", e.figure);
            continue;
        }
        assert!(
            o.status.success(),
            "{} {:?}: {}",
            e.binary,
            e.args,
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            out.join(&e.figure).join("manifest.json").is_file(),
            "{} {:?} did not write {}",
            e.binary,
            e.args,
            e.figure
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn every_figure_on_a_cnn_and_every_cnn_half_has_its_cnn_configurations() {
    for e in entries()
        .into_iter()
        .filter(|e| e.on_cnn || e.is_cnn_half())
    {
        for scale in ["quick", "paper"] {
            let cfg = manifest_dir().join(format!("configs/{}.cnn.{scale}.toml", e.binary));
            assert!(cfg.is_file(), "{}: no {}", e.figure, cfg.display());
        }
    }
}
