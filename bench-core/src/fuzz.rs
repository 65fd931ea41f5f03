//! A small seeded mutation fuzzer for the decoders that read bytes from outside: wire frames,
//! shared-memory directories, dataset files, graph files and configurations.
//!
//! Why not cargo-fuzz: it needs a nightly toolchain, which this project's machines cannot
//! install (only package registries are reachable). This engine runs on stable as ordinary
//! tests: it starts from valid seed inputs and applies random structural mutations (bit flips,
//! interesting bytes, ASCII numbers replaced by extreme ones, inserted, deleted, duplicated and
//! spliced ranges, truncation), feeds each input to the target and records every panic as a
//! crash. A target's `Result` errors are expected answers to bad input; only panics (and
//! hangs, which the time budget exposes) are defects. Runs are reproducible from the seed.
//!
//! Budget: `FUZZ_SECONDS` (environment) per target, else the caller's default (a short bounded
//! pass in `make test`); `make fuzz` runs each target for ten minutes and writes a report.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Bytes that often sit on a parser's edge cases.
const INTERESTING: &[u8] = b"\x00\xff\x7f\x80\n\r\t :,.-+eE0123456789#[]=\"";

/// Numbers that overflow, underflow or sit at a type's limits, as ASCII.
const EXTREME: &[&str] = &[
    "0",
    "-1",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775808",
    "-9223372036854775809",
    "4294967296",
    "1e309",
    "-1e309",
    "nan",
    "inf",
    "1e-400",
    "99999999999999999999999999",
];

/// What a fuzzing pass found.
#[derive(Debug, Clone)]
pub struct FuzzReport {
    /// The target's name.
    pub target: String,
    /// Inputs executed.
    pub executions: u64,
    /// Inputs that made the target panic, with the panic message (at most 10 kept).
    pub crashes: Vec<(Vec<u8>, String)>,
    /// Panicking inputs in all.
    pub crash_count: u64,
    /// Wall time spent.
    pub seconds: f64,
}

impl FuzzReport {
    /// One line: target, executions, crashes, executions per second.
    pub fn line(&self) -> String {
        format!(
            "fuzz {}: {} executions in {:.1} s ({:.0}/s), {} crashes",
            self.target,
            self.executions,
            self.seconds,
            self.executions as f64 / self.seconds.max(1e-9),
            self.crash_count
        )
    }
}

/// The time budget: `FUZZ_SECONDS` if set, else `default`.
pub fn budget(default: Duration) -> Duration {
    std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(default, Duration::from_secs_f64)
}

/// One random mutation of `input` (other seeds are spliced in from `seeds`).
pub fn mutate(input: &[u8], seeds: &[Vec<u8>], rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut v = input.to_vec();
    let rounds = 1 + rng.gen_range(0..4);
    for _ in 0..rounds {
        let len = v.len();
        match rng.gen_range(0..9) {
            0 if len > 0 => {
                let i = rng.gen_range(0..len);
                v[i] ^= 1 << rng.gen_range(0..8);
            }
            1 if len > 0 => {
                let i = rng.gen_range(0..len);
                v[i] = INTERESTING[rng.gen_range(0..INTERESTING.len())];
            }
            2 => {
                let i = rng.gen_range(0..=len);
                let n = rng.gen_range(1..16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                v.splice(i..i, bytes);
            }
            3 if len > 0 => {
                let i = rng.gen_range(0..len);
                let n = rng.gen_range(1..=(len - i).min(64));
                v.drain(i..i + n);
            }
            4 if len > 0 => {
                let i = rng.gen_range(0..len);
                let n = rng.gen_range(1..=(len - i).min(256));
                let copy = v[i..i + n].to_vec();
                let at = rng.gen_range(0..=v.len());
                v.splice(at..at, copy);
            }
            5 if len > 0 => {
                v.truncate(rng.gen_range(0..len));
            }
            6 if !seeds.is_empty() => {
                let other = &seeds[rng.gen_range(0..seeds.len())];
                if !other.is_empty() {
                    let a = rng.gen_range(0..other.len());
                    let b = rng.gen_range(a..=other.len());
                    let at = rng.gen_range(0..=v.len());
                    v.splice(at..at, other[a..b].iter().copied());
                }
            }
            7 => {
                // Replace an ASCII number (a run of digits) by an extreme one.
                let digits: Vec<usize> = (0..len).filter(|&i| v[i].is_ascii_digit()).collect();
                if let Some(&i) = digits.get(rng.gen_range(0..digits.len().max(1))) {
                    let mut j = i;
                    while j < v.len() && (v[j].is_ascii_digit() || v[j] == b'.') {
                        j += 1;
                    }
                    let x = EXTREME[rng.gen_range(0..EXTREME.len())].as_bytes().to_vec();
                    v.splice(i..j, x);
                }
            }
            _ if len >= 8 => {
                // A little-endian word set to a limit value (binary formats).
                let i = rng.gen_range(0..=len - 8) & !7;
                let x: u64 = match rng.gen_range(0..5) {
                    0 => 0,
                    1 => u64::MAX,
                    2 => 1 << rng.gen_range(0..64),
                    3 => (1 << rng.gen_range(0..64)) - 1,
                    _ => rng.gen(),
                };
                v[i..i + 8].copy_from_slice(&x.to_le_bytes());
            }
            _ => {}
        }
    }
    v
}

thread_local! {
    /// This thread is running a fuzz target: its panics are expected and counted, not printed.
    static FUZZING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs (once) a panic hook that stays silent on fuzzing threads and defers to the previous
/// hook everywhere else, so tests running beside a fuzz target keep their panic messages.
fn quiet_panics_while_fuzzing() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !FUZZING.with(|f| f.get()) {
                previous(info);
            }
        }));
    });
}

