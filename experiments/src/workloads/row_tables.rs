//! What the ESSP row-table workloads (matrix factorisation and LDA) share: the mode list
//! they run (BSP, then SSP(s) and ESSP(s)) and the manifest's line on how a clock reads rows.

use anyhow::{bail, Result};
use bench_core::protocol::SyncMode;

/// BSP, then SSP(s) and ESSP(s) for each s.
///
/// # Errors
/// For an empty list or a bound at or beyond the run length.
pub fn essp_modes(staleness: &[i64], clocks: u64) -> Result<Vec<SyncMode>> {
    if clocks == 0 || staleness.is_empty() {
        bail!("clocks and the staleness list must be non-empty");
    }
    let mut modes = vec![SyncMode::bsp()];
    for &s in staleness {
        if s < 0 || s as u64 >= clocks {
            bail!("staleness {s} must be in 0..{clocks} (the run length)");
        }
        modes.push(SyncMode::ssp(s));
        modes.push(SyncMode::essp(s));
    }
    Ok(modes)
}

/// How `part`'s clocks read their rows, for manifests.
pub fn steps_note(part: &str, steps_per_clock: Option<u64>, example: &str) -> String {
    match steps_per_clock {
        None => format!(
            "{part}: in-clock reads, one read-compute step per {example} (Bösen's computation threads GET rows as they go through the mini-batch; a push or answer that lands during a clock is read by its later steps; steps_per_clock unset)"
        ),
        Some(1) => format!("{part}: every row of a clock read when the clock begins (steps_per_clock = 1)"),
        Some(n) => format!(
            "{part}: in-clock reads, {n} read-compute steps per clock (at most one per {example})"
        ),
    }
}
