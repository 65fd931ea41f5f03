//! sim-validation end to end on two small modes: the table's columns, one recorded trace per
//! mode, the measured network, the claims; a run under the simulator is refused.

mod common;

use common::tmpdir;
use std::path::Path;
use std::process::{Command, Output};

fn small() -> String {
    include_str!("../configs/sim-validation.quick.toml")
        .replace("workers = 8", "workers = 4")
        .replace("worker = 4, factor", "worker = 2, factor")
        .replace("iterations = 250", "iterations = 40")
        .replace("eval_every = 16", "eval_every = 8")
        .replace("probe_messages = 2000", "probe_messages = 200")
        .replace("train_rows = 8000", "train_rows = 2000")
        .replace("ns_per_example = 100000.0", "ns_per_example = 20000.0")
        // the receive-buffer part ([torn]): 20 iterations, 4 peers (in-degree 3)
        .replace("iterations = 100", "iterations = 20")
        .replace("good_inputs = 5", "good_inputs = 2")
}

fn run(dir: &Path, cfg: &str, extra: &[&str]) -> Output {
    let path = dir.join("cfg.toml");
    std::fs::write(&path, cfg).unwrap();
    Command::new(env!("CARGO_BIN_EXE_sim-validation"))
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--config")
        .arg(&path)
        .args(["--seeds", "1"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn writes_the_validation_table_and_the_traces() {
    let dir = tmpdir("sv-ok");
    let cfg = small().replace(
        "modes = [\n    \"ps/bsp\",\n    \"ps/ssp3\",\n    \"ps/asp\",\n    \"async/bsp\",\n    \"async/asp\",\n    \"peer/ring-based/standard\",\n    \"peer/ring-based/backup1+tokens5\",\n]",
        "modes = [\"ps/bsp\", \"async/asp\"]",
    );
    assert!(cfg.contains("modes = [\"ps/bsp\", \"async/asp\"]"), "{cfg}");
    let o = run(&dir, &cfg, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.join("out/config/cfg/sim-validation");
    let v = std::fs::read_to_string(out.join("validation.csv")).unwrap();
    assert_eq!(
        v.lines().next(),
        Some("mode,quantity,measured,replay,replay_error,config,config_error")
    );
    assert_eq!(v.lines().count(), 1 + 2 * 4, "{v}");
    for t in ["ps_bsp.csv", "async_asp.csv"] {
        let trace = std::fs::read_to_string(out.join("traces").join(t)).unwrap();
        assert_eq!(trace.lines().next(), Some("worker,iter,compute_ns,wait_ns"));
        // BSP: every worker's 40 iterations, each at least the modelled 0.64 ms times its jitter
        // (log-normal, sigma 0.1)
        if t == "ps_bsp.csv" {
            assert_eq!(trace.lines().count(), 1 + 4 * 40);
            assert!(trace
                .lines()
                .skip(1)
                .all(|l| { l.split(',').nth(2).unwrap().parse::<u64>().unwrap() >= 400_000 }));
        }
    }
    let net = std::fs::read_to_string(out.join("network.csv")).unwrap();
    assert!(
        net.starts_with("transport,payload_bytes,latency_median_ns"),
        "{net}"
    );
    // the modes' payload and asap-fig7's receive buffers, both over the threads transport
    assert_eq!(
        net.lines()
            .skip(1)
            .filter(|l| l.starts_with("threads,"))
            .count(),
        2,
        "{net}"
    );
    let torn = std::fs::read_to_string(out.join("torn.csv")).unwrap();
    assert_eq!(
        torn.lines().next(),
        Some("mode,quantity,measured,predicted,predicted_error,config,config_error,error_unit")
    );
    // 3 reduce modes x (2 shares, the reduce rate); NOTIFY-ACK never tears, under either
    assert_eq!(torn.lines().count(), 1 + 3 * 3, "{torn}");
    assert!(
        torn.lines()
            .any(|l| l.starts_with("notify-ack,share_all_inputs,1.0,1.0,0.0,1.0,0.0,points")),
        "{torn}"
    );
    let claims = std::fs::read_to_string(out.join("claims.csv")).unwrap();
    assert!(
        claims.contains("sim-validation/makespan_s-within-10pct"),
        "{claims}"
    );
    assert!(
        claims.contains("sim-validation/torn-order-agrees")
            && claims.contains("sim-validation/torn-good-share-within-10pts"),
        "{claims}"
    );
    assert!(
        claims.contains("sim-validation/replay-beats-configuration"),
        "{claims}"
    );
}

#[test]
fn only_a_real_driver_is_validated() {
    let dir = tmpdir("sv-bad");
    let o = run(&dir, &small(), &["--driver", "sim"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("--driver threads"),
        "{err}"
    );
    let o = run(
        &dir,
        &small().replace("[stragglers]", "[stragglers]\ntrace = { path = \"x.csv\" }"),
        &[],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("make their own traces"),
        "{err}"
    );
    assert!(!dir.join("out/config/cfg/sim-validation").exists());
}
