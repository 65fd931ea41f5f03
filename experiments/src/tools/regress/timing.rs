//! The ratio and absolute tiers: each metric's samples now against the baseline's, judged by a
//! one-sided Mann-Whitney test and a tolerance on the medians.
//!
//! A metric regresses when both hold: the test says it got worse (p < [`ALPHA`]) and its median
//! moved the wrong way by more than the metric's tolerance. When the spread of either sample is
//! itself larger than the tolerance and than half the change, a change of that size cannot be
//! told from noise: the metric is `noisy`, never `regressed`. A regression found once is measured again (every
//! metric, the same number of rounds) and is confirmed only if the new samples regress too;
//! otherwise it is reported `noisy`. Absolute numbers are compared only when this machine's
//! fingerprint matches the baseline's; elsewhere they are printed for information.

use super::compare::{Finding, Outcome, Tier};
use super::stats::{mann_whitney_less, median, relative_spread};
use super::suite::{Better, Kind, Metric, Samples, METRICS};

/// The one-sided test's level.
pub const ALPHA: f64 = 0.05;

/// One metric judged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// Regressed, noisy, improved or same.
    pub outcome: Outcome,
    /// The one-sided p-value that the metric got worse.
    pub p_worse: f64,
    /// Median now over median in the baseline.
    pub ratio: f64,
    /// The larger relative spread of the two samples.
    pub spread: f64,
}

/// Judges `now` against `base` for metric `m`.
pub fn judge(m: &Metric, base: &[f64], now: &[f64]) -> Judgement {
    let (b, n) = (median(base), median(now));
    let ratio = n / b;
    let (p_worse, p_better, worse_by) = match m.better {
        Better::Higher => (
            mann_whitney_less(now, base),
            mann_whitney_less(base, now),
            1.0 - ratio,
        ),
        Better::Lower => (
            mann_whitney_less(base, now),
            mann_whitney_less(now, base),
            ratio - 1.0,
        ),
    };
    let spread = relative_spread(base).max(relative_spread(now));
    let outcome = if !ratio.is_finite() {
        Outcome::Noisy
    } else if p_worse < ALPHA && worse_by > m.tolerance {
        // noise that could produce a change of this size: wider than the tolerance and more
        // than half the change itself
        if spread > m.tolerance && spread > worse_by / 2.0 {
            Outcome::Noisy
        } else {
            Outcome::Regressed
        }
    } else if p_better < ALPHA && -worse_by > m.tolerance {
        Outcome::Improved
    } else {
        Outcome::Same
    };
    Judgement {
        outcome,
        p_worse,
        ratio,
        spread,
    }
}

/// The findings of the measured tiers. `remeasured` holds the samples of a second measurement,
/// taken because `first` regressed somewhere: a regression stands only if it regresses there
/// too. `same_testbed`: whether absolute numbers are gated.
pub fn findings(
    base: &Samples,
    first: &Samples,
    remeasured: Option<&Samples>,
    same_testbed: bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for m in METRICS {
        let tier = match m.kind {
            Kind::Ratio => Tier::Ratio,
            Kind::Absolute => Tier::Absolute,
        };
        let (Some(b), Some(n)) = (base.values.get(m.name), first.values.get(m.name)) else {
            if !base.values.contains_key(m.name) && !first.values.contains_key(m.name) {
                continue; // measured by neither (the rdma metrics off the RDMA testbed)
            }
            out.push(Finding {
                tier,
                metric: m.name.to_string(),
                baseline: base.values.get(m.name).map_or("-".into(), |b| show(m, b)),
                now: first.values.get(m.name).map_or("-".into(), |n| show(m, n)),
                outcome: if base.values.contains_key(m.name) {
                    Outcome::Removed
                } else {
                    Outcome::New
                },
                p_value: None,
                change: None,
                note: String::new(),
            });
            continue;
        };
        let mut j = judge(m, b, n);
        let mut note = String::new();
        let mut shown = n;
        if j.outcome == Outcome::Regressed {
            match remeasured.and_then(|r| r.values.get(m.name)) {
                Some(again) => {
                    let k = judge(m, b, again);
                    if k.outcome == Outcome::Regressed {
                        note = format!(
                            "confirmed on re-measurement ({:.2}x, p {:.3})",
                            k.ratio, k.p_worse
                        );
                    } else {
                        note = format!(
                            "regressed once ({:.2}x, p {:.3}), not on re-measurement ({:.2}x, p {:.3})",
                            j.ratio, j.p_worse, k.ratio, k.p_worse
                        );
                        j = k;
                        j.outcome = Outcome::Noisy;
                        shown = again;
                    }
                }
                None => note = "not re-measured".into(),
            }
        } else if j.outcome == Outcome::Noisy && !j.ratio.is_finite() {
            note = "no finite ratio of the medians (a zero or missing median)".into();
        } else if j.outcome == Outcome::Noisy {
            note = format!(
                "spread {:.0}% exceeds the tolerance {:.0}%",
                100.0 * j.spread,
                100.0 * m.tolerance
            );
        }
        if tier == Tier::Absolute && !same_testbed {
            j.outcome = Outcome::Info;
            note = "not gated here (another testbed, or a shared one): for information".into();
        }
        out.push(Finding {
            tier,
            metric: m.name.to_string(),
            baseline: show(m, b),
            now: show(m, shown),
            outcome: j.outcome,
            p_value: Some(j.p_worse),
            change: Some(j.ratio),
            note,
        });
    }
    out
}

