//! The memory floor of a dense-model simulation, measured on this machine in the run that uses
//! it: how long reading one model's bytes takes when they are not in any cache.
//!
//! Why: a parameter server that applies a worker's update must read the model the update was
//! computed on (a scaled update stands for `c * base + exact entries`, see
//! `bench_core::learning::ScaledUpdate`). At a thousand workers those bases are a thousand
//! distinct models, far more than the last-level cache holds, so every applied update streams
//! one model from main memory at least once. `updates x cold read` is then a lower bound of the
//! simulation's wall time that no event loop or protocol change can beat while the results keep
//! their bits; `bench-scale` reports its wall time as a ratio to it.

use std::hint::black_box;
use std::time::Instant;

/// Bytes of the pool of models read round-robin: well above the last-level cache of today's
/// servers (tens of MiB; the 2-core development VM's is 32 MiB), so that each read comes from
/// main memory.
pub const POOL_BYTES: usize = 256 << 20;

/// Seconds to read one vector of `words` 32-bit words from main memory: the best of `rounds`
/// passes over a pool of [`POOL_BYTES`] of such vectors, read in an order that defeats the
/// caches (each vector once per pass, consecutive reads far apart), divided by the vectors
/// read. Each read touches every byte (an integer sum the compiler vectorizes, kept alive with
/// `black_box`).
///
/// # Panics
/// When `words` is 0.
pub fn cold_read_s(words: usize, rounds: usize) -> f64 {
    read_s(words, rounds, POOL_BYTES)
}

/// [`cold_read_s`] over a pool of `pool_bytes` (at least two vectors).
fn read_s(words: usize, rounds: usize, pool_bytes: usize) -> f64 {
    assert!(words > 0, "a model has at least one word");
    let count = (pool_bytes / (words * 4)).max(2);
    // Every page written, so the reads below measure memory and not first-touch faults.
    let pool: Vec<Vec<u32>> = (0..count)
        .map(|i| (0..words).map(|j| (i ^ j) as u32).collect())
        .collect();
    let step = stride(count);
    let mut best = f64::MAX;
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        let mut at = 0;
        for _ in 0..count {
            let sum = pool[at].iter().fold(0u32, |s, &x| s.wrapping_add(x));
            black_box(sum);
            at = (at + step) % count;
        }
        best = best.min(t.elapsed().as_secs_f64() / count as f64);
    }
    best
}

/// A stride coprime to `count`, just above half of it (1 for two or fewer): stepping by it
/// visits every vector once per pass, consecutive reads far apart.
fn stride(count: usize) -> usize {
    (count / 2 + 1..count)
        .find(|&s| gcd(s, count) == 1)
        .unwrap_or(1)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strides_visit_every_vector_once() {
        for count in [2usize, 3, 10, 1387, 1388] {
            let step = stride(count);
            let mut seen = vec![false; count];
            let mut at = 0;
            for _ in 0..count {
                assert!(!seen[at], "count {count}: {at} twice");
                seen[at] = true;
                at = (at + step) % count;
            }
            assert!(seen.iter().all(|&s| s), "count {count}");
        }
    }

    #[test]
    fn a_read_takes_positive_finite_time_and_grows_with_the_model() {
        // A small pool (the test's memory and time); the ordering holds cached or not.
        let small = read_s(1 << 10, 1, 8 << 20);
        let large = read_s(1 << 16, 1, 8 << 20);
        assert!(small > 0.0 && small.is_finite());
        assert!(
            large > small,
            "64x the words read faster: {large} vs {small}"
        );
    }
}
