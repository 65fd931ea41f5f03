//! `syncbench transport-bench` end to end on small sizes: the JSON carries, per backend and
//! size, latency percentiles, bandwidth and the ratio to its physical peer; bad flags fail.

use std::process::Command;

#[test]
fn json_has_percentiles_bandwidth_and_ratios() {
    let dir = std::env::temp_dir().join(format!("syncbench-tb-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("tb.json");
    let csv = dir.join("tb.csv");
    let o = Command::new(env!("CARGO_BIN_EXE_syncbench"))
        .args([
            "transport-bench",
            "--sizes",
            "2,4096",
            "--iters",
            "30",
            "--warmup",
            "3",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for (backend, ratio) in [
        ("threads", "ratio_to_memcpy"),
        ("shm", "ratio_to_memcpy"),
        ("tcp", "ratio_to_socket"),
    ] {
        for size in ["2", "4096"] {
            let p = &v["backends"][backend][size];
            for k in ["min", "median", "avg", "p99", "p999"] {
                assert!(
                    p["latency_ns"][k].as_f64().unwrap() > 0.0,
                    "{backend} {size} {k}"
                );
            }
            assert!(p["bandwidth_gbps"]["average"].as_f64().unwrap() > 0.0);
            assert!(p["bandwidth_gbps"]["peak"].as_f64().is_some());
            assert!(p[ratio].as_f64().unwrap() > 0.0, "{backend} {size}");
        }
    }
    assert!(
        v["baselines"]["memcpy"]["4096"]["bandwidth_gbps"]["average"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(v["cache_line_ping_pong_ns"]["median"].as_f64().unwrap() > 0.0);
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(rows.starts_with("backend,size_bytes,lat_min_ns"), "{rows}");
    // memcpy, raw socket, threads, shm, tcp at two sizes.
    assert_eq!(rows.lines().count(), 1 + 5 * 2, "{rows}");
    assert_eq!(v["depth"].as_u64(), Some(8));
    for bad in [
        ["--sizes", "0"],
        ["--backends", "carrier-pigeon"],
        ["--depth", "0"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_syncbench"))
            .arg("transport-bench")
            .args(bad)
            .output()
            .unwrap();
        assert!(!o.status.success(), "{bad:?} accepted");
    }
}
