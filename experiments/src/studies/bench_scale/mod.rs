//! bench-scale: how the simulator's cost grows with the worker count (the scale
//! targets). For every case of the configuration (ps-modes' SVM under SSP on a parameter
//! server, the same SVM on decentralized ring-based peers, control-only learning) and every
//! worker count, one sim run in a process of its own: wall time, events/s and peak memory.
//! Writes results/bench-scale/scale.csv, claims on the targets, and the manifest. Not part of
//! `make reproduce-all` (minutes of CPU); `make bench-scale` runs and draws it.

pub mod memory_floor;
pub mod point;

use crate::harness::experiment::{self, Experiment, NoArgs, Run};
use crate::studies::bench_scale::memory_floor::{cold_read_s, POOL_BYTES};
use crate::studies::bench_scale::point::{
    child_main, fitted_exponent, measure, CaseLearning, PointResult, PointSpec, ScaleCase,
    ScaleSetup, POINT_ENV,
};
use anyhow::{bail, Context, Result};
use bench_core::claims::Claim;
use bench_core::driver::DriverKind;
use serde::{Deserialize, Serialize};

const FIGURE: &str = "bench-scale";

/// The scale targets: an SVM parameter-server run of this many workers and clocks ...
const SVM_WORKERS: usize = 1024;
const SVM_CLOCKS: u64 = 1000;
/// ... within this many seconds and MiB ...
const SVM_WALL_S: f64 = 30.0;
const SVM_PEAK_MIB: f64 = 2048.0;
/// ... a control-only run of this many workers (at least) and clocks within this many seconds ...
const CONTROL_WORKERS: usize = 10_000;
const CONTROL_CLOCKS: u64 = 100;
const CONTROL_WALL_S: f64 = 30.0;
/// ... and the SVM run's cost growing at most this fast with the workers (ln wall over ln
/// workers, 64 to 1,024 workers at 1,000 clocks).
const MAX_EXPONENT: f64 = 1.05;

struct BenchScale;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    setup: ScaleSetup,
    cases: Vec<ScaleCase>,
}

#[derive(Debug, Clone, Serialize)]
struct ScaleRow {
    case: String,
    learning: String,
    system: String,
    clocks: u64,
    workers: usize,
    wall_s: f64,
    setup_s: f64,
    events: u64,
    events_per_s: f64,
    /// Wall microseconds per worker-clock: flat when the cost is linear in the work.
    us_per_worker_clock: f64,
    bytes: u64,
    iterations: u64,
    peak_mib: f64,
    /// Parameter-server SVM rows: the memory floor, `iterations` cold reads of one model
    /// (each applied update's base streamed from main memory once; see crate::studies::bench_scale::memory_floor),
    /// measured in this run. NaN for other rows.
    floor_s: f64,
    /// `wall_s / floor_s`: how far the simulation is from that floor (1.0 at it).
    x_floor: f64,
}

fn system(case: &ScaleCase) -> String {
    match (&case.mode, &case.graph) {
        (Some(m), _) => format!("ps {m}"),
        (_, Some(g)) => format!("peers {g}"),
        _ => "?".into(),
    }
}

impl Experiment for BenchScale {
    const BINARY: &'static str = FIGURE;
    const ABOUT: &'static str = "The simulator at scale: wall time, events/s and peak memory against the worker count, for ps-modes' SVM under SSP, the SVM on decentralized ring-based peers and control-only learning, each point in a process of its own (seeds are repetitions, one at a time). Writes results/bench-scale/: scale.csv, claims.csv (the scale targets), manifest.json. Not part of reproduce-all: `make bench-scale`.";
    const QUICK: &'static str = include_str!("../../../configs/bench-scale.quick.toml");
    const PAPER: &'static str = include_str!("../../../configs/bench-scale.paper.toml");
    const DEFAULT_DRIVERS: &'static [DriverKind] = &[DriverKind::Sim];
    const SEEDS_IN_PARALLEL: bool = false;
    type Config = Config;
    type Args = NoArgs;

