//! One scenario's job: the ranks started as processes, their stderr followed line by line, the
//! fault injected when its point is reached (a signal, strangers on rank 0's port, the port
//! taken), and what the other ranks did about it observed.

use super::*;
use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

struct Job {
    ranks: Vec<Child>,
    lines: mpsc::Receiver<(usize, String)>,
    log: Vec<Vec<String>>,
}

impl Job {
    /// Waits for `text` in `rank`'s stderr, at most `limit`.
    fn wait_for(&mut self, rank: usize, text: &str, limit: Duration) -> Result<()> {
        let deadline = Instant::now() + limit;
        if self.log[rank].iter().any(|l| l.contains(text)) {
            return Ok(());
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((r, line)) => {
                    let hit = r == rank && line.contains(text);
                    self.log[r].push(line);
                    if hit {
                        return Ok(());
                    }
                }
                Err(_) => bail!(
                    "rank {rank} did not print {text:?} within {} s; its stderr: {:?}",
                    limit.as_secs(),
                    self.log[rank]
                ),
            }
        }
    }

    /// Waits until every rank but `skip` exited (at most `limit`); returns when the last did.
    fn wait_others(&mut self, skip: Option<usize>, limit: Duration) -> Result<Instant> {
        let deadline = Instant::now() + limit;
        let mut last = Instant::now();
        loop {
            let mut running = false;
            for (r, c) in self.ranks.iter_mut().enumerate() {
                if Some(r) == skip {
                    continue;
                }
                if c.try_wait()?.is_none() {
                    running = true;
                } else {
                    last = last.max(Instant::now());
                }
            }
            if !running {
                return Ok(last);
            }
            if Instant::now() > deadline {
                bail!("ranks still running {} s after the fault", limit.as_secs());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn finish(mut self) -> (Vec<Option<i32>>, Vec<String>, usize) {
        let codes = self
            .ranks
            .iter_mut()
            .map(|c| {
                let _ = c.kill();
                c.wait().ok().and_then(|s| s.code())
            })
            .collect();
        // Drain what the readers still have.
        std::thread::sleep(Duration::from_millis(50));
        while let Ok((r, line)) = self.lines.try_recv() {
            self.log[r].push(line);
        }
        let rejected = self.log[0]
            .iter()
            .filter(|l| l.contains("rank 0 rejected a connection"))
            .count();
        let messages = self
            .log
            .iter()
            .map(|lines| {
                let pick = lines
                    .iter()
                    .find(|l| l.starts_with("error:"))
                    .or_else(|| lines.iter().rev().find(|l| !l.starts_with("fault point")))
                    .cloned()
                    .unwrap_or_default();
                shorten(&pick, 160)
            })
            .collect();
        (codes, messages, rejected)
    }
}

fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// Starts the ranks (`only`: just those) of a job on `port`; `fault_env`: the fault point of
/// one rank.
fn start(
    experiment: &Path,
    out: &Path,
    cfg: &Path,
    port: u16,
    only: &[usize],
    fault_env: Option<(usize, &str)>,
    tx: &mpsc::Sender<(usize, String)>,
) -> Result<Vec<(usize, Child)>> {
    let mut out_ranks = Vec::new();
    for &rank in only {
        let mut c = Command::new(experiment);
        // One seed: a fault hits one run, and the matrix measures how the job stops.
        c.args([
            "--seeds",
            "1",
            "--driver",
            "cluster",
            "--cluster-timeout-ms",
        ])
        .arg(CLUSTER_TIMEOUT_MS.to_string())
        .arg("--out")
        .arg(out)
        .arg("--config")
        .arg(cfg)
        .env("SYNCBENCH_RANK", rank.to_string())
        .env("SYNCBENCH_SIZE", RANKS.to_string())
        .env("SYNCBENCH_ROOT", format!("127.0.0.1:{port}"))
        .env(
            "SYNCBENCH_JOB_TOKEN",
            format!("{:x}", 0xfa_u64 + port as u64),
        )
        .env_remove("SYNCBENCH_FAULT_POINT")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        if let Some((r, point)) = fault_env {
            if r == rank {
                c.env("SYNCBENCH_FAULT_POINT", point);
            }
        }
        let mut child = c
            .spawn()
            .with_context(|| format!("cannot start {}", experiment.display()))?;
        let err = child.stderr.take().expect("piped");
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(|l| l.ok()) {
                if tx.send((rank, line)).is_err() {
                    return;
                }
            }
        });
        out_ranks.push((rank, child));
    }
    Ok(out_ranks)
}

fn signal(child: &Child, sig: i32) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) of our own child.
        unsafe { libc::kill(pid, sig) };
    }
}

