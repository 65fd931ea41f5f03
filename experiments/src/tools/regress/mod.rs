//! `syncbench regress`: a results directory compared with a committed baseline, so that a
//! change that alters the simulator's bytes or flips a claim from pass to fail does not land
//! silently. Tiers:
//!
//! - exact: the SHA-256 of every CSV a sim-only figure wrote, per figure and seed;
//! - claims: every claim's verdict;
//! - bounds: every counted violation of a staleness or gap bound is 0, under every driver;
//! - ratio: transport and simulator numbers over a reference measured in the same round (the
//!   transports' bare word copy, a raw socket, a cache-line ping-pong, a calibration loop),
//!   5 rounds now against the baseline's 10, a one-sided Mann-Whitney test and a tolerance per
//!   metric, confirmed by a second measurement (`timing`);
//! - absolute: the same measurements in Gb/s, ns and events/s, gated only when this machine's
//!   fingerprint matches the baseline's and the baseline was accepted with `--absolute gate`,
//!   printed for information elsewhere.
//!
//! Exit codes keep kinds apart: 0 nothing regressed (improvements included), 1 a confirmed
//! regression, 2 a usage or infrastructure error (no baseline, no results), 3 only noisy
//! findings (a claim of a threads or cluster figure, which rests on wall-clock timings, stopped
//! passing; a measured metric changed inside its noise, or regressed once but not on
//! re-measurement: re-run to confirm), 4 the required device is absent (a skip, never a pass).

pub mod baseline;
pub mod bencher;
pub mod bounds;
pub mod compare;
pub mod fingerprint;
pub mod inject;
pub mod report;
pub mod selftest;
pub mod snapshot;
pub mod stats;
pub mod suite;
pub mod timing;

use anyhow::{Context, Result};
use baseline::Baseline;
use clap::{Args, ValueEnum};
use compare::{compare, Finding, Outcome};
use fingerprint::Fingerprint;
use inject::Injection;
use snapshot::Snapshot;
use std::path::{Path, PathBuf};
use suite::Samples;

/// Exit code: nothing regressed.
pub const EXIT_OK: u8 = 0;
/// Exit code: a confirmed regression (changed sim bytes, a claim that stopped passing).
pub const EXIT_REGRESSED: u8 = 1;
/// Exit code: usage or infrastructure error.
pub const EXIT_ERROR: u8 = 2;
/// Exit code: nothing regressed, but a timing claim flipped (re-run to confirm).
pub const EXIT_NOISY: u8 = 3;
/// Exit code: the required device is absent on this machine.
pub const EXIT_NO_DEVICE: u8 = 4;

/// What `syncbench regress` does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Action {
    /// Compare the results with the baseline (the default).
    #[default]
    Compare,
    /// Write the results' snapshot as the baseline (after a confirmed run).
    Accept,
    /// Only check the device `--require` names (exit 4 when absent) and compare nothing: a
    /// testbed job's first step.
    Check,
    /// The measured tiers' self-test (no results needed): measure a baseline, compare
    /// `--repeat` unchanged measurements with it (every confirmed regression is a false
    /// alarm) and `--repeat / 4` with `shm-copy=1.3` injected, spread among them (each must be
    /// caught, by name). Exit 0 when no false alarm was raised and every injection was caught,
    /// 1 otherwise.
    Selftest,
}

/// What the absolute tier does on the baseline's testbed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Absolute {
    /// Gate on absolute numbers where this machine's fingerprint matches the baseline's, and
    /// the baseline was accepted with `gate` (a dedicated testbed).
    #[default]
    Gate,
    /// Only list them (a shared machine: accept its baseline with `--absolute info`).
    Info,
}

/// A device a testbed run needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Device {
    /// An RDMA device with an active port (`/sys/class/infiniband`).
    Rdma,
}