/// A sample's median with its unit and spread: `0.95x ±3%`.
fn show(m: &Metric, x: &[f64]) -> String {
    let med = median(x);
    let v = if med >= 1000.0 {
        format!("{med:.3e}")
    } else {
        format!("{med:.3}")
    };
    let unit = if m.unit == "x" {
        "x".to_string()
    } else {
        format!(" {}", m.unit)
    };
    format!("{v}{unit} ±{:.0}%", 100.0 * relative_spread(x))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::regress::suite::metric;

    fn seeded(center: f64, rel_noise: f64, n: usize, seed: u64) -> Vec<f64> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let u = (x >> 11) as f64 / (1u64 << 53) as f64; // [0, 1)
                center * (1.0 + rel_noise * (2.0 * u - 1.0))
            })
            .collect()
    }

    #[test]
    fn a_30_percent_loss_regresses_and_equal_samples_do_not() {
        let bw = metric("shm/write-4MiB/word-copy").unwrap();
        let lat = metric("shm/notify-2B/cache-line").unwrap();
        for seed in 0..50 {
            let base = seeded(1.0, 0.05, 5, seed);
            let slow = seeded(1.0 / 1.3, 0.05, 5, seed + 1000);
            assert_eq!(
                judge(bw, &base, &slow).outcome,
                Outcome::Regressed,
                "seed {seed}"
            );
            let same = seeded(1.0, 0.05, 5, seed + 2000);
            assert_eq!(
                judge(bw, &base, &same).outcome,
                Outcome::Same,
                "seed {seed}"
            );
            // latency: higher is worse
            let lat_base = seeded(3.0, 0.05, 5, seed);
            let lat_slow = seeded(3.0 * 1.5, 0.05, 5, seed + 3000);
            assert_eq!(judge(lat, &lat_base, &lat_slow).outcome, Outcome::Regressed);
            let lat_twice = seeded(6.0, 0.05, 5, seed + 4000);
            assert_eq!(judge(lat, &lat_twice, &lat_base).outcome, Outcome::Improved);
        }
    }

    #[test]
    fn small_shifts_and_wide_spreads_are_not_regressions() {
        let bw = metric("shm/write-4MiB/word-copy").unwrap();
        // 10% slower, clearly (p small), but within the 15% tolerance
        let base = vec![1.0, 1.01, 0.99, 1.0, 1.005];
        let slower = vec![0.9, 0.91, 0.89, 0.9, 0.905];
        let j = judge(bw, &base, &slower);
        assert!(j.p_worse < ALPHA);
        assert_eq!(j.outcome, Outcome::Same);
        // 50% slower but the samples scatter by more than the tolerance and half the change
        let wide = vec![0.3, 0.5, 0.7, 0.45, 0.6];
        let base_wide = vec![0.6, 1.0, 1.4, 0.8, 1.2];
        let j = judge(bw, &base_wide, &wide);
        assert!(j.spread > 0.25 && j.p_worse < ALPHA, "{j:?}");
        assert_eq!(j.outcome, Outcome::Noisy);
        // 50% slower with a 21% spread: a change that large is not noise
        let base_tight = vec![1.0, 1.01, 0.99, 1.0, 1.005];
        let slow_spread = vec![0.38, 0.5, 0.62, 0.43, 0.57];
        let j = judge(bw, &base_tight, &slow_spread);
        assert!(j.spread > bw.tolerance, "{j:?}");
        assert_eq!(j.outcome, Outcome::Regressed);
    }

    fn samples(v: &[(&str, Vec<f64>)]) -> Samples {
        Samples {
            rounds: 5,
            values: v.iter().map(|(k, x)| (k.to_string(), x.clone())).collect(),
        }
    }

    #[test]
    fn a_regression_must_hold_on_re_measurement_and_absolutes_need_the_testbed() {
        let base = samples(&[
            (
                "shm/write-4MiB/word-copy",
                vec![1.0, 1.01, 0.99, 1.0, 1.005],
            ),
            ("shm/write-4MiB", vec![80.0, 81.0, 79.0, 80.0, 80.5]),
        ]);
        let slow = samples(&[
            (
                "shm/write-4MiB/word-copy",
                vec![0.7, 0.71, 0.69, 0.7, 0.705],
            ),
            ("shm/write-4MiB", vec![50.0, 51.0, 49.0, 50.0, 50.5]),
            ("sim/events", vec![3e6; 5]),
        ]);
        let find = |f: &[Finding], m: &str| f.iter().find(|x| x.metric == m).unwrap().clone();
        // confirmed twice
        let f = findings(&base, &slow, Some(&slow), true);
        let r = find(&f, "shm/write-4MiB/word-copy");
        assert_eq!(r.outcome, Outcome::Regressed);
        assert_eq!(r.tier, Tier::Ratio);
        assert!(r.note.contains("confirmed"), "{}", r.note);
        assert_eq!(find(&f, "shm/write-4MiB").outcome, Outcome::Regressed);
        // once only: noisy
        let f = findings(&base, &slow, Some(&base), true);
        assert_eq!(find(&f, "shm/write-4MiB/word-copy").outcome, Outcome::Noisy);
        // another testbed: the absolute number is information, the ratio still gates
        let f = findings(&base, &slow, Some(&slow), false);
        assert_eq!(find(&f, "shm/write-4MiB").outcome, Outcome::Info);
        assert_eq!(
            find(&f, "shm/write-4MiB/word-copy").outcome,
            Outcome::Regressed
        );
        // metrics the baseline lacks are new, not compared; those neither measured are absent
        assert_eq!(find(&f, "sim/events").outcome, Outcome::New);
        assert!(f.iter().all(|x| !x.metric.starts_with("rdma/")));
        assert_eq!(f.len(), 3);
    }
}
