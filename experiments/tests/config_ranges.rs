//! Every numeric field of every shipped configuration has a range rule, the shipped values are
//! inside it, and an out-of-range value in any one of them is refused naming its full path;
//! end to end, an experiment given `label_noise = 1.5` exits non-zero saying so and writes
//! nothing.

use experiments::harness::config_ranges::{check, numeric_leaves, rule};
use std::path::Path;

fn shipped() -> Vec<(String, toml::Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut out: Vec<(String, toml::Value)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, toml::from_str(&text).unwrap())
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 30, "{} configs", out.len());
    out
}

/// Sets the leaf at `path` (as [`numeric_leaves`] names it) to `x`.
fn set(v: &mut toml::Value, path: &str, x: toml::Value) {
    let mut cur = v;
    for part in path.split('.') {
        let (key, indices) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        cur = cur.get_mut(key).expect("key");
        for idx in indices.split('[').filter(|s| !s.is_empty()) {
            let i: usize = idx.trim_end_matches(']').parse().unwrap();
            cur = cur.get_mut(i).expect("index");
        }
    }
    *cur = x;
}

#[test]
fn every_shipped_numeric_field_is_range_checked() {
    let mut fields = 0;
    let mut names = std::collections::BTreeSet::new();
    for (file, value) in shipped() {
        check(&value).unwrap_or_else(|e| panic!("{file}: shipped values out of range: {e}"));
        for (path, name, _, _) in numeric_leaves(&value) {
            let r = rule(&name).unwrap_or_else(|| {
                panic!("{file}: field {path} has no range rule in config_ranges::RULES")
            });
            let mut bad = value.clone();
            set(&mut bad, &path, r.outside());
            let e =
                check(&bad).expect_err(&format!("{file}: {path} accepted an out-of-range value"));
            assert!(e.starts_with(&format!("{path} = ")), "{file}: {e}");
            fields += 1;
            names.insert(name);
        }
    }
    eprintln!(
        "config ranges: {fields} numeric fields of the shipped configurations ({} distinct names) each refused an out-of-range value",
        names.len()
    );
    assert!(fields > 900, "{fields}");
}

#[test]
fn an_experiment_refuses_an_out_of_range_field_and_writes_nothing() {
    let dir = std::env::temp_dir().join(format!("syncbench-ranges-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/ps-modes.quick.toml"),
    )
    .unwrap();
    let mut v: toml::Value = toml::from_str(&text).unwrap();
    set(&mut v, "data.label_noise", toml::Value::Float(1.5));
    let cfg = dir.join("bad.toml");
    std::fs::write(&cfg, toml::to_string(&v).unwrap()).unwrap();
    let out = dir.join("results");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ps-modes"))
        .args(["--driver", "sim", "--out"])
        .arg(&out)
        .arg("--config")
        .arg(&cfg)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("bad.toml") && err.contains("data.label_noise = 1.5 is out of range"),
        "{err}"
    );
    assert!(!out.exists(), "results written for a refused configuration");
    std::fs::remove_dir_all(&dir).unwrap();
}
