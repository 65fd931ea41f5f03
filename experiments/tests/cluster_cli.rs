//! The cluster driver as separate processes: `syncbench launch --ranks 4 -- ps-modes --driver
//! cluster` gives the threads driver's files and columns; a rank killed mid-run makes the others
//! stop with an error naming it, leaves no partial results, and keeps earlier results intact; a
//! process started as a rank without the cluster driver is refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::tmpdir;
use common::{ps_config, ASAP_SMALL};

/// ps-modes on 4 workers; `iterations` sets the length (BSP runs ~3 ms per iteration).
fn config(dir: &Path, iterations: u64) -> PathBuf {
    let p = dir.join("cfg.toml");
    std::fs::write(&p, ps_config(4, iterations, 200_000.0)).unwrap();
    p
}

/// Every file of a results directory with its CSV header line (JSON files: their name only).
fn schema(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
            let header = if rel.ends_with(".csv") {
                std::fs::read_to_string(&p)
                    .unwrap()
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string()
            } else {
                String::new()
            };
            out.push((rel, header));
        }
    }
    out.sort();
    out
}

fn shm_segments() -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| n.starts_with("syncbench-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn four_ranks_over_tcp_give_the_threads_schema() {
    four_ranks_give_the_threads_schema("tcp");
}

#[test]
fn four_ranks_over_shm_give_the_threads_schema_and_leave_no_segments() {
    let before = shm_segments();
    four_ranks_give_the_threads_schema("shm");
    let after: Vec<String> = shm_segments()
        .into_iter()
        .filter(|s| !before.contains(s))
        .collect();
    assert!(after.is_empty(), "left in /dev/shm: {after:?}");
}

/// Over libfabric, on the provider libfabric finds first here (any of tcp;ofi_rxm, shm,
/// sockets).
#[cfg(feature = "ofi")]
#[test]
fn four_ranks_over_ofi_give_the_threads_schema() {
    four_ranks_give_the_threads_schema("ofi");
}

