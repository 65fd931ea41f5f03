//! The testbed a measurement was taken on: CPU, cores, kernel, and the RDMA devices with their
//! firmware, link layer, state and rate, read from `/proc` and `/sys` (no tool needed). Absolute
//! numbers (GB/s, µs) are only comparable between runs with equal fingerprints.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// What identifies a testbed for regression tracking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Host name (informative: two hosts of one testbed may share a baseline).
    pub host: String,
    /// CPU model name from `/proc/cpuinfo`.
    pub cpu: String,
    /// Logical cores.
    pub cores: usize,
    /// Kernel release.
    pub kernel: String,
    /// RDMA devices (`/sys/class/infiniband`), one entry per device and port.
    pub rdma: Vec<RdmaPort>,
    /// The numeric platform ([`bench_core::metrics::numeric_platform`]): sim bytes are promised equal within one,
    /// whatever the CPU model, instruction-set level or caches. Empty in older baselines.
    #[serde(default)]
    pub numeric: String,
}

/// One port of one RDMA device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RdmaPort {
    /// Device name (e.g. mlx5_0).
    pub device: String,
    /// Port number.
    pub port: u32,
    /// Firmware version.
    pub firmware: String,
    /// InfiniBand or Ethernet.
    pub link_layer: String,
    /// Port state, e.g. "4: ACTIVE".
    pub state: String,
    /// Link rate, e.g. "100 Gb/sec (4X EDR)".
    pub rate: String,
}

impl RdmaPort {
    /// Whether the port can carry traffic.
    pub fn active(&self) -> bool {
        self.state.contains("ACTIVE")
    }
}

impl Fingerprint {
    /// This machine's fingerprint.
    pub fn here() -> Fingerprint {
        Fingerprint {
            host: bench_core::metrics::hostname(),
            cpu: bench_core::metrics::cpu_model(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            kernel: read_trim(Path::new("/proc/sys/kernel/osrelease")),
            rdma: rdma_ports(Path::new("/sys/class/infiniband")),
            numeric: bench_core::metrics::numeric_platform(),
        }
    }

    /// Whether absolute numbers measured under `other` compare with ours: same CPU, cores,
    /// kernel and RDMA ports (firmware, link layer, rate; the host name may differ).
    pub fn matches(&self, other: &Fingerprint) -> bool {
        let ports = |f: &Fingerprint| {
            f.rdma
                .iter()
                .map(|p| {
                    (
                        p.device.clone(),
                        p.port,
                        p.firmware.clone(),
                        p.link_layer.clone(),
                        p.rate.clone(),
                    )
                })
                .collect::<Vec<_>>()
        };
        self.cpu == other.cpu
            && self.cores == other.cores
            && self.kernel == other.kernel
            && ports(self) == ports(other)
    }

    /// Whether any RDMA port is active.
    pub fn has_active_rdma(&self) -> bool {
        self.rdma.iter().any(RdmaPort::active)
    }
}

fn read_trim(path: &Path) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Every port of every device under `root` (`/sys/class/infiniband` layout), sorted.
pub fn rdma_ports(root: &Path) -> Vec<RdmaPort> {
    let mut out = Vec::new();
    let Ok(devices) = std::fs::read_dir(root) else {
        return out;
    };
    for dev in devices.flatten() {
        let device = dev.file_name().to_string_lossy().to_string();
        let firmware = read_trim(&dev.path().join("fw_ver"));
        let Ok(ports) = std::fs::read_dir(dev.path().join("ports")) else {
            continue;
        };
        for p in ports.flatten() {
            let Ok(port) = p.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            out.push(RdmaPort {
                device: device.clone(),
                port,
                firmware: firmware.clone(),
                link_layer: read_trim(&p.path().join("link_layer")),
                state: read_trim(&p.path().join("state")),
                rate: read_trim(&p.path().join("rate")),
            });
        }
    }
    out.sort_by(|a, b| (&a.device, a.port).cmp(&(&b.device, b.port)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake sysfs tree: one device, an active and a down port.
    #[test]
    fn rdma_ports_are_read_from_a_sysfs_tree() {
        let root = std::env::temp_dir().join(format!("syncbench-fp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (port, state) in [("1", "4: ACTIVE"), ("2", "1: DOWN")] {
            let p = root.join("mlx5_0/ports").join(port);
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("state"), format!("{state}\n")).unwrap();
            std::fs::write(p.join("link_layer"), "Ethernet\n").unwrap();
            std::fs::write(p.join("rate"), "100 Gb/sec (4X EDR)\n").unwrap();
        }
        std::fs::write(root.join("mlx5_0/fw_ver"), "16.35.1012\n").unwrap();
        let ports = rdma_ports(&root);
        assert_eq!(ports.len(), 2);
        assert_eq!(ports[0].port, 1);
        assert!(ports[0].active() && !ports[1].active());
        assert_eq!(ports[1].firmware, "16.35.1012");
        let mut f = Fingerprint::here();
        f.rdma = ports.clone();
        assert!(f.has_active_rdma());
        let mut g = f.clone();
        g.host = "other".into();
        assert!(
            f.matches(&g),
            "the host name alone does not make another testbed"
        );
        g.rdma[0].firmware = "16.35.2000".into();
        assert!(!f.matches(&g), "a firmware change does");
        assert!(rdma_ports(&root.join("absent")).is_empty());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
