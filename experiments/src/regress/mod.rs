//! `syncbench regress`: a results directory compared with a committed baseline, so that a
//! change that alters the simulator's bytes or flips a claim from pass to fail does not land
//! silently (issue 17). Two tiers today, both exact and so free of runner noise:
//!
//! - exact: the SHA-256 of every CSV a sim-only figure wrote, per figure and seed;
//! - claims: every claim's verdict.
//!
//! Exit codes keep kinds apart: 0 nothing regressed (improvements included), 1 a confirmed
//! regression, 2 a usage or infrastructure error (no baseline, no results), 3 only noisy
//! findings (a claim of a threads or cluster figure, which rests on wall-clock timings, stopped
//! passing: re-run to confirm), 4 the required device is absent (a skip, never a pass).

pub mod baseline;
pub mod compare;
pub mod fingerprint;
pub mod report;
pub mod snapshot;

use anyhow::{Context, Result};
use baseline::Baseline;
use clap::{Args, ValueEnum};
use compare::{compare, Outcome};
use fingerprint::Fingerprint;
use snapshot::Snapshot;
use std::path::{Path, PathBuf};

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
}

/// A device a testbed run needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Device {
    /// An RDMA device with an active port (`/sys/class/infiniband`).
    Rdma,
}

/// `syncbench regress [compare|accept|check]`.
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
            let b = Baseline {
                testbed,
                fingerprint: here,
                revision: now.revision(),
                accepted_unix: unix_now(),
                snapshot: now,
            };
            b.write(&path)?;
            println!(
                "baseline {} accepted: {} sim CSVs, {} claims, revision {}",
                path.display(),
                b.snapshot.exact.len(),
                b.snapshot.claims.len(),
                b.revision
            );
            Ok(EXIT_OK)
        }
        Action::Check => unreachable!("returned above"),
        Action::Compare => {
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
            let findings = compare(&base.snapshot, &now);
            let rep = report::Report::new(&base, &now, &here, findings);
            print!("{}", rep.table());
            let out = args.out.clone().unwrap_or_else(|| args.results.clone());
            write_atomic(&out.join("regress.json"), &rep.json()?)?;
            write_atomic(&out.join("regress.md"), &rep.markdown())?;
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
