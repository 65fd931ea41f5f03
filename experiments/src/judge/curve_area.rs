//! The whole-curve reading of a time comparison: where a time claim decides at one target (90% of
//! the way from the initial held-out loss to the reference optimum's), its twin decides on the area
//! under each run's remaining-way curve over the window both runs cover, which reads every target
//! at once.
//!
//! A run's remaining way at an evaluation is `(L - L_opt) / (L_0 - L_opt)`, clamped to [0, 1]
//! (a loss below the optimum's held-out loss has no way left; one above the start, or not a
//! number, has all of it). Its mean over `[0, H]`, `H` the earlier of the two runs' last
//! evaluations, is `(1/H) ∫ min(H, τ(ε)) dε` over the targets ε in (0, 1), where `τ(ε)` is the
//! first time the curve gets within ε of the way: the mean time to reach every target, capped at
//! `H`, as a share of `H` (exactly so for a curve that only falls; a curve that rises again
//! counts its time above ε too). Lower is nearer the optimum for longer. Between evaluations the
//! curve is linear (trapezoids); before a run's first evaluation it starts at the whole way at 0.

use bench_core::metrics::ProgressRow;

/// The axis a curve's area is taken over: the axis of the time claim it accompanies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Seconds (wall or simulated), `ProgressRow::time`.
    Seconds,
    /// Iterations (or epochs, a constant multiple of them): `ProgressRow::iteration`.
    Iterations,
    /// Clocks of a parameter server's workers, which the table drivers write as
    /// `ProgressRow::iteration`.
    Clocks,
}

impl Axis {
    /// Where `row` sits on this axis.
    pub fn at(self, row: &ProgressRow) -> f64 {
        match self {
            Axis::Seconds => row.time,
            Axis::Iterations | Axis::Clocks => row.iteration,
        }
    }

    /// The axis' unit, for claim text.
    pub fn unit(self) -> &'static str {
        match self {
            Axis::Seconds => "s",
            Axis::Iterations => "iterations",
            Axis::Clocks => "clocks",
        }
    }
}

/// The share of the way from `start` to `optimum` that `loss` still has to go, in [0, 1]; a
/// loss that is not a number (a diverged run) has all of it.
pub fn remaining_way(loss: f64, start: f64, optimum: f64) -> f64 {
    if loss.is_finite() {
        ((loss - optimum) / (start - optimum)).clamp(0.0, 1.0)
    } else {
        1.0
    }
}

/// The mean of `progress`' remaining way over `[0, horizon]` on `axis` (see the module docs);
/// `None` when the horizon is not positive or the start is not above the optimum (no way to
/// measure). A curve ending before the horizon holds its last value to it.
pub fn mean_remaining_way(
    progress: &[ProgressRow],
    axis: Axis,
    start: f64,
    optimum: f64,
    horizon: f64,
) -> Option<f64> {
    if !(horizon > 0.0 && horizon.is_finite() && start > optimum) {
        return None;
    }
    let (mut x0, mut y0) = (0.0, 1.0);
    let mut area = 0.0;
    for p in progress {
        let (x, y) = (axis.at(p), remaining_way(p.loss, start, optimum));
        if x <= x0 {
            // An evaluation at the start (or a second one at the same point): its value.
            y0 = y;
            continue;
        }
        if x >= horizon {
            let at_horizon = y0 + (y - y0) * (horizon - x0) / (x - x0);
            area += 0.5 * (y0 + at_horizon) * (horizon - x0);
            return Some(area / horizon);
        }
        area += 0.5 * (y0 + y) * (x - x0);
        (x0, y0) = (x, y);
    }
    area += y0 * (horizon - x0);
    Some(area / horizon)
}

/// What a curve does inside the window `[0, horizon]` besides its mean: whether it learns at
/// all and whether it diverges there. Two runs that both stay near the whole way have means
/// near 1 whose ratio reads "equivalent"; the twin must not pass on that.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowReading {
    /// The least remaining way at any evaluation in the window (1 when there is none).
    pub least: f64,
    /// Where on the axis the first loss that is not a number (or infinite) sits, if any.
    pub diverged_at: Option<f64>,
}

/// Reads `progress` over `[0, horizon]` on `axis` (see [`WindowReading`]).
pub fn read_window(
    progress: &[ProgressRow],
    axis: Axis,
    start: f64,
    optimum: f64,
    horizon: f64,
) -> WindowReading {
    let mut reading = WindowReading {
        least: 1.0,
        diverged_at: None,
    };
    for p in progress.iter().filter(|p| axis.at(p) <= horizon) {
        if !p.loss.is_finite() && reading.diverged_at.is_none() {
            reading.diverged_at = Some(axis.at(p));
        }
        reading.least = reading.least.min(remaining_way(p.loss, start, optimum));
    }
    reading
}

