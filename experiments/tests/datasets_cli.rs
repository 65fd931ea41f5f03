//! `syncbench datasets inspect` on a generated RCV1-shaped LIBSVM file and on a bad one.

use bench_core::data::{write_libsvm, Rcv1Shape};
use std::path::Path;
use std::process::Command;

#[test]
fn inspect_reports_shape_and_rejects_bad_lines() {
    let dir = std::env::temp_dir().join(format!("syncbench-datasets-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let m = Rcv1Shape::with_rows(500).generate(2);
    let good = dir.join("rcv1-twin.svm");
    let mut f = std::fs::File::create(&good).unwrap();
    write_libsvm(&m, &mut f, Path::new("rcv1-twin.svm")).unwrap();
    drop(f);
    let o = Command::new(env!("CARGO_BIN_EXE_syncbench"))
        .args(["datasets", "inspect", "--json", "--features", "47236"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows"], 500);
    assert_eq!(v["features"], 47236);
    assert_eq!(v["nnz"].as_u64().unwrap() as usize, m.nnz());
    let labels = v["labels"].as_object().unwrap();
    let total: u64 = labels.values().map(|c| c.as_u64().unwrap()).sum();
    assert_eq!(total, 500);
    let bad = dir.join("bad.svm");
    std::fs::write(&bad, "+1 1:1 2:2\n-1 3:1 47237:5\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_syncbench"))
        .args(["datasets", "inspect", "--features", "47236"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.svm:2:8:") && err.contains("47237"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
