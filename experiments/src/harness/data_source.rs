//! Where an experiment's data comes from (`--data synthetic|real`) and what its workloads were
//! built on, as a value passed from the command line through the workload builders to the
//! manifest (no process-wide state).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where experiments take their data from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DataMode {
    /// Seeded synthetic twins of the datasets' shapes.
    Synthetic,
    /// The real files, fetched and verified with `syncbench datasets fetch`.
    Real,
}

/// An experiment's data mode, the device its CNN workloads compute on, and the provenance
/// lines its workload builders record.
#[derive(Debug)]
pub struct DataSource {
    mode: DataMode,
    device: bench_core::workload::CnnDevice,
    provenance: Mutex<Vec<String>>,
}

impl DataSource {
    /// Data from `mode`, nothing recorded yet.
    pub fn new(mode: DataMode) -> Self {
        DataSource {
            mode,
            device: bench_core::workload::CnnDevice::Cpu,
            provenance: Mutex::new(Vec::new()),
        }
    }

    /// The same, its CNN workloads computing on `device` (`--device`; the CPU otherwise).
    pub fn on(mut self, device: bench_core::workload::CnnDevice) -> Self {
        self.device = device;
        self
    }

    /// Where CNN workloads compute.
    pub fn device(&self) -> bench_core::workload::CnnDevice {
        self.device
    }

    /// Synthetic twins (experiments that read no dataset, and tests).
    pub fn synthetic() -> Self {
        Self::new(DataMode::Synthetic)
    }

    /// The data mode.
    pub fn mode(&self) -> DataMode {
        self.mode
    }

    /// Records a line of data provenance for the manifest (once per distinct line).
    pub fn record(&self, line: String) {
        let mut p = self.provenance.lock().unwrap_or_else(|e| e.into_inner());
        if !p.contains(&line) {
            p.push(line);
        }
    }

    /// What data the workloads were built on, sorted (runs may build their workloads at once,
    /// in any order: the manifest must not depend on it).
    pub fn provenance(&self) -> Vec<String> {
        let mut p = self
            .provenance
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        p.sort();
        p
    }
}

/// The lock file to use: `--lock`, else `./datasets.lock`, else the repository's.
pub fn lock_path(flag: Option<PathBuf>) -> PathBuf {
    flag.unwrap_or_else(|| {
        let here = PathBuf::from("datasets.lock");
        if here.is_file() {
            here
        } else {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets.lock")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_each_line_once_sorted() {
        let d = DataSource::new(DataMode::Real);
        d.record("b".into());
        d.record("a".into());
        d.record("b".into());
        assert_eq!(d.provenance(), ["a", "b"]);
        assert_eq!(d.mode(), DataMode::Real);
    }
}