/// `syncbench regress [compare|accept|check|selftest]`.
#[derive(Debug, Clone, Args)]
pub struct RegressArgs {
    /// compare (default), accept, or check (the --require device only).
    #[arg(value_enum, default_value_t = Action::Compare)]
    pub action: Action,
    /// The results directory (`make reproduce-all` writes `results`).
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// The baseline file. Default: baselines/<testbed>.json.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// The testbed's name. Default: this host's name.
    #[arg(long)]
    pub testbed: Option<String>,
    /// Where regress.json and regress.md go. Default: the results directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Append one JSON line (revision, testbed, counts) to this history file.
    #[arg(long)]
    pub history: Option<PathBuf>,
    /// Exit 4 (a skip) unless this device is present and active, before anything is compared.
    #[arg(long, value_enum)]
    pub require: Option<Device>,
    /// accept: write the baseline even from results of mixed or uncommitted revisions.
    #[arg(long)]
    pub force: bool,
    /// Rounds of the measured suite (ratio and absolute tiers; about 1.5 s each): compare
    /// measures as many now (and as many again to confirm a regression), accept twice as many
    /// (the baseline every comparison leans on). 0 skips the measured tiers.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(0..=50))]
    pub rounds: u16,
    /// Inject a regression into the measured suite, for self-tests: `shm-copy=1.3` makes
    /// every shm write copy its payload 1.3 times. A baseline is never accepted with one.
    #[arg(long)]
    pub inject: Option<String>,
    /// Also write the measured samples in Bencher's metric format (BMF JSON) to this file.
    #[arg(long)]
    pub bencher: Option<PathBuf>,
    /// accept: whether the testbed's absolute numbers will gate later comparisons (`gate`, a
    /// dedicated testbed) or only be listed (`info`, a shared machine). compare: `info` lists
    /// them whatever the baseline says.
    #[arg(long, value_enum, default_value_t = Absolute::Gate)]
    pub absolute: Absolute,
    /// selftest: how many unchanged measurements to compare with the baseline.
    #[arg(long, default_value_t = 20)]
    pub repeat: usize,
}

/// Runs `syncbench regress`, printing its table; returns the exit code.
///
/// # Errors
/// Usage and infrastructure errors (the caller exits 2 on them).
pub fn run(args: &RegressArgs) -> Result<u8> {
    let here = Fingerprint::here();
    if let Some(Device::Rdma) = args.require {
        if !here.has_active_rdma() {
            eprintln!(
                "regress: skipped: --require rdma, but no RDMA device with an active port under /sys/class/infiniband ({} ports seen)",
                here.rdma.len()
            );
            return Ok(EXIT_NO_DEVICE);
        }
    }
    if args.action == Action::Check {
        match args.require {
            Some(d) => println!("regress: the required device is present ({d:?})"),
            None => println!("regress: nothing to check (no --require)"),
        }
        return Ok(EXIT_OK);
    }
    let inject = Injection::parse(args.inject.as_deref().unwrap_or(""))?;
    // the rdma metrics are measured where the job requires the device (it was found above)
    let rdma = args.require == Some(Device::Rdma);
    if args.action == Action::Selftest {
        return selftest::run(args, &here);
    }
    let testbed = args.testbed.clone().unwrap_or_else(|| here.host.clone());
    let path = args
        .baseline
        .clone()
        .unwrap_or_else(|| PathBuf::from("baselines").join(format!("{testbed}.json")));
    let now = Snapshot::collect(&args.results)?;
    match args.action {
        Action::Accept => {
            let doubts = now.doubts();
            if !doubts.is_empty() && !args.force {
                anyhow::bail!(
                    "not accepting {} as a baseline: {} (--force to accept anyway)",
                    args.results.display(),
                    doubts.join("; ")
                );
            }
            if inject.any() {
                anyhow::bail!("not accepting a baseline measured with --inject (a self-test knob)");
            }
            let broken: Vec<String> = bounds::check(&args.results)?
                .into_iter()
                .filter(|f| f.outcome.fails())
                .map(|f| format!("{} ({})", f.metric, f.note))
                .collect();
            if !broken.is_empty() {
                anyhow::bail!(
                    "not accepting {} as a baseline: bounds broken in {} (never accepted, --force or not)",
                    args.results.display(),
                    broken.join("; ")
                );
            }
            let measured = if args.rounds > 0 {
                // twice the rounds of a comparison: the baseline's spread and median are what
                // every later comparison leans on
                Some(measure_suite(2 * usize::from(args.rounds), inject, rdma)?)
            } else {
                None
            };
            let b = Baseline {
                testbed,
                fingerprint: here,
                revision: now.revision(),
                accepted_unix: unix_now(),
                snapshot: now,
                measured,
                gate_absolute: args.absolute == Absolute::Gate,
            };
            // the baseline last: a failure before it leaves the old one in place
            if let (Some(p), Some(m)) = (&args.bencher, &b.measured) {
                write_atomic(p, &(serde_json::to_string_pretty(&bencher::bmf(m))? + "\n"))?;
            }
            b.write(&path)?;
            println!(
                "baseline {} accepted: {} sim CSVs, {} claims, {} measured metrics x {} rounds, revision {}",
                path.display(),
                b.snapshot.exact.len(),
                b.snapshot.claims.len(),
                b.measured.as_ref().map_or(0, |m| m.values.len()),
                b.measured.as_ref().map_or(0, |m| m.rounds),
                b.revision
            );
            Ok(EXIT_OK)
        }
        Action::Check | Action::Selftest => unreachable!("returned above"),
        Action::Compare => {
            if inject.any() && args.history.is_some() {
                anyhow::bail!("--inject is a self-test knob: not recorded in a --history file");
            }
            let base = Baseline::read(&path)?;
            if !base.snapshot.scales.is_empty() && base.snapshot.scales != now.scales {
                anyhow::bail!(
                    "{} is a baseline of scale {:?}, the results in {} are {:?}: not comparable",
                    path.display(),
                    base.snapshot.scales,
                    args.results.display(),
                    now.scales
                );
            }
            let mut findings = compare::across_platforms(
                compare(&base.snapshot, &now),
                &base.fingerprint.numeric,
                &here.numeric,
            );
            findings.extend(bounds::check(&args.results)?);
            let same_testbed = base.fingerprint.matches(&here)
                && base.gate_absolute
                && args.absolute == Absolute::Gate;
            let measured = match (&base.measured, args.rounds) {
                (_, 0) => {
                    eprintln!("regress: ratio and absolute tiers skipped (--rounds 0)");
                    None
                }
                (None, _) => {
                    eprintln!(
                        "regress: {} holds no measured samples: ratio and absolute tiers skipped (re-accept it to add them)",
                        path.display()
                    );
                    None
                }
                (Some(bs), r) => {
                    let (f, first) = measured_findings(bs, r.into(), inject, rdma, same_testbed)?;
                    findings.extend(f);
                    Some(first)
                }
            };
            findings.sort_by(|a, b| {
                (a.outcome, a.tier, &a.metric).cmp(&(b.outcome, b.tier, &b.metric))
            });
            let rep = report::Report::new(&base, &now, same_testbed, findings)
                .on_platforms(&base.fingerprint.numeric, &here.numeric);
            print!("{}", rep.table());
            let out = args.out.clone().unwrap_or_else(|| args.results.clone());
            write_atomic(&out.join("regress.json"), &rep.json()?)?;
            write_atomic(&out.join("regress.md"), &rep.markdown())?;
            if let (Some(p), Some(m)) = (&args.bencher, &measured) {
                write_atomic(p, &(serde_json::to_string_pretty(&bencher::bmf(m))? + "\n"))?;
            }
            if let Some(h) = &args.history {
                append_line(h, &rep.history_line(&testbed)?)?;
            }
            eprintln!(
                "regress: {} -> {}",
                out.join("regress.md").display(),
                rep.verdict()
            );
            Ok(if rep.count(Outcome::Regressed) > 0 {
                EXIT_REGRESSED
            } else if rep.count(Outcome::Noisy) > 0 {
                EXIT_NOISY
            } else {
                EXIT_OK
            })
        }
    }
}

