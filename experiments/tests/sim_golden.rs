//! The sim driver's CSV bytes, pinned: fast sim experiments run at quick scale, seed 1 (one
//! seed), and the SHA-256 of every CSV they write must match `tests/golden/sim-csv.sha256`. A
//! refactor must leave them unchanged; a change meant to alter results updates the file (run
//! this test with `SYNCBENCH_BLESS=1`) so that the diff shows which results moved. And a run of
//! several seeds holds, per seed, exactly the bytes of that seed's own run, whether its seeds
//! ran one at a time or two at once (`--jobs`).

mod common;

use bench_core::data::digest_file;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Experiments pinned (binary, figure directories it writes): sim-only or `--driver sim`, a
/// few seconds each.
const PINNED: &[(&str, &str)] = &[
    ("ps-modes", env!("CARGO_BIN_EXE_ps-modes")),
    ("hop-fig12", env!("CARGO_BIN_EXE_hop-fig12")),
    ("hop-fig13", env!("CARGO_BIN_EXE_hop-fig13")),
    ("hop-fig17", env!("CARGO_BIN_EXE_hop-fig17")),
    ("asap-fig7", env!("CARGO_BIN_EXE_asap-fig7")),
    ("asap-fig9", env!("CARGO_BIN_EXE_asap-fig9")),
    ("dssp-table1", env!("CARGO_BIN_EXE_dssp-table1")),
    (
        "essp-fig2-staleness",
        env!("CARGO_BIN_EXE_essp-fig2-staleness"),
    ),
];

fn golden_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/sim-csv.sha256")
}

/// `figure/file.csv` -> sha256 of every CSV under `out`.
fn hashes(out: &Path) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for fig in std::fs::read_dir(out).unwrap() {
        let fig = fig.unwrap().path();
        if !fig.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&fig).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "csv") {
                let key = format!(
                    "{}/{}",
                    fig.file_name().unwrap().to_string_lossy(),
                    f.file_name().unwrap().to_string_lossy()
                );
                map.insert(key, digest_file(&f).unwrap().sha256);
            }
        }
    }
    map
}

fn parse(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (h, name) = l.split_once("  ").expect("`<sha256>  <file>` lines");
            (name.to_string(), h.to_string())
        })
        .collect()
}

#[test]
fn sim_csv_bytes_match_the_pinned_hashes() {
    let out = common::tmpdir("golden");
    for (name, exe) in PINNED {
        let o = Command::new(exe)
            .args(["--scale", "quick", "--seed", "1", "--seeds", "1"])
            .args(["--driver", "sim", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{name} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let now = hashes(&out);
    assert!(now.len() >= PINNED.len(), "too few CSVs: {now:?}");
    if std::env::var_os("SYNCBENCH_BLESS").is_some() {
        let mut text = String::from(
            "# SHA-256 of the sim driver's CSVs (quick scale, seed 1); see tests/sim_golden.rs.\n",
        );
        for (k, v) in &now {
            text.push_str(&format!("{v}  {k}\n"));
        }
        std::fs::create_dir_all(golden_path().parent().unwrap()).unwrap();
        std::fs::write(golden_path(), text).unwrap();
    }
    let pinned = parse(&std::fs::read_to_string(golden_path()).unwrap());
    let changed: Vec<String> = now
        .iter()
        .filter(|(k, v)| pinned.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .chain(pinned.keys().filter(|k| !now.contains_key(*k)).cloned())
        .collect();
    let _ = std::fs::remove_dir_all(&out);
    assert!(
        changed.is_empty(),
        "sim CSV bytes changed (or files appeared or vanished): {changed:?}; if intended, re-run with SYNCBENCH_BLESS=1 and commit tests/golden/sim-csv.sha256"
    );
}

/// Every CSV under `dir` (recursively), by path relative to `dir`, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if p.extension().is_some_and(|x| x == "csv") {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn several_seeds_hold_each_seeds_own_bytes() {
    let exe = env!("CARGO_BIN_EXE_ps-modes");
    let root = common::tmpdir("seeds");
    let run = |args: &[&str], out: &Path| {
        let o = Command::new(exe)
            .args(["--scale", "quick", "--driver", "sim", "--out"])
            .arg(out)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        files(&out.join("ps-modes"))
    };
    // Two seeds at a time (sim only), and one at a time: the same bytes, every file.
    let three = run(
        &["--seed", "4", "--seeds", "3", "--jobs", "2"],
        &root.join("three"),
    );
    let serial = run(
        &["--seed", "4", "--seeds", "3", "--jobs", "1"],
        &root.join("serial"),
    );
    assert_eq!(
        three.keys().collect::<Vec<_>>(),
        serial.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &serial {
        assert_eq!(three.get(name), Some(bytes), "--jobs 2: {name} differs");
    }
    for (k, seed) in ["4", "5", "6"].into_iter().enumerate() {
        let alone = run(&["--seed", seed, "--seeds", "1"], &root.join(seed));
        let prefix = if k == 0 {
            String::new()
        } else {
            format!("seeds/{seed}/")
        };
        for (name, bytes) in &alone {
            // Each seed's own claims are under seeds/<seed>/; the top-level claims.csv aggregates.
            let key = if name == "claims.csv" {
                format!("seeds/{seed}/claims.csv")
            } else {
                format!("{prefix}{name}")
            };
            assert_eq!(three.get(&key), Some(bytes), "seed {seed}: {key} differs");
        }
    }
    let claims = String::from_utf8(three["claims.csv"].clone()).unwrap();
    assert!(
        claims.starts_with(
            "claim_id,statement,paper_value,measured_value,verdict,seeds,passes,median,min,max,kind,class,why\n"
        ),
        "{claims}"
    );
    assert!(
        claims.contains(",3,3,"),
        "every ps-modes claim is evaluated by all 3 seeds: {claims}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
