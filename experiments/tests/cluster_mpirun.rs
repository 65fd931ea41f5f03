//! The cluster driver started by Open MPI's `mpirun -n 4` (ranks from OMPI_COMM_WORLD_*, the
//! bootstrap over TCP through rank 0). Where `mpirun` is not installed (Debian: openmpi-bin),
//! the test prints why and does nothing; CI installs it.

mod common;

use std::process::Command;

#[test]
fn ps_modes_under_mpirun_with_four_ranks() {
    under_mpirun(&[], "rank from OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE");
}

/// With the `mpi` feature: MPI gives the ranks and rank 0's address; no root is configured.
#[cfg(feature = "mpi")]
#[test]
fn ps_modes_under_mpirun_bootstrapped_through_mpi() {
    under_mpirun(&["--bootstrap", "mpi"], "rank from MPI");
}

fn under_mpirun(extra: &[&str], source: &str) {
    if Command::new("mpirun").arg("--version").output().is_err() {
        eprintln!("SKIPPED: mpirun is not installed (Debian package openmpi-bin)");
        return;
    }
    let dir = common::tmpdir(&format!("mpirun-{}", extra.len()));
    let cfg = dir.join("cfg.toml");
    std::fs::write(&cfg, common::ps_config(4, 10, 50_000.0)).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let root = format!("127.0.0.1:{port}");
    let out = dir.join("out");
    let mut c = Command::new("mpirun");
    c.args(["--allow-run-as-root", "--oversubscribe", "-n", "4"]);
    if extra.is_empty() {
        c.args(["-x", &format!("SYNCBENCH_ROOT={root}")]);
    }
    let o = c
        .arg(env!("CARGO_BIN_EXE_ps-modes"))
        .args(extra)
        .args(["--driver", "cluster", "--out"])
        .arg(&out)
        .arg("--config")
        .arg(&cfg)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let iterations =
        std::fs::read_to_string(out.join("config/cfg/ps-modes/cluster-bsp/iterations.csv"))
            .unwrap();
    assert_eq!(iterations.lines().count(), 1 + 40);
    let manifest = std::fs::read_to_string(out.join("config/cfg/ps-modes/manifest.json")).unwrap();
    assert!(manifest.contains(source), "{manifest}");
}