#[test]
fn an_ofi_provider_without_the_ofi_transport_is_refused() {
    let dir = tmpdir("ofi-provider-alone");
    let out = Command::new(env!("CARGO_BIN_EXE_ps-modes"))
        .args([
            "--driver",
            "cluster",
            "--transport",
            "tcp",
            "--ofi-provider",
            "shm",
        ])
        .args(["--rank", "0", "--world-size", "1", "--out"])
        .arg(dir.join("results"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("--ofi-provider shm needs --transport ofi"),
        "{err}"
    );
    assert!(!dir.join("results").exists());
}

fn four_ranks_give_the_threads_schema(transport: &str) {
    let dir = tmpdir(&format!("schema-{transport}"));
    let cfg = config(&dir, 12);
    let (cluster, threads) = (dir.join("cluster"), dir.join("threads"));
    let out = Command::new(env!("CARGO_BIN_EXE_syncbench"))
        .args(["launch", "--ranks", "4", "--"])
        .arg(env!("CARGO_BIN_EXE_ps-modes"))
        .args(["--driver", "cluster", "--transport", transport, "--out"])
        .arg(&cluster)
        .arg("--config")
        .arg(&cfg)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // One rank wrote, the others wrote nothing.
    assert_eq!(err.matches("claims passed").count(), 1, "{err}");
    // The cluster driver runs exactly --seeds; the threads run's real-time verdicts may split
    // and ask for further seeds, so it is held to the same three to write the same files.
    let out = Command::new(env!("CARGO_BIN_EXE_ps-modes"))
        .args(["--driver", "threads", "--max-seeds", "3", "--out"])
        .arg(&threads)
        .arg("--config")
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rename = |s: Vec<(String, String)>, from: &str| -> Vec<(String, String)> {
        let mut s: Vec<_> = s
            .into_iter()
            .map(|(f, h)| (f.replace(from, "DRIVER"), h))
            .collect();
        s.sort();
        s
    };
    let c = rename(schema(&cluster.join("config/cfg/ps-modes")), "cluster");
    let t = rename(schema(&threads.join("config/cfg/ps-modes")), "threads");
    assert_eq!(c, t);
    let iterations =
        std::fs::read_to_string(cluster.join("config/cfg/ps-modes/cluster-bsp/iterations.csv"))
            .unwrap();
    // 4 workers x 12 iterations, every worker present (they ran on ranks 1, 2, 3 and 0).
    assert_eq!(iterations.lines().count(), 1 + 48);
    let manifest =
        std::fs::read_to_string(cluster.join("config/cfg/ps-modes/manifest.json")).unwrap();
    let over = match transport {
        "tcp" => "Tcp",
        "shm" => "Shm",
        _ => "Ofi",
    };
    assert!(
        manifest.contains(&format!("4 ranks over {over}")),
        "{manifest}"
    );
    let claims = std::fs::read_to_string(cluster.join("config/cfg/ps-modes/claims.csv")).unwrap();
    assert!(claims.contains("ps-modes/cluster/ssp-bound"), "{claims}");
}

#[test]
fn a_killed_rank_stops_the_others_naming_it_over_tcp() {
    a_killed_rank_stops_the_others_naming_it("tcp");
}

#[test]
fn a_killed_rank_stops_the_others_naming_it_over_shm() {
    a_killed_rank_stops_the_others_naming_it("shm");
}

#[cfg(feature = "ofi")]
#[test]
fn a_killed_rank_stops_the_others_naming_it_over_ofi() {
    a_killed_rank_stops_the_others_naming_it("ofi");
}

fn a_killed_rank_stops_the_others_naming_it(transport: &str) {
    let dir = tmpdir(&format!("kill-{transport}"));
    let out = dir.join("results");
    // An earlier, completed result that must survive the failed run.
    std::fs::create_dir_all(out.join("config/cfg/ps-modes")).unwrap();
    std::fs::write(out.join("config/cfg/ps-modes/claims.csv"), "earlier\n").unwrap();
    let cfg = config(&dir, 4000);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut ranks: Vec<_> = (0..4)
        .map(|rank| {
            Command::new(env!("CARGO_BIN_EXE_ps-modes"))
                .args([
                    "--driver",
                    "cluster",
                    "--transport",
                    transport,
                    "--cluster-timeout-ms",
                    "5000",
                    "--out",
                ])
                .arg(&out)
                .arg("--config")
                .arg(&cfg)
                .env("SYNCBENCH_RANK", rank.to_string())
                .env("SYNCBENCH_SIZE", "4")
                .env("SYNCBENCH_ROOT", format!("127.0.0.1:{port}"))
                .env(
                    "SYNCBENCH_JOB_TOKEN",
                    match transport {
                        "tcp" => "feed",
                        "shm" => "beef",
                        _ => "cafe",
                    },
                )
                .stderr(Stdio::piped())
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    // Let the first run get going (4000 BSP iterations take far longer than this), then kill
    // rank 2.
    std::thread::sleep(Duration::from_millis(2500));
    assert!(ranks[2].try_wait().unwrap().is_none(), "rank 2 ended early");
    ranks[2].kill().unwrap();
    let _ = ranks[2].wait();
    let killed_at = Instant::now();
    for (rank, c) in ranks.into_iter().enumerate() {
        if rank == 2 {
            continue;
        }
        let o = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "rank {rank} succeeded: {err}");
        assert!(err.contains("rank 2"), "rank {rank}: {err}");
    }
    // Well within the 60 s stall timeout and the 5 s cluster timeout plus start-up.
    let took = killed_at.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "the others took {took:?} to stop"
    );
    // Nothing partial: the earlier result is intact and no temporary directory is left.
    assert_eq!(
        std::fs::read_to_string(out.join("config/cfg/ps-modes/claims.csv")).unwrap(),
        "earlier\n"
    );
    let left: Vec<_> = std::fs::read_dir(out.join("config/cfg"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(left, vec!["ps-modes".to_string()], "{left:?}");
}

#[test]
fn a_rank_without_the_cluster_driver_is_refused() {
    let dir = tmpdir("refuse");
    let cfg = config(&dir, 4);
    let o = Command::new(env!("CARGO_BIN_EXE_ps-modes"))
        .args(["--driver", "threads", "--out"])
        .arg(dir.join("r"))
        .arg("--config")
        .arg(&cfg)
        .env("OMPI_COMM_WORLD_RANK", "1")
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("add --driver cluster"), "{err}");
    assert!(!dir.join("r").exists());
}

#[test]
fn an_experiment_without_drivers_refuses_to_run_as_a_rank() {
    let dir = tmpdir("refuse-gap");
    let o = Command::new(env!("CARGO_BIN_EXE_asap-spectral-gap"))
        .arg("--out")
        .arg(dir.join("r"))
        .env("SLURM_PROCID", "0")
        .env("SLURM_NTASKS", "3")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("rank 0 of 3 (SLURM_PROCID/SLURM_NTASKS)"),
        "{err}"
    );
    assert!(!dir.join("r").exists());
}

#[test]
fn launch_reports_a_binary_that_cannot_start() {
    let o = Command::new(env!("CARGO_BIN_EXE_syncbench"))
        .args(["launch", "--ranks", "2", "--", "/nonexistent/binary"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("cannot start /nonexistent/binary"), "{err}");
}

#[test]
fn asap_fig7_on_four_ranks_gives_the_threads_schema() {
    let dir = tmpdir("asap7");
    let cfg = dir.join("cfg.toml");
    std::fs::write(&cfg, ASAP_SMALL).unwrap();
    let run = |driver: &str, out: &Path, launch: bool| {
        let mut c = if launch {
            let mut c = Command::new(env!("CARGO_BIN_EXE_syncbench"));
            c.args(["launch", "--ranks", "4", "--"])
                .arg(env!("CARGO_BIN_EXE_asap-fig7"));
            c
        } else {
            Command::new(env!("CARGO_BIN_EXE_asap-fig7"))
        };
        // The cluster driver runs exactly --seeds; the threads run is held to the same seeds
        // (real-time verdicts may split and ask for more) so the two write the same files.
        let o = c
            .args(["--driver", driver, "--max-seeds", "3", "--out"])
            .arg(out)
            .arg("--config")
            .arg(&cfg)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let (cluster, threads) = (dir.join("cluster"), dir.join("threads"));
    run("cluster", &cluster, true);
    run("threads", &threads, false);
    assert_eq!(
        schema(&cluster.join("config/cfg/asap-fig7")),
        schema(&threads.join("config/cfg/asap-fig7"))
    );
    let reduces =
        std::fs::read_to_string(cluster.join("config/cfg/asap-fig7/reduces.csv")).unwrap();
    // 3 modes x 8 peers x 12 reduces.
    assert_eq!(reduces.lines().count(), 1 + 3 * 8 * 12);
    let notify_ack: Vec<&str> = reduces
        .lines()
        .filter(|l| l.starts_with("notify-ack,"))
        .collect();
    assert_eq!(notify_ack.len(), 96);
    assert!(
        notify_ack.iter().all(|l| l.ends_with(",7,7")),
        "NOTIFY-ACK reduced a torn buffer across processes"
    );
}

/// sim-validation measured as a cluster job (2 ranks over tcp): every rank runs the measured
/// runs, rank 0 alone measures the tcp transport, replays the traces and writes, and the table,
/// the receive-buffer part and the network it was predicted over say which transport it was.
#[test]
fn sim_validation_measures_a_cluster_job_over_tcp() {
    let dir = tmpdir("sv-cluster");
    let cfg = dir.join("cfg.toml");
    let text = include_str!("../configs/sim-validation.quick.toml")
        .replace("workers = 8", "workers = 4")
        .replace("worker = 4, factor", "worker = 2, factor")
        .replace("iterations = 250", "iterations = 30")
        .replace("eval_every = 16", "eval_every = 8")
        .replace("probe_messages = 2000", "probe_messages = 200")
        .replace("train_rows = 8000", "train_rows = 2000")
        .replace("ns_per_example = 100000.0", "ns_per_example = 20000.0")
        .replace("iterations = 100", "iterations = 20")
        .replace("good_inputs = 5", "good_inputs = 2")
        .replace(
            "modes = [\n    \"ps/bsp\",\n    \"ps/ssp3\",\n    \"ps/asp\",\n    \"async/bsp\",\n    \"async/asp\",\n    \"peer/ring-based/standard\",\n    \"peer/ring-based/backup1+tokens5\",\n]",
            "modes = [\"ps/bsp\", \"peer/ring-based/standard\"]",
        );
    assert!(text.contains("modes = [\"ps/bsp\", \"peer/ring-based/standard\"]"));
    std::fs::write(&cfg, text).unwrap();
    let out = dir.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_syncbench"))
        .args(["launch", "--ranks", "2", "--"])
        .arg(env!("CARGO_BIN_EXE_sim-validation"))
        .args(["--driver", "cluster", "--transport", "tcp", "--seeds", "1"])
        .arg("--out")
        .arg(&out)
        .arg("--config")
        .arg(&cfg)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(err.matches("claims passed").count(), 1, "{err}");
    let sv = out.join("config/cfg/sim-validation");
    let v = std::fs::read_to_string(sv.join("validation.csv")).unwrap();
    assert_eq!(v.lines().count(), 1 + 2 * 4, "{v}");
    let net = std::fs::read_to_string(sv.join("network.csv")).unwrap();
    // the modes' payload and the receive buffers', both over tcp
    assert_eq!(
        net.lines()
            .skip(1)
            .filter(|l| l.starts_with("tcp,"))
            .count(),
        2,
        "{net}"
    );
    let torn = std::fs::read_to_string(sv.join("torn.csv")).unwrap();
    assert_eq!(torn.lines().count(), 1 + 3 * 3, "{torn}");
    let trace = std::fs::read_to_string(sv.join("traces/ps_bsp.csv")).unwrap();
    assert_eq!(
        trace.lines().count(),
        1 + 4 * 30,
        "every worker of both ranks"
    );
    let manifest = std::fs::read_to_string(sv.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("measured under the cluster driver; its tcp transport")
            && manifest.contains("2 ranks over Tcp"),
        "{manifest}"
    );
}