/// Measures `rounds` rounds of the suite, with a progress bar on a terminal.
///
/// # Errors
/// A transport that fails to set up or deliver.
pub fn measure_suite(rounds: usize, inject: Injection, rdma: bool) -> Result<Samples> {
    let pb = crate::harness::output::progress(rounds as u64, "regress: measuring");
    let s = suite::measure(rounds, inject, rdma, |_| pb.inc(1));
    pb.finish_and_clear();
    s
}

/// The ratio and absolute tiers' findings of a fresh measurement against `base`, measured a
/// second time when the first regresses anywhere (a regression must hold twice); also returns
/// the first measurement's samples.
///
/// # Errors
/// A measurement that fails.
pub fn measured_findings(
    base: &Samples,
    rounds: usize,
    inject: Injection,
    rdma: bool,
    same_testbed: bool,
) -> Result<(Vec<Finding>, Samples)> {
    let n = base.values.values().map(Vec::len).min().unwrap_or(0);
    if stats::smallest_p(n, rounds) >= timing::ALPHA {
        anyhow::bail!(
            "--rounds {rounds} against a baseline of {n} samples per metric can never show a regression (the smallest p-value, {:.3}, is not below {}): use more rounds, or re-accept the baseline with more",
            stats::smallest_p(n, rounds),
            timing::ALPHA
        );
    }
    let first = measure_suite(rounds, inject, rdma)?;
    let suspect = timing::findings(base, &first, None, same_testbed)
        .iter()
        .any(|f| f.outcome == Outcome::Regressed);
    let again = if suspect {
        eprintln!("regress: a measured metric regressed: measuring again to confirm");
        Some(measure_suite(rounds, inject, rdma)?)
    } else {
        None
    };
    Ok((
        timing::findings(base, &first, again.as_ref(), same_testbed),
        first,
    ))
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Writes `text` to `path` whole or not at all (a temporary file beside it, renamed).
///
/// # Errors
/// When the directory or the file cannot be written.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

fn append_line(path: &Path, line: &str) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open history {}", path.display()))?;
    writeln!(f, "{line}").with_context(|| format!("cannot append to {}", path.display()))
}
