//! `syncbench regress selftest`: does the measured tier cry wolf, and does it catch a wolf?
//!
//! One baseline is measured (twice the rounds, as `regress accept` measures), then `--repeat` unchanged measurements and `--repeat / 4`
//! measurements with `shm-copy=1.3` injected (every shm write takes 1.3 times as long), spread
//! evenly among them so that a slow stretch of a shared machine does not land on one kind
//! only, are compared with it exactly as `syncbench regress` compares (a regression is measured
//! again and must hold twice). Every confirmed regression of an unchanged comparison is a false
//! alarm; an injected comparison is caught when `shm/write-4MiB/word-copy` (ratio tier) or
//! `shm/write-4MiB` (absolute tier: this machine is the baseline's testbed) is a confirmed
//! regression. Writes `selftest.json` (every comparison's findings) to `--out` (default: the
//! current directory). Exit 0 when no false alarm was raised and every injection was caught.

use super::compare::{Finding, Outcome, Tier};
use super::fingerprint::Fingerprint;
use super::inject::Injection;
use super::{measure_suite, measured_findings, write_atomic, RegressArgs, EXIT_OK, EXIT_REGRESSED};
use anyhow::Result;
use serde::Serialize;
use std::path::PathBuf;

/// The injected regression's metric in the ratio tier.
pub const INJECTED_RATIO: &str = "shm/write-4MiB/word-copy";
/// The injected regression's metric in the absolute tier.
pub const INJECTED_ABSOLUTE: &str = "shm/write-4MiB";

#[derive(Debug, Serialize)]
struct Comparison {
    injected: bool,
    regressed: Vec<String>,
    noisy: Vec<String>,
    findings: Vec<Finding>,
}

impl Comparison {
    fn caught_by(&self, metric: &str) -> bool {
        self.regressed.iter().any(|m| m == metric)
    }

    fn change(&self, metric: &str) -> f64 {
        self.findings
            .iter()
            .find(|f| f.metric == metric)
            .and_then(|f| f.change)
            .unwrap_or(f64::NAN)
    }
}

/// Runs the self-test; exit 0 when no unchanged comparison regressed and every injection was
/// caught.
///
/// # Errors
/// A measurement that fails, or an output that cannot be written.
pub fn run(args: &RegressArgs, here: &Fingerprint) -> Result<u8> {
    let rounds = usize::from(args.rounds.max(1));
    let injections = (args.repeat / 4).max(1);
    let total = args.repeat + injections;
    let injected_at = injected_positions(total, injections);
    let gated = |f: &Finding| f.tier == Tier::Ratio || f.tier == Tier::Absolute;
    eprintln!(
        "regress selftest: a baseline of {rounds} rounds, {} unchanged comparisons, {injections} with shm-copy=1.3",
        args.repeat
    );
    let base = measure_suite(2 * rounds, Injection::none(), false)?;
    let mut runs = Vec::new();
    let inject = Injection { shm_copy: 1.3 };
    for k in 0..total {
        let injected = injected_at.contains(&k);
        let (findings, _) = measured_findings(
            &base,
            rounds,
            if injected { inject } else { Injection::none() },
            false,
            args.absolute == super::Absolute::Gate,
        )?;
        let names = |o: Outcome| -> Vec<String> {
            findings
                .iter()
                .filter(|f| gated(f) && f.outcome == o)
                .map(|f| f.metric.clone())
                .collect()
        };
        let c = Comparison {
            injected,
            regressed: names(Outcome::Regressed),
            noisy: names(Outcome::Noisy),
            findings,
        };
        println!(
            "{:>3} {:<9} {} {:.2}x  regressed: [{}] noisy: [{}]",
            k + 1,
            if injected { "injected" } else { "unchanged" },
            INJECTED_RATIO,
            c.change(INJECTED_RATIO),
            c.regressed.join(", "),
            c.noisy.join(", ")
        );
        runs.push(c);
    }
    let unchanged: Vec<&Comparison> = runs.iter().filter(|c| !c.injected).collect();
    let injected: Vec<&Comparison> = runs.iter().filter(|c| c.injected).collect();
    let false_alarms = unchanged.iter().filter(|c| !c.regressed.is_empty()).count();
    let noisy = unchanged.iter().filter(|c| !c.noisy.is_empty()).count();
    let by_ratio = injected
        .iter()
        .filter(|c| c.caught_by(INJECTED_RATIO))
        .count();
    let by_absolute = injected
        .iter()
        .filter(|c| c.caught_by(INJECTED_ABSOLUTE))
        .count();
    let caught = injected
        .iter()
        .filter(|c| c.caught_by(INJECTED_RATIO) || c.caught_by(INJECTED_ABSOLUTE))
        .count();
    let bystanders: Vec<String> = injected
        .iter()
        .flat_map(|c| c.regressed.iter())
        .filter(|m| !m.starts_with("shm/"))
        .cloned()
        .collect();
    let changes: Vec<String> = injected
        .iter()
        .map(|c| format!("{:.2}x", c.change(INJECTED_RATIO)))
        .collect();
    println!(
        "false alarms: {false_alarms} of {} unchanged comparisons regressed (goal 0); {noisy} had noisy metrics",
        args.repeat
    );
    println!(
        "injected shm-copy=1.3: caught {caught} of {injections} (ratio tier {by_ratio}, absolute tier {by_absolute}); {INJECTED_RATIO} at [{}] of the baseline's median; other metrics regressed in injected comparisons: [{}]",
        changes.join(", "),
        bystanders.join(", ")
    );
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("."));
    write_atomic(
        &out.join("selftest.json"),
        &(serde_json::to_string_pretty(&serde_json::json!({
            "host": here.host,
            "cpu": here.cpu,
            "rounds": rounds,
            "unchanged": args.repeat,
            "false_alarms": false_alarms,
            "comparisons_with_noisy_metrics": noisy,
            "injection": "shm-copy=1.3",
            "injected": injections,
            "caught": caught,
            "caught_by_ratio_tier": by_ratio,
            "caught_by_absolute_tier": by_absolute,
            "runs": runs,
        }))? + "\n"),
    )?;
    Ok(if false_alarms == 0 && caught == injections {
        EXIT_OK
    } else {
        EXIT_REGRESSED
    })
}

/// Where among `total` comparisons the `injections` injected ones go: evenly spaced, the
/// middle of each of `injections` equal stretches.
fn injected_positions(total: usize, injections: usize) -> Vec<usize> {
    (0..injections)
        .map(|i| (2 * i + 1) * total / (2 * injections))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injections_are_spread_among_the_unchanged_comparisons() {
        assert_eq!(injected_positions(25, 5), vec![2, 7, 12, 17, 22]);
        assert_eq!(injected_positions(2, 1), vec![1]);
        let at = injected_positions(13, 3);
        assert!(at.windows(2).all(|w| w[0] < w[1]) && at.iter().all(|&k| k < 13));
    }
}
