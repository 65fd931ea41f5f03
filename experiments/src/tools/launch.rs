//! `syncbench launch --ranks N -- BINARY ARGS...`: starts N ranks of a binary on this machine
//! for the cluster driver, as torchrun does, on a machine without MPI.
//!
//! Each rank gets `SYNCBENCH_RANK`, `SYNCBENCH_SIZE`, `SYNCBENCH_ROOT` (a free loopback port)
//! and a fresh `SYNCBENCH_JOB_TOKEN`. When a rank fails, the others stop by themselves (the
//! cluster driver tells them); ranks still running `--grace-ms` later are killed. The exit code
//! is the first failing rank's.
//!
//! SIGINT and SIGTERM are forwarded to every rank still running (each removes its partial
//! results and exits); ranks still running `--grace-ms` later are killed, and launch exits with
//! 128 + the signal number.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `syncbench launch` flags.
#[derive(Debug, Clone, Args)]
pub struct LaunchArgs {
    /// Ranks to start.
    #[arg(long)]
    pub ranks: usize,
    /// Port rank 0 listens on for the others (0: a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// After a rank fails, how long the others may take to stop before they are killed, in ms.
    #[arg(long, default_value_t = 40_000)]
    pub grace_ms: u64,
    /// The binary (a sibling of this syncbench, or on PATH) and its arguments, after `--`;
    /// give the experiment `--driver cluster`.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// Resolves `name`: a path as given, else the binary beside this executable, else PATH.
pub fn resolve(name: &str) -> PathBuf {
    if name.contains('/') {
        return PathBuf::from(name);
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(PathBuf::from))
    {
        let sibling = dir.join(name);
        if sibling.is_file() {
            return sibling;
        }
    }
    PathBuf::from(name)
}

/// A job token nobody else guesses: time, process id and a stack address, mixed.
fn fresh_token() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let local = 0u8;
    let mut x = t ^ ((std::process::id() as u64) << 32) ^ (&local as *const u8 as u64);
    // splitmix64 finaliser
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Runs the launch; returns the exit code to exit with.
///
/// # Errors
/// Zero ranks, a binary that cannot be started, or no free port.
pub fn run(args: LaunchArgs) -> Result<i32> {
    if args.ranks == 0 {
        bail!("--ranks must be at least 1");
    }
    let port = if args.port == 0 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .context("cannot find a free loopback port for rank 0")?
            .port()
    } else {
        args.port
    };
    let root = format!("127.0.0.1:{port}");
    let token = format!("{:x}", fresh_token());
    let program = resolve(&args.command[0]);
    let mut children: Vec<Option<Child>> = Vec::with_capacity(args.ranks);
    for rank in 0..args.ranks {
        let child = Command::new(&program)
            .args(&args.command[1..])
            .env("SYNCBENCH_RANK", rank.to_string())
            .env("SYNCBENCH_SIZE", args.ranks.to_string())
            .env("SYNCBENCH_ROOT", &root)
            .env("SYNCBENCH_JOB_TOKEN", &token)
            .spawn();
        match child {
            Ok(c) => {
                eprintln!("launch: rank {rank} is pid {}", c.id());
                children.push(Some(c));
            }
            Err(e) => {
                for c in children.iter_mut().flatten() {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                bail!("cannot start {} for rank {rank}: {e}", program.display());
            }
        }
    }
    let mut code = 0;
    let mut failed_at: Option<Instant> = None;
    let signal = Arc::new(AtomicI32::new(0));
    for &sig in &crate::harness::interrupt::SIGNALS {
        // The first signal is recorded and forwarded below; a failure to register leaves the
        // default (launch is killed; the ranks see their control connections close and stop).
        let s = signal.clone();
        // SAFETY: the handler only stores into an atomic, which is async-signal-safe.
        let _ = unsafe {
            signal_hook::low_level::register(sig, move || {
                let _ = s.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
            })
        };
    }
    let mut forwarded = false;
    while children.iter().any(Option::is_some) {
        let sig = signal.load(Ordering::SeqCst);
        if sig != 0 && !forwarded {
            forwarded = true;
            eprintln!(
                "launch: interrupted by {}; forwarding it to the ranks still running",
                crate::harness::interrupt::signal_name(sig)
            );
            for c in children.iter().flatten() {
                if let Ok(pid) = libc::pid_t::try_from(c.id()) {
                    // SAFETY: plain kill(2) of our own child.
                    unsafe { libc::kill(pid, sig) };
                }
            }
            if code == 0 {
                code = 128 + sig;
            }
            failed_at.get_or_insert_with(Instant::now);
        }
        for (rank, slot) in children.iter_mut().enumerate() {
            let Some(c) = slot else { continue };
            if let Some(status) = c.try_wait().context("waiting for a rank")? {
                *slot = None;
                if !status.success() {
                    let rc = status.code().unwrap_or(1);
                    if !forwarded {
                        eprintln!("launch: rank {rank} exited with {status}");
                    }
                    if code == 0 {
                        code = if rc == 0 { 1 } else { rc };
                        failed_at = Some(Instant::now());
                    }
                }
            }
        }
        if failed_at.is_some_and(|t| t.elapsed() > Duration::from_millis(args.grace_ms)) {
            for (rank, slot) in children.iter_mut().enumerate() {
                if let Some(c) = slot {
                    eprintln!(
                        "launch: rank {rank} still running {} ms after a failure; killing it",
                        args.grace_ms
                    );
                    let _ = c.kill();
                    let _ = c.wait();
                    *slot = None;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(code)
}
