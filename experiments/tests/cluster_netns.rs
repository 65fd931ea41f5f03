//! The cluster driver across hosts: two network namespaces joined by a veth link stand for two
//! machines (rank 0 and rank 2 on host A, ranks 1 and 3 on host B), made inside this test and
//! removed after it. Where the machine does not permit it (not root, no `ip`, no namespaces),
//! the test prints why and does nothing.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs `ip` with `args`; the error output when it fails.
fn ip(args: &[&str]) -> Result<(), String> {
    let o = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run ip: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

/// Two namespaces joined by a veth pair; removed on drop.
struct Hosts {
    a: String,
    b: String,
    addr_a: String,
}

impl Hosts {
    fn make() -> Result<Self, String> {
        let id = std::process::id();
        let (a, b) = (format!("sb-a-{id}"), format!("sb-b-{id}"));
        let (va, vb) = (
            format!("sbva{}", id % 10_000_000),
            format!("sbvb{}", id % 10_000_000),
        );
        let net = format!("10.201.{}", id % 250);
        ip(&["netns", "add", &a])?;
        let hosts = Hosts {
            a: a.clone(),
            b: b.clone(),
            addr_a: format!("{net}.1"),
        };
        ip(&["netns", "add", &b])?;
        ip(&["link", "add", &va, "type", "veth", "peer", "name", &vb])?;
        ip(&["link", "set", &va, "netns", &a])?;
        ip(&["link", "set", &vb, "netns", &b])?;
        ip(&["-n", &a, "addr", "add", &format!("{net}.1/24"), "dev", &va])?;
        ip(&["-n", &b, "addr", "add", &format!("{net}.2/24"), "dev", &vb])?;
        for (ns, dev) in [(&a, &va), (&b, &vb)] {
            ip(&["-n", ns, "link", "set", dev, "up"])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        Ok(hosts)
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        // Deleting a namespace deletes its end of the veth pair, and with it the other end.
        let _ = ip(&["netns", "del", &self.a]);
        let _ = ip(&["netns", "del", &self.b]);
    }
}

fn config(dir: &Path) -> PathBuf {
    let p = dir.join("cfg.toml");
    std::fs::write(&p, common::ps_config(4, 12, 100_000.0)).unwrap();
    p
}

#[test]
fn ps_modes_across_two_hosts_made_of_network_namespaces() {
    let hosts = match Hosts::make() {
        Ok(h) => h,
        Err(why) => {
            eprintln!("SKIPPED: this machine does not permit network namespaces here: {why}");
            return;
        }
    };
    let dir = common::tmpdir("netns");
    let cfg = config(&dir);
    let out = dir.join("out");
    let root = format!("{}:29518", hosts.addr_a);
    let ranks: Vec<_> = (0..4)
        .map(|rank| {
            let ns = if rank % 2 == 0 { &hosts.a } else { &hosts.b };
            Command::new("ip")
                .args(["netns", "exec", ns])
                .arg(env!("CARGO_BIN_EXE_ps-modes"))
                .args(["--driver", "cluster", "--transport", "tcp", "--root", &root])
                .args(["--rank", &rank.to_string(), "--world-size", "4"])
                .arg("--out")
                .arg(&out)
                .arg("--config")
                .arg(&cfg)
                .env("SYNCBENCH_JOB_TOKEN", "5a5a")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (rank, c) in ranks.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        assert!(
            o.status.success(),
            "rank {rank}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let iterations =
        std::fs::read_to_string(out.join("config/cfg/ps-modes/cluster-bsp/iterations.csv"))
            .unwrap();
    assert_eq!(iterations.lines().count(), 1 + 48);
    let manifest = std::fs::read_to_string(out.join("config/cfg/ps-modes/manifest.json")).unwrap();
    assert!(
        manifest.contains(&format!("rank 0 at {root}")),
        "{manifest}"
    );
    let claims = std::fs::read_to_string(out.join("config/cfg/ps-modes/claims.csv")).unwrap();
    assert!(claims.contains("ps-modes/cluster/ssp-bound"), "{claims}");
}
