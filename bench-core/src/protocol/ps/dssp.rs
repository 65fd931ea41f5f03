//! DSSP's synchronization controller (DSSP §III, Alg 1 and 2).
//!
//! The server keeps, per worker, its push count `t_i` and the timestamps of its two latest pushes
//! (table `A`). A worker within `s_L` iterations of the slowest continues at once. Beyond that,
//! a worker with granted extra iterations (`r_p > 0`) continues and spends one; otherwise the
//! current fastest worker asks the controller, which extrapolates the next `r_max` pushes of it
//! and of the slowest worker from their latest intervals and picks the `r*` in `[0, r_max]`
//! whose simulated push time lies closest to one of the slowest worker's:
//! `r* = argmin_r min_k |Sim_slowest[k] - Sim_p[r]|`.
//!
//! Choices where the listing is open (documented in the run's notes):
//! * `A` is updated on every push of every worker (the listing updates it inside the controller
//!   only, which would leave the slowest worker's timestamps stale).
//! * The OK sent when the controller grants `r* > 0` spends one of the `r*` iterations, and the
//!   range offered is `[0, r_max - e]` where `e` is the number of extra iterations the worker
//!   already runs beyond `s_L`; so the iteration gap never exceeds `s_L + r_max`, the bound the
//!   paper states (the literal listing would allow `s_L + 1 + r_max`, and re-grants after that).
//! * Ties in `r*` go to the smallest `r` (least staleness); the slowest worker is the one with
//!   the fewest pushes, ties to the lowest index.
//! * Before a worker's second push its interval is measured from time 0.

use crate::protocol::Nanos;

/// Per-worker state of the controller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushRecord {
    /// Pushes received (`t_i`).
    pub pushes: u64,
    /// `A[i][0]`: latest push time.
    pub latest: Nanos,
    /// `A[i][1]`: second latest push time.
    pub previous: Nanos,
    /// `r_i`: extra iterations granted and not yet spent.
    pub extra: u64,
}

impl PushRecord {
    /// Latest iteration interval `A[i][0] - A[i][1]`.
    pub fn interval(&self) -> Nanos {
        self.latest.saturating_sub(self.previous)
    }
}

/// Algorithm 2: the `r` in `0..=range` minimising the distance between worker `p`'s simulated
/// push times `latest_p + r I_p` and the slowest worker's `latest_s + (k+1) I_s`, `k` in
/// `0..=r_max`.
pub fn controller(p: &PushRecord, slowest: &PushRecord, r_max: u64, range: u64) -> u64 {
    let ip = p.interval() as i128;
    let is = slowest.interval() as i128;
    let sim_s: Vec<i128> = (0..=r_max as i128)
        .map(|k| slowest.latest as i128 + is + k * is)
        .collect();
    let mut best = (i128::MAX, 0u64);
    for r in 0..=range.min(r_max) {
        let t = p.latest as i128 + r as i128 * ip;
        let d = sim_s
            .iter()
            .map(|&s| (s - t).abs())
            .min()
            .unwrap_or(i128::MAX);
        if d < best.0 {
            best = (d, r);
        }
    }
    best.1
}

/// The server side of Algorithm 1 for all workers.
#[derive(Debug, Clone)]
pub struct DsspController {
    s_l: u64,
    r_max: u64,
    workers: Vec<PushRecord>,
}

/// The server's answer to a worker that just pushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Send OK (the model) now.
    Continue,
    /// Hold the OK until the slowest worker is within `s_L`.
    Wait,
}

impl DsspController {
    /// A controller for `workers` workers with lower bound `s_l` and range `[0, r_max]`.
    pub fn new(workers: usize, s_l: u64, r_max: u64) -> Self {
        DsspController {
            s_l,
            r_max,
            workers: vec![PushRecord::default(); workers],
        }
    }

    /// Records a push of worker `w` at `now` (Algorithm 1 line 1; table `A`).
    pub fn record_push(&mut self, w: usize, now: Nanos) {
        let r = &mut self.workers[w];
        r.pushes += 1;
        r.previous = r.latest;
        r.latest = now;
    }