    fn validate(cfg: &Config, _: &NoArgs, drivers: &[DriverKind]) -> Result<()> {
        if drivers != [DriverKind::Sim] {
            bail!("bench-scale measures the simulator: --driver sim only");
        }
        if cfg.cases.is_empty() {
            bail!("cases: at least one");
        }
        cfg.setup.svm.validate()?;
        for case in &cfg.cases {
            case.validate(&cfg.setup)?;
        }
        Ok(())
    }

    fn run(run: &mut Run<'_, Self>) -> Result<()> {
        let (cfg, seed) = (run.cfg, run.seed);
        let exe = std::env::current_exe().context("finding this executable to run points")?;
        let total: usize = cfg.cases.iter().map(|c| c.workers.len()).sum();
        // The floor first, in this (parent) process: the points' peak memory stays their own.
        // Only parameter-server SVM points have one.
        let floored = cfg
            .cases
            .iter()
            .any(|c| c.learning == CaseLearning::Svm && c.mode.is_some());
        let cold_s = if floored {
            cold_read_s(cfg.setup.data.features, 3)
        } else {
            f64::NAN
        };
        let pb = run.progress(total as u64);
        let mut rows = Vec::new();
        for case in &cfg.cases {
            for &workers in &case.workers {
                pb.set_message(format!("{} x{workers}", case.name));
                let spec = PointSpec {
                    setup: cfg.setup.clone(),
                    case: case.clone(),
                    workers,
                    seed,
                };
                let r = measure(&exe, &spec)?;
                rows.push(row(case, workers, &r, cold_s));
                pb.inc(1);
            }
        }
        pb.finish_and_clear();
        let out = run.out();
        out.csv("scale.csv", &rows)?;
        for c in claims(&rows) {
            out.claim(c);
        }
        let model_kib = cfg.setup.data.features as f64 * 4.0 / 1024.0;
        let floor_note = floored.then(|| {
            format!(
                "memory floor: reading one model ({model_kib:.0} KiB) from main memory took {:.2} us ({:.1} GB/s; best of 3 passes over a {} MiB pool, this run); floor_s = applied updates x that, a lower bound for a parameter server whose every update's base is a distinct model once the workers' models outgrow the last-level cache (a few hundred workers; below that the bases are cached and the floor overstates the bound), x_floor = wall_s / floor_s",
                cold_s * 1e6,
                cfg.setup.data.features as f64 * 4.0 / cold_s / 1e9,
                POOL_BYTES >> 20
            )
        });
        let mut notes = vec![
            "each point ran in a process of its own (the binary re-executed with the point in SYNCBENCH_SCALE_POINT); peak_mib is that process's VmHWM, data twin and model included; wall_s is the simulation alone, setup_s the twin and workload before it".to_string(),
            "seeds are repetitions, run one at a time so that timings do not share the cores; the claims' verdicts take the median seed".to_string(),
        ];
        notes.extend(floor_note);
        for case in &cfg.cases {
            let pts: Vec<(usize, f64)> = rows
                .iter()
                .filter(|r| r.case == case.name)
                .map(|r| (r.workers, r.wall_s))
                .collect();
            if let Some(e) = fitted_exponent(&pts) {
                notes.push(format!(
                    "{}: wall time grows as workers^{e:.3} over {:?} workers ({} clocks)",
                    case.name, case.workers, case.clocks
                ));
            }
        }
        run.notes(notes);
        Ok(())
    }
}

fn row(case: &ScaleCase, workers: usize, r: &PointResult, cold_s: f64) -> ScaleRow {
    let floor_s = if case.learning == CaseLearning::Svm && case.mode.is_some() {
        r.iterations as f64 * cold_s
    } else {
        f64::NAN
    };
    ScaleRow {
        case: case.name.clone(),
        learning: match case.learning {
            CaseLearning::Svm => "svm".into(),
            CaseLearning::Control => "control".into(),
        },
        system: system(case),
        clocks: case.clocks,
        workers,
        wall_s: r.wall_s,
        setup_s: r.setup_s,
        events: r.events,
        events_per_s: r.events as f64 / r.wall_s.max(1e-9),
        us_per_worker_clock: r.wall_s * 1e6 / (workers as f64 * case.clocks as f64),
        bytes: r.bytes,
        iterations: r.iterations,
        peak_mib: r.peak_mib,
        floor_s,
        x_floor: r.wall_s / floor_s,
    }
}

