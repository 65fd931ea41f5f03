//! What a run of several seeds prints on stderr, in seed order whatever order its seeds finish
//! in: a line when a batch of seeds starts (which seeds, how many at a time), then one per seed
//! when it is done, with its time and about how long the batch's other seeds will take.

use crate::harness::progress_log::minutes_seconds;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Mutex;
use std::time::Duration;

/// The seed lines of one batch: the seeds `ks` (indices into the run's seeds) run `at_once` at
/// a time.
pub struct SeedLines {
    binary: &'static str,
    ks: Range<usize>,
    at_once: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The next seed (index) whose line is due.
    next: usize,
    /// Seeds done before an earlier seed, by index: seed and time (the line is written when it
    /// prints, so its estimate is that moment's).
    waiting: BTreeMap<usize, (u64, Duration)>,
    done: usize,
    spent: Duration,
}

impl SeedLines {
    /// Says which seeds start (when they are not the run's only seed).
    pub fn new(binary: &'static str, ks: Range<usize>, seeds: &[u64], at_once: usize) -> Self {
        let at_once = at_once.max(1);
        if ks.end > 1 && at_once > 1 {
            if let (Some(a), Some(b)) = (seeds.first(), seeds.last()) {
                eprintln!("{binary}: seeds {a}-{b}, {at_once} at a time");
            }
        }
        let next = ks.start;
        SeedLines {
            binary,
            ks,
            at_once,
            state: Mutex::new(State {
                next,
                ..State::default()
            }),
        }
    }

    /// Seed `seed` (index `k`) starts: said here when seeds run one at a time.
    pub fn started(&self, k: usize, seed: u64) {
        if self.ks.end > 1 && self.at_once == 1 {
            eprintln!(
                "{}: seed {seed} ({} of {})",
                self.binary,
                k + 1,
                self.ks.end
            );
        }
    }

    /// Seed `seed` (index `k`) is done after `took`: its line, and those of later seeds that
    /// were waiting for it, are printed.
    pub fn finished(&self, k: usize, seed: u64, took: Duration) {
        if self.ks.end <= 1 {
            return;
        }
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.done += 1;
        st.spent += took;
        st.waiting.insert(k, (seed, took));
        while let Some((seed, took)) = {
            let next = st.next;
            st.waiting.remove(&next)
        } {
            eprintln!("{}", self.line(st.next, seed, took, st.done, st.spent));
            st.next += 1;
        }
    }

    /// `<binary>: seed <seed> done in <took> (<i> of <n>, about <left> left)`, `i` its place in
    /// the run's seeds: what is left is the mean seed's time so far (over the `done` seeds
    /// finished) times the rounds of `at_once` seeds still to finish.
    fn line(&self, k: usize, seed: u64, took: Duration, done: usize, spent: Duration) -> String {
        let left = self.ks.len().saturating_sub(done);
        let estimate = if left == 0 {
            String::new()
        } else {
            let rounds = left.div_ceil(self.at_once) as u32;
            format!(
                ", about {} left",
                minutes_seconds(spent / done as u32 * rounds)
            )
        };
        format!(
            "{}: seed {seed} done in {} ({} of {}{estimate})",
            self.binary,
            minutes_seconds(took),
            k + 1,
            self.ks.end
        )
    }
}

impl Drop for SeedLines {
    /// Lines still waiting for a seed that failed are printed as they are.
    fn drop(&mut self) {
        let st = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        let (done, spent) = (st.done, st.spent);
        for (k, (seed, took)) in std::mem::take(&mut st.waiting) {
            eprintln!("{}", self.line(k, seed, took, done, spent));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_says_the_seeds_time_and_about_how_long_the_rest_take() {
        let log = SeedLines::new("hop-table1", 0..5, &[1, 2, 3, 4, 5], 2);
        let s = Duration::from_secs;
        assert_eq!(
            log.line(1, 2, s(150), 1, s(150)),
            "hop-table1: seed 2 done in 2 min 30 s (2 of 5, about 5 min 00 s left)"
        );
        assert_eq!(
            log.line(4, 5, s(100), 5, s(600)),
            "hop-table1: seed 5 done in 1 min 40 s (5 of 5)"
        );
    }

    #[test]
    fn lines_come_out_in_seed_order() {
        let log = SeedLines::new("x", 3..6, &[4, 5, 6], 2);
        let s = Duration::from_secs;
        // Seed 5 (index 4) finishes first: its line waits for seed 4's.
        log.finished(4, 5, s(10));
        {
            let st = log.state.lock().unwrap();
            assert_eq!((st.next, st.waiting.len()), (3, 1));
        }
        log.finished(3, 4, s(12));
        {
            let st = log.state.lock().unwrap();
            assert_eq!((st.next, st.waiting.len(), st.done), (5, 0, 2));
        }
        log.finished(5, 6, s(9));
        assert_eq!(log.state.lock().unwrap().next, 6);
    }
}
