//! The fault matrix as a markdown table (`results/faults/REPORT.md`).

use super::*;

/// The matrix as a markdown table, with a header saying how it was made.
pub fn report(rows: &[Observation]) -> String {
    let mut s = String::new();
    s.push_str("# Fault matrix\n\n");
    s.push_str(&format!(
        "A {RANKS}-rank ps-modes job (cluster driver, tcp, one host) with one fault each; cluster timeout {CLUSTER_TIMEOUT_MS} ms, stall timeout {STALL_TIMEOUT_MS} ms. \
Exit codes by rank (`killed`: the rank the fault ended); stop time: from the fault to the last other rank's exit. \
Results: an earlier `ps-modes/claims.csv` must be unchanged and nothing else left in the results directory.\n\n"
    ));
    s.push_str("| fault | exit codes (rank 0..3) | others stopped in | earlier results | left in results/ | what the others said (rank 1, or rank 0 when rank 1 is the one) |\n|---|---|---|---|---|---|\n");
    for o in rows {
        let codes: Vec<String> = o
            .exit_codes
            .iter()
            .map(|c| c.map_or("killed".to_string(), |c| c.to_string()))
            .collect();
        let left = if o.leftovers.is_empty() {
            "nothing".to_string()
        } else {
            format!(
                "{} ({})",
                o.leftovers.join(", "),
                match o.swept_by_next_run {
                    Some(true) => "removed by the next run",
                    Some(false) => "NOT removed by the next run",
                    None => "",
                }
            )
        };
        let said = o
            .messages
            .get(1)
            .filter(|m| !m.is_empty() && o.exit_codes.get(1).is_some_and(|c| c.is_some()))
            .or_else(|| o.messages.first())
            .cloned()
            .unwrap_or_default();
        s.push_str(&format!(
            "| {} | {} | {:.2} s | {} | {} | {} |\n",
            o.name,
            codes.join(" "),
            o.stop_seconds,
            if o.earlier_results_intact {
                "intact".to_string()
            } else if o.exit_codes.iter().all(|c| *c == Some(0)) {
                format!(
                    "replaced by the completed run ({} strangers rejected)",
                    o.rejected_strangers
                )
            } else {
                "CHANGED".to_string()
            },
            left,
            said.replace('|', "/")
        ));
    }
    s
}
