//! The server's per-worker completed clocks, with their minimum (the model's complete clock)
//! kept up to date in O(log d) per change, where d is the number of distinct clocks held
//! (at most the staleness bound + 2 under SSP). Reading the minimum by scanning every worker
//! on every message made a server's cost per clock grow with the square of the workers.

use std::collections::BTreeMap;

/// Completed clock per worker, and how many workers hold each value.
#[derive(Debug, Clone)]
pub(super) struct CompletedClocks {
    clocks: Vec<u64>,
    /// Workers per clock value (only values some worker holds).
    at: BTreeMap<u64, usize>,
}

impl CompletedClocks {
    /// `workers` workers, all at clock 0.
    pub(super) fn new(workers: usize) -> Self {
        let mut at = BTreeMap::new();
        if workers > 0 {
            at.insert(0, workers);
        }
        CompletedClocks {
            clocks: vec![0; workers],
            at,
        }
    }

    /// Worker `w`'s completed clock.
    pub(super) fn get(&self, w: usize) -> u64 {
        self.clocks[w]
    }

    /// Workers.
    pub(super) fn len(&self) -> usize {
        self.clocks.len()
    }

    /// Every worker's completed clock, by worker.
    pub(super) fn as_slice(&self) -> &[u64] {
        &self.clocks
    }

    /// Sets worker `w`'s completed clock to `clock`.
    pub(super) fn set(&mut self, w: usize, clock: u64) {
        let old = std::mem::replace(&mut self.clocks[w], clock);
        if old == clock {
            return;
        }
        if let Some(n) = self.at.get_mut(&old) {
            *n -= 1;
            if *n == 0 {
                self.at.remove(&old);
            }
        }
        *self.at.entry(clock).or_default() += 1;
    }

    /// The smallest completed clock (0 with no workers).
    pub(super) fn min(&self) -> u64 {
        self.at.keys().next().copied().unwrap_or(0)
    }

    /// Whether every worker is at `clock`.
    pub(super) fn all_at(&self, clock: u64) -> bool {
        self.at.len() == 1 && self.at.contains_key(&clock)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimum_and_all_at_follow_every_change_as_a_scan_would() {
        let mut c = CompletedClocks::new(5);
        let mut naive = [0u64; 5];
        let mut x: u64 = 7;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let w = (x >> 33) as usize % 5;
            let step = (x >> 20) % 3; // 0: unchanged, 1-2: forward (backup workers jump)
            naive[w] += step;
            c.set(w, naive[w]);
            assert_eq!(c.min(), *naive.iter().min().unwrap());
            assert_eq!(c.as_slice(), &naive);
            let m = c.min();
            assert_eq!(c.all_at(m), naive.iter().all(|&v| v == m));
        }
        assert_eq!(CompletedClocks::new(0).min(), 0);
    }
}