/// The targets, on whichever rows measure them (not applicable when the configuration has no
/// such point).
fn claims(rows: &[ScaleRow]) -> Vec<Claim> {
    let svm_ps = |r: &&ScaleRow| {
        r.learning == "svm" && r.system.starts_with("ps ssp") && r.clocks == SVM_CLOCKS
    };
    let target = rows
        .iter()
        .filter(svm_ps)
        .find(|r| r.workers == SVM_WORKERS);
    let svm_what =
        format!("SVM parameter server under SSP, {SVM_WORKERS} workers x {SVM_CLOCKS} clocks");
    let mut out = Vec::new();
    match target {
        Some(r) => {
            out.push(
                Claim::check(
                    "bench-scale/svm-1024x1000-wall",
                    format!("{svm_what} in at most {SVM_WALL_S} s of wall time"),
                    format!("<= {SVM_WALL_S} s (scale target)"),
                    format!(
                        "{:.2} s ({:.2} M events/s; {:.2}x the memory floor of {:.2} s)",
                        r.wall_s,
                        r.events_per_s / 1e6,
                        r.x_floor,
                        r.floor_s
                    ),
                    r.wall_s <= SVM_WALL_S,
                )
                .with_value(r.wall_s),
            );
            out.push(
                Claim::check(
                    "bench-scale/svm-1024x1000-memory",
                    format!("{svm_what} in at most {SVM_PEAK_MIB} MiB peak memory"),
                    format!("<= {SVM_PEAK_MIB} MiB (scale target)"),
                    format!("{:.0} MiB", r.peak_mib),
                    r.peak_mib <= SVM_PEAK_MIB,
                )
                .with_value(r.peak_mib),
            );
        }
        None => {
            for (id, s) in [("wall", "wall time"), ("memory", "peak memory")] {
                out.push(Claim::not_applicable(
                    format!("bench-scale/svm-1024x1000-{id}"),
                    format!("{svm_what}: {s} within the target"),
                    "scale target",
                    "no such point in the configuration",
                ));
            }
        }
    }
    let pts: Vec<(usize, f64)> = rows
        .iter()
        .filter(svm_ps)
        .filter(|r| (64..=SVM_WORKERS).contains(&r.workers))
        .map(|r| (r.workers, r.wall_s))
        .collect();
    let statement = format!(
        "SVM parameter-server cost linear in the work: wall time over workers (64 to {SVM_WORKERS}, {SVM_CLOCKS} clocks) grows with a fitted exponent of at most {MAX_EXPONENT}"
    );
    out.push(match fitted_exponent(&pts) {
        Some(e) if pts.len() >= 2 => Claim::check(
            "bench-scale/svm-linear-in-work",
            statement,
            format!("<= {MAX_EXPONENT} (scale target)"),
            format!(
                "{e:.3} over {}",
                pts.iter()
                    .map(|(w, t)| format!("{w}: {t:.2} s"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            e <= MAX_EXPONENT,
        )
        .with_value(e),
        _ => Claim::not_applicable(
            "bench-scale/svm-linear-in-work",
            statement,
            "scale target",
            "fewer than two SVM SSP points between 64 and 1024 workers at 1000 clocks",
        ),
    });
    let control = rows
        .iter()
        .filter(|r| r.learning == "control" && r.clocks == CONTROL_CLOCKS)
        .filter(|r| r.workers >= CONTROL_WORKERS)
        .min_by_key(|r| r.workers);
    let statement = format!(
        "control-only learning, {CONTROL_WORKERS} workers x {CONTROL_CLOCKS} clocks in at most {CONTROL_WALL_S} s"
    );
    out.push(match control {
        Some(r) => Claim::check(
            "bench-scale/control-10000x100-wall",
            statement,
            format!("<= {CONTROL_WALL_S} s (scale target)"),
            format!(
                "{:.2} s at {} workers, {} ({:.2} M events/s)",
                r.wall_s,
                r.workers,
                r.system,
                r.events_per_s / 1e6
            ),
            r.wall_s <= CONTROL_WALL_S,
        )
        .with_value(r.wall_s),
        None => Claim::not_applicable(
            "bench-scale/control-10000x100-wall",
            statement,
            "scale target",
            "no control-only point of that size in the configuration",
        ),
    });
    out
}

/// The binary's `main`.
pub fn main() -> std::process::ExitCode {
    // A point's own process (see crate::studies::bench_scale::point).
    if let Ok(json) = std::env::var(POINT_ENV) {
        return match child_main(&json) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e:#}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    experiment::main::<BenchScale>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(learning: &str, system: &str, clocks: u64, workers: usize, wall_s: f64) -> ScaleRow {
        ScaleRow {
            case: format!("{learning} {system}"),
            learning: learning.into(),
            system: system.into(),
            clocks,
            workers,
            wall_s,
            setup_s: 0.0,
            events: 1000,
            events_per_s: 1000.0 / wall_s,
            us_per_worker_clock: 0.0,
            bytes: 0,
            iterations: 0,
            peak_mib: 500.0,
            floor_s: wall_s / 2.0,
            x_floor: 2.0,
        }
    }

    #[test]
    fn only_parameter_server_svm_rows_have_a_memory_floor() {
        let point = PointResult {
            setup_s: 0.1,
            wall_s: 8.0,
            events: 100,
            bytes: 0,
            iterations: 1000,
            peak_mib: 50.0,
        };
        let case = |learning, mode: Option<&str>, graph: Option<&str>| ScaleCase {
            name: "c".into(),
            learning,
            mode: mode.map(String::from),
            graph: graph.map(String::from),
            clocks: 10,
            workers: vec![100],
        };
        let ps = row(
            &case(CaseLearning::Svm, Some("ssp3"), None),
            100,
            &point,
            2e-3,
        );
        assert_eq!((ps.floor_s, ps.x_floor), (2.0, 4.0));
        for other in [
            case(CaseLearning::Svm, None, Some("ring-based")),
            case(CaseLearning::Control, Some("ssp3"), None),
        ] {
            let r = row(&other, 100, &point, 2e-3);
            assert!(r.floor_s.is_nan() && r.x_floor.is_nan(), "{:?}", other.name);
        }
    }

    #[test]
    fn targets_pass_and_fail_on_their_numbers() {
        let good = [
            r("svm", "ps ssp3", 1000, 64, 1.0),
            r("svm", "ps ssp3", 1000, 1024, 16.0),
            r("control", "ps ssp3", 100, 10_000, 5.0),
        ];
        let c = claims(&good);
        assert_eq!(c.len(), 4);
        assert!(c
            .iter()
            .all(|c| c.verdict == bench_core::claims::Verdict::Pass));
        // 1.15 as before the fix: 16^1.15 = 24.3x for 16x the workers.
        let slow = [
            r("svm", "ps ssp3", 1000, 64, 1.0),
            r("svm", "ps ssp3", 1000, 1024, 24.3),
            r("control", "ps ssp3", 100, 10_000, 31.0),
        ];
        let c = claims(&slow);
        let fails: Vec<&str> = c
            .iter()
            .filter(|c| c.verdict == bench_core::claims::Verdict::Fail)
            .map(|c| c.claim_id.as_str())
            .collect();
        assert_eq!(
            fails,
            [
                "bench-scale/svm-linear-in-work",
                "bench-scale/control-10000x100-wall"
            ]
        );
        let none = claims(&[r("svm", "peers ring-based", 100, 64, 1.0)]);
        assert!(none
            .iter()
            .all(|c| c.verdict == bench_core::claims::Verdict::NotApplicable));
    }
}
