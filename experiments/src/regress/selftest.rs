//! `syncbench regress selftest`: does the measured tier cry wolf, and does it catch a wolf?
//!
//! One baseline is measured, then `--repeat` unchanged measurements are compared with it
//! exactly as `syncbench regress` compares (a regression is measured again and must hold
//! twice): every confirmed regression among them is a false alarm. Then one measurement with
//! `shm-copy=1.3` injected (every shm write copies its payload 1.3 times) must be caught as a
//! confirmed regression of `shm/write-4MiB/word-copy`. Writes `selftest.json` (every comparison's
//! findings) to `--out` (default: the current directory).

use super::compare::{Finding, Outcome, Tier};
use super::fingerprint::Fingerprint;
use super::inject::Injection;
use super::{measure_suite, measured_findings, write_atomic, RegressArgs, EXIT_OK, EXIT_REGRESSED};
use anyhow::Result;
use serde::Serialize;
use std::path::PathBuf;

/// The metric the injection must show up in.
pub const INJECTED_METRIC: &str = "shm/write-4MiB/word-copy";

#[derive(Debug, Serialize)]
struct Comparison {
    injected: bool,
    regressed: Vec<String>,
    noisy: Vec<String>,
    findings: Vec<Finding>,
}

/// Runs the self-test; exit 0 when no unchanged comparison regressed and the injection was
/// caught.
///
/// # Errors
/// A measurement that fails, or an output that cannot be written.
pub fn run(args: &RegressArgs, here: &Fingerprint) -> Result<u8> {
    let rounds = usize::from(args.rounds.max(1));
    let gated = |f: &Finding| f.tier == Tier::Ratio || f.tier == Tier::Absolute;
    eprintln!(
        "regress selftest: a baseline of {rounds} rounds, {} unchanged comparisons, one with shm-copy=1.3",
        args.repeat
    );
    let base = measure_suite(rounds, Injection::none(), false)?;
    let mut runs = Vec::new();
    let inject = Injection { shm_copy: 1.3 };
    for k in 0..=args.repeat {
        let injected = k == args.repeat;
        let (findings, _) = measured_findings(
            &base,
            rounds,
            if injected { inject } else { Injection::none() },
            false,
            true,
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
            "{:>3} {:<9} regressed: [{}] noisy: [{}]",
            k + 1,
            if injected { "injected" } else { "unchanged" },
            c.regressed.join(", "),
            c.noisy.join(", ")
        );
        runs.push(c);
    }
    let (unchanged, injected) = runs.split_at(args.repeat);
    let false_alarms = unchanged.iter().filter(|c| !c.regressed.is_empty()).count();
    let noisy = unchanged.iter().filter(|c| !c.noisy.is_empty()).count();
    let caught = injected[0].regressed.iter().any(|m| m == INJECTED_METRIC);
    let ratio_of = |c: &Comparison| {
        c.findings
            .iter()
            .find(|f| f.metric == INJECTED_METRIC)
            .and_then(|f| f.change)
    };
    println!(
        "false alarms: {false_alarms} of {} unchanged comparisons regressed (goal 0); {noisy} had noisy metrics",
        args.repeat
    );
    println!(
        "injected shm-copy=1.3: {} ({INJECTED_METRIC} at {:.2}x the baseline's median)",
        if caught { "caught" } else { "MISSED" },
        ratio_of(&injected[0]).unwrap_or(f64::NAN)
    );
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("."));
    write_atomic(
        &out.join("selftest.json"),
        &(serde_json::to_string_pretty(&serde_json::json!({
            "host": here.host,
            "cpu": here.cpu,
            "rounds": rounds,
            "repeat": args.repeat,
            "false_alarms": false_alarms,
            "comparisons_with_noisy_metrics": noisy,
            "injection": "shm-copy=1.3",
            "injection_caught": caught,
            "runs": runs,
        }))? + "\n"),
    )?;
    Ok(if false_alarms == 0 && caught {
        EXIT_OK
    } else {
        EXIT_REGRESSED
    })
}