fn entries(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(out)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Runs one scenario in `dir` (emptied first) with the `ps-modes` binary `experiment`.
///
/// # Errors
/// When the job cannot be started or the fault point is never reached (a harness failure, not
/// an observation).
pub fn run(experiment: &Path, scenario: &Scenario, dir: &Path) -> Result<Observation> {
    let _ = std::fs::remove_dir_all(dir);
    // The ranks run with `--out <base> --config cfg.toml`: a configuration of our own, so the
    // figure lands in <base>/config/cfg/, where the earlier result is kept.
    let base = dir.join("results");
    let cfg = dir.join("cfg.toml");
    let out = base.join("config").join("cfg");
    std::fs::create_dir_all(out.join("ps-modes"))
        .with_context(|| format!("cannot create {}", out.display()))?;
    let earlier = "earlier\n";
    std::fs::write(out.join("ps-modes/claims.csv"), earlier)?;
    std::fs::write(&cfg, config(400))?;
    let port = free_port()?;
    let (tx, rx) = mpsc::channel();
    let all: Vec<usize> = (0..RANKS).collect();
    let mut holder = None;
    let (fault_env, first) = match scenario.fault {
        Fault::Kill { rank, point, .. } | Fault::Stop { rank, point } => {
            (Some((rank, point)), all.clone())
        }
        Fault::Strangers => (None, vec![0]),
        Fault::RootPortTaken => {
            holder = Some(TcpListener::bind(("127.0.0.1", port))?);
            (None, all.clone())
        }
    };
    let mut started = start(experiment, &base, &cfg, port, &first, fault_env, &tx)?;
    if scenario.fault == Fault::Strangers {
        strangers(port, RANKS)?;
        started.extend(start(experiment, &base, &cfg, port, &all[1..], None, &tx)?);
    }
    started.sort_by_key(|(r, _)| *r);
    let mut job = Job {
        ranks: started.into_iter().map(|(_, c)| c).collect(),
        lines: rx,
        log: vec![Vec::new(); RANKS],
    };
    let limit = Duration::from_secs(120);
    let (faulty, fault_at) = match scenario.fault {
        Fault::Kill {
            rank,
            point,
            after_ms,
        } => {
            let name = point.split(':').next().unwrap_or(point);
            job.wait_for(rank, &format!("fault point {name} reached"), limit)?;
            if let Some(ms) = after_ms {
                std::thread::sleep(Duration::from_millis(ms));
            }
            signal(&job.ranks[rank], libc::SIGKILL);
            (Some(rank), Instant::now())
        }
        Fault::Stop { rank, point } => {
            let name = point.split(':').next().unwrap_or(point);
            job.wait_for(rank, &format!("fault point {name} reached"), limit)?;
            std::thread::sleep(Duration::from_millis(300));
            signal(&job.ranks[rank], libc::SIGSTOP);
            (Some(rank), Instant::now())
        }
        Fault::Strangers | Fault::RootPortTaken => (None, Instant::now()),
    };
    let last = job.wait_others(faulty, limit)?;
    let stop_seconds = last.saturating_duration_since(fault_at).as_secs_f64();
    if let Some(r) = faulty {
        signal(&job.ranks[r], libc::SIGKILL);
    }
    drop(holder);
    let (mut exit_codes, messages, rejected_strangers) = job.finish();
    if let Some(r) = faulty {
        exit_codes[r] = None;
    }
    let earlier_results_intact = std::fs::read_to_string(out.join("ps-modes/claims.csv"))
        .map(|t| t == earlier)
        .unwrap_or(false);
    let leftovers: Vec<String> = entries(&out)
        .into_iter()
        .filter(|e| e != "ps-modes")
        .collect();
    let swept_by_next_run = if leftovers.is_empty() {
        None
    } else {
        // The next run of the figure (short, sim driver) must remove what the killed one left.
        std::fs::write(&cfg, config(8))?;
        let o = Command::new(experiment)
            .args(["--seeds", "1", "--driver", "sim", "--out"])
            .arg(&base)
            .arg("--config")
            .arg(&cfg)
            .output()?;
        Some(o.status.success() && entries(&out) == vec!["ps-modes".to_string()])
    };
    Ok(Observation {
        name: scenario.name.to_string(),
        exit_codes,
        messages,
        stop_seconds,
        earlier_results_intact,
        leftovers,
        swept_by_next_run,
        rejected_strangers,
    })
}

/// Connects to rank 0's control port as three strangers: a wrong job token, an HTTP request,
/// and half a handshake then close. Waits for the port to listen first.
fn strangers(port: u16, size: usize) -> Result<()> {
    let addr = ("127.0.0.1", port);
    let deadline = Instant::now() + Duration::from_secs(60);
    let connect = || -> Result<TcpStream> {
        loop {
            match TcpStream::connect(addr) {
                Ok(s) => return Ok(s),
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(e) => bail!("rank 0 never listened on port {port}: {e}"),
            }
        }
    };
    const MAGIC: u64 = 0x5342_4354_4c00_0001;
    let hello: Vec<u8> = [MAGIC, 0xbad, 1, size as u64]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let mut s = connect()?;
    s.write_all(&hello)?;
    let mut s2 = connect()?;
    s2.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n\0\0\0\0\0")?;
    let mut s3 = connect()?;
    s3.write_all(&hello[..12])?;
    drop(s3);
    std::thread::sleep(Duration::from_millis(200));
    drop((s, s2));
    Ok(())
}