    fn slowest(&self) -> usize {
        (0..self.workers.len())
            .min_by_key(|&i| (self.workers[i].pushes, i))
            .unwrap_or(0)
    }

    /// Gap `t_w - t_slowest`.
    pub fn gap(&self, w: usize) -> u64 {
        self.workers[w].pushes - self.workers[self.slowest()].pushes
    }

    /// Algorithm 1 lines 3-17 for worker `w` after its push.
    pub fn decide(&mut self, w: usize) -> Decision {
        if self.workers[w].extra > 0 {
            self.workers[w].extra -= 1;
            return Decision::Continue;
        }
        let gap = self.gap(w);
        if gap <= self.s_l {
            return Decision::Continue;
        }
        let fastest = self.workers.iter().map(|r| r.pushes).max().unwrap_or(0);
        if self.workers[w].pushes == fastest {
            let already = gap - self.s_l - 1;
            let range = self.r_max.saturating_sub(already);
            let s = self.slowest();
            let r = controller(&self.workers[w], &self.workers[s], self.r_max, range);
            if r > 0 {
                self.workers[w].extra = r - 1;
                return Decision::Continue;
            }
        }
        Decision::Wait
    }

    /// Line 17: may a waiting worker `w` continue now?
    pub fn released(&self, w: usize) -> bool {
        self.gap(w) <= self.s_l
    }

    /// State of worker `w`.
    pub fn record(&self, w: usize) -> &PushRecord {
        &self.workers[w]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(latest: u64, previous: u64) -> PushRecord {
        PushRecord {
            pushes: 0,
            latest,
            previous,
            extra: 0,
        }
    }

    #[test]
    fn r_star_hand_computed() {
        // p pushes every 10 (latest 100); slowest every 35 (latest 90):
        // Sim_s = 125, 160, 195, ...; Sim_p = 100, 110, 120, 130, 140 (r_max 4).
        // |125-120| = 5 and |125-130| = 5: tie -> r = 2.
        assert_eq!(controller(&rec(100, 90), &rec(90, 55), 4, 4), 2);
        // slowest every 32 (latest 90): Sim_s = 122, 154, ...: closest Sim_p is 120 (r = 2).
        assert_eq!(controller(&rec(100, 90), &rec(90, 58), 4, 4), 2);
        // slowest latest 99, interval 1: Sim_s = 100.. -> r = 0 matches exactly at 100.
        assert_eq!(controller(&rec(100, 90), &rec(99, 98), 4, 4), 0);
        // slowest far behind: Sim_s = 180, 270, ...; best Sim_p within r_max = 3 is 130 (r = 3).
        assert_eq!(controller(&rec(100, 90), &rec(90, 0), 3, 3), 3);
        // range limits the choice.
        assert_eq!(controller(&rec(100, 90), &rec(90, 0), 3, 1), 1);
    }

    #[test]
    fn within_lower_bound_continues_then_controller_then_extra() {
        let mut c = DsspController::new(2, 1, 3);
        // worker 0 pushes every 10 ns, worker 1 once at 40.
        c.record_push(1, 40);
        for t in 1..=2 {
            c.record_push(0, 10 * t);
        }
        // gap 1 <= s_L
        assert_eq!(c.decide(0), Decision::Continue);
        c.record_push(0, 30);
        // gap 2 > s_L = 1, fastest: controller. p: latest 30 interval 10 -> 30,40,50,60;
        // slowest: latest 40 interval 40 -> 80, 120, ... ; closest Sim_p to 80 is 60 (r = 3).
        assert_eq!(c.decide(0), Decision::Continue);
        assert_eq!(c.record(0).extra, 2);
        c.record_push(0, 40);
        assert_eq!(c.decide(0), Decision::Continue);
        c.record_push(0, 50);
        assert_eq!(c.decide(0), Decision::Continue);
        assert_eq!(c.record(0).extra, 0);
        c.record_push(0, 60);
        // gap now 5 = s_L + r_max + 1 pushes ahead, extras spent, range 0 -> wait.
        assert_eq!(c.gap(0), 5);
        assert_eq!(c.decide(0), Decision::Wait);
        assert!(!c.released(0));
    }
}