/// Runs `target` on mutations of `seeds` for `limit` (see [`budget`]); a panic is a crash.
/// Crashing inputs are also written to `target/fuzz-crashes/<name>-<k>.bin` for replay.
pub fn run(
    name: &str,
    seeds: &[Vec<u8>],
    limit: Duration,
    seed: u64,
    target: impl Fn(&[u8]),
) -> FuzzReport {
    run_until(name, seeds, seed, target, |_, elapsed| elapsed >= limit)
}

/// Runs `target` on the seeds and then on exactly `executions` mutations (rounded up to a
/// whole batch of 64): the same inputs whatever the machine's load, so a test of the fuzzer
/// itself cannot pass or fail with the speed of the machine it runs on.
pub fn run_executions(
    name: &str,
    seeds: &[Vec<u8>],
    executions: u64,
    seed: u64,
    target: impl Fn(&[u8]),
) -> FuzzReport {
    let planned = seeds.len() as u64 + executions;
    run_until(name, seeds, seed, target, |report, _| {
        report.executions >= planned
    })
}

/// The fuzzing loop: batches of 64 mutations until `done(report, elapsed)` says stop.
fn run_until(
    name: &str,
    seeds: &[Vec<u8>],
    seed: u64,
    target: impl Fn(&[u8]),
    done: impl Fn(&FuzzReport, Duration) -> bool,
) -> FuzzReport {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let started = Instant::now();
    quiet_panics_while_fuzzing();
    FUZZING.with(|f| f.set(true));
    let mut report = FuzzReport {
        target: name.to_string(),
        executions: 0,
        crashes: Vec::new(),
        crash_count: 0,
        seconds: 0.0,
    };
    // A pool of inputs: the seeds, then inputs that were accepted grow it a little (so deeper
    // structure is reached), bounded.
    let mut pool: Vec<Vec<u8>> = seeds.to_vec();
    if pool.is_empty() {
        pool.push(Vec::new());
    }
    let try_one = |input: &[u8], report: &mut FuzzReport| -> bool {
        report.executions += 1;
        match catch_unwind(AssertUnwindSafe(|| target(input))) {
            Ok(()) => true,
            Err(p) => {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panic".into());
                report.crash_count += 1;
                if report.crashes.len() < 10 {
                    let dir =
                        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/fuzz-crashes");
                    let _ = std::fs::create_dir_all(&dir);
                    let _ = std::fs::write(
                        dir.join(format!("{name}-{}.bin", report.crashes.len())),
                        input,
                    );
                    report.crashes.push((input.to_vec(), msg));
                }
                false
            }
        }
    };
    for s in seeds {
        try_one(s, &mut report);
    }
    while !done(&report, started.elapsed()) {
        for _ in 0..64 {
            let base = &pool[rng.gen_range(0..pool.len())];
            let input = mutate(base, seeds, &mut rng);
            if try_one(&input, &mut report) && pool.len() < 256 && rng.gen_range(0..64) == 0 {
                pool.push(input);
            }
        }
    }
    FUZZING.with(|f| f.set(false));
    report.seconds = started.elapsed().as_secs_f64();
    report
}

/// Runs [`run`] and appends the report's line to `target/fuzz-report.txt` (for `make fuzz`).
///
/// # Panics
/// When any input crashed the target, listing the first crash (a test failure).
pub fn check(name: &str, seeds: &[Vec<u8>], default: Duration, target: impl Fn(&[u8])) {
    let r = run(name, seeds, budget(default), 1, target);
    eprintln!("{}", r.line());
    if std::env::var_os("FUZZ_REPORT").is_some() {
        use std::io::Write;
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/fuzz-report.txt");
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(
                f,
                "{}\t{}\t{:.1}\t{}",
                r.target, r.executions, r.seconds, r.crash_count
            );
        }
    }
    if let Some((input, msg)) = r.crashes.first() {
        panic!(
            "{}: first crash: {msg} on {} bytes {:?}",
            r.line(),
            input.len(),
            String::from_utf8_lossy(&input[..input.len().min(200)])
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_reproducible_and_vary() {
        let seeds = vec![b"1 3:0.5 7:1\n-1 2:1\n".to_vec()];
        let a: Vec<Vec<u8>> = {
            let mut r = ChaCha8Rng::seed_from_u64(3);
            (0..50).map(|_| mutate(&seeds[0], &seeds, &mut r)).collect()
        };
        let b: Vec<Vec<u8>> = {
            let mut r = ChaCha8Rng::seed_from_u64(3);
            (0..50).map(|_| mutate(&seeds[0], &seeds, &mut r)).collect()
        };
        assert_eq!(a, b);
        let distinct: std::collections::HashSet<_> = a.iter().collect();
        assert!(distinct.len() > 40, "{} distinct", distinct.len());
    }

    #[test]
    fn a_panicking_target_is_reported_as_a_crash() {
        // Bounded by executions, not time: under a loaded machine a 50 ms budget once ran too
        // few inputs to reach 0xff.
        let r = run_executions("demo", &[b"ab".to_vec()], 20_000, 1, |b: &[u8]| {
            assert!(!b.contains(&0xff), "found 0xff")
        });
        assert_eq!(r.executions, 1 + 20_032);
        assert!(r.crash_count > 0, "{}", r.line());
        assert!(r.crashes[0].1.contains("found 0xff"));
    }
}
