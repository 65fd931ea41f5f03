//! A committed baseline (`baselines/<testbed>.json`): the snapshot of a confirmed run with the
//! testbed's fingerprint, written only by `syncbench regress accept`.

use super::fingerprint::Fingerprint;
use super::snapshot::Snapshot;
use super::suite::Samples;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A baseline file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// The testbed's name (the file's stem by convention).
    pub testbed: String,
    /// Where it was measured.
    pub fingerprint: Fingerprint,
    /// Code revision of the accepted run (from its manifests).
    pub revision: String,
    /// When it was accepted (seconds since the Unix epoch).
    pub accepted_unix: u64,
    /// What the run produced.
    pub snapshot: Snapshot,
    /// The measured tiers' samples, taken when the baseline was accepted (none when accepted
    /// with `--rounds 0`, or by a version without the measured tiers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<Samples>,
    /// Whether this testbed's absolute numbers gate a comparison on it (a dedicated testbed) or
    /// are only listed (a shared virtual machine, whose neighbours move memory and loopback
    /// bandwidth by 30% from one stretch to the next: `regress accept --absolute info`).
    #[serde(default = "gate_by_default")]
    pub gate_absolute: bool,
}

fn gate_by_default() -> bool {
    true
}

impl Baseline {
    /// Reads a baseline.
    ///
    /// # Errors
    /// A missing or malformed file, named.
    pub fn read(path: &Path) -> Result<Baseline> {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!(
                "no baseline at {} (accept one from a confirmed run: syncbench regress accept --baseline {})",
                path.display(),
                path.display()
            )
        })?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a baseline file", path.display()))
    }

    /// Writes the baseline (whole or not at all: a temporary file renamed into place).
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write(&self, path: &Path) -> Result<()> {
        super::write_atomic(path, &(serde_json::to_string_pretty(self)? + "\n"))
    }
}