/// Whether two runs drew the same held-out curve, evaluation for evaluation, bit for bit (a
/// NaN accuracy, where none is measured, does not make equal curves differ).
pub fn same_curve(a: &[ProgressRow], b: &[ProgressRow]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.time.to_bits() == y.time.to_bits()
                && x.iteration.to_bits() == y.iteration.to_bits()
                && x.loss.to_bits() == y.loss.to_bits()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A held-out curve evaluated at `(time, loss)`, its iterations the evaluations' order.
    fn curve(points: &[(f64, f64)]) -> Vec<ProgressRow> {
        points
            .iter()
            .enumerate()
            .map(|(i, &(time, loss))| ProgressRow {
                time,
                iteration: i as f64,
                loss,
                accuracy: f64::NAN,
                train_objective: None,
            })
            .collect()
    }

    /// Hand-computed areas: trapezoids from (0, 1), the horizon cut by interpolation, the
    /// clamp at both ends, a non-number as the whole way.
    #[test]
    fn the_area_under_the_remaining_way() {
        // Start 1.0, optimum 0.0: the remaining way is the loss itself.
        let c = curve(&[(1.0, 0.5), (2.0, 0.0), (4.0, 0.0)]);
        // [0,1]: (1 + 0.5)/2 = 0.75; [1,2]: 0.25; [2,4]: 0. Over 4: 1.0 / 4.
        let m = mean_remaining_way(&c, Axis::Seconds, 1.0, 0.0, 4.0).unwrap();
        assert!((m - 0.25).abs() < 1e-12, "{m}");
        // Cut at 1.5: 0.75 + (0.5 + 0.25)/2 * 0.5 = 0.9375, over 1.5.
        let m = mean_remaining_way(&c, Axis::Seconds, 1.0, 0.0, 1.5).unwrap();
        assert!((m - 0.9375 / 1.5).abs() < 1e-12, "{m}");
        // A curve ending early holds its last value: 1.0 + 0 * 2 over 6.
        let m = mean_remaining_way(&c, Axis::Seconds, 1.0, 0.0, 6.0).unwrap();
        assert!((m - 1.0 / 6.0).abs() < 1e-12, "{m}");
        // Below the optimum counts as there, above the start as the whole way, NaN as the
        // whole way.
        assert_eq!(remaining_way(-0.5, 1.0, 0.0), 0.0);
        assert_eq!(remaining_way(3.0, 1.0, 0.0), 1.0);
        assert_eq!(remaining_way(f64::NAN, 1.0, 0.0), 1.0);
        // An evaluation at 0 sets the start's value: a run already halfway at 0.
        let c = curve(&[(0.0, 0.5), (1.0, 0.5)]);
        let m = mean_remaining_way(&c, Axis::Seconds, 1.0, 0.0, 1.0).unwrap();
        assert!((m - 0.5).abs() < 1e-12, "{m}");
        // No way to measure.
        assert_eq!(mean_remaining_way(&c, Axis::Seconds, 0.0, 0.0, 1.0), None);
        assert_eq!(mean_remaining_way(&c, Axis::Seconds, 1.0, 0.0, 0.0), None);
        // Equal curves are the same despite NaN accuracies; one loss apart they are not.
        let mut d = c.clone();
        assert!(same_curve(&c, &d));
        d[1].loss = 0.25;
        assert!(!same_curve(&c, &d));
        assert!(!same_curve(&c, &d[..1]));
    }

    /// The window reading: the least remaining way inside the window only, and the first
    /// non-number's place.
    #[test]
    fn the_window_reading_sees_learning_and_divergence() {
        let c = curve(&[(1.0, 0.8), (2.0, f64::NAN), (3.0, 0.2), (5.0, 0.0)]);
        let r = read_window(&c, Axis::Seconds, 1.0, 0.0, 4.0);
        assert_eq!(r.diverged_at, Some(2.0));
        assert!((r.least - 0.2).abs() < 1e-12, "{r:?}");
        let r = read_window(&c, Axis::Seconds, 1.0, 0.0, 1.5);
        assert_eq!(r.diverged_at, None);
        assert!((r.least - 0.8).abs() < 1e-12, "{r:?}");
        assert_eq!(read_window(&[], Axis::Seconds, 1.0, 0.0, 1.0).least, 1.0);
    }

    /// The area is the mean time to every target: a falling step curve that covers the whole
    /// way at t = 1 of 4 has mean remaining way 1/4 (every target reached at 1).
    #[test]
    fn the_area_reads_every_target_at_once() {
        let step = curve(&[(1.0, 1.0), (1.0 + 1e-9, 0.0), (4.0, 0.0)]);
        let m = mean_remaining_way(&step, Axis::Seconds, 1.0, 0.0, 4.0).unwrap();
        assert!((m - 0.25).abs() < 1e-6, "{m}");
        // On iterations: the rows' iteration is the axis.
        let rows: Vec<ProgressRow> = step
            .iter()
            .enumerate()
            .map(|(i, p)| ProgressRow {
                iteration: 2.0 * i as f64 + 2.0,
                ..*p
            })
            .collect();
        // Iterations 2 (1.0), 4 (0.0), 6 (0.0): [0,2] 1 * 2 = 2, [2,4] 1, over 6.
        let m = mean_remaining_way(&rows, Axis::Iterations, 1.0, 0.0, 6.0).unwrap();
        assert!((m - 0.5).abs() < 1e-12, "{m}");
    }
}
