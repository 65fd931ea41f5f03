//! The one time-to-target comparison every figure with a loss target states its papers'
//! "faster", "before", "fewer clocks" with: `ours` against `theirs` by when each first reaches
//! the judged target on one axis (seconds, iterations, clocks), read in the paper's words
//! ([`PaperComparison`]: three outcomes and a tolerance), not exercised when the runs cannot
//! tell anything ([`Judged::unexercised_by`]: neither learns, one crosses at once, or both
//! cross only in their last tenth), and followed by its whole-curve twin
//! ([`Judged::area_claim`]) where the target is optimum-relative.
//!
//! `theirs` is one run, or a group read as one time ([`Theirs`]): the mean of its runs that get
//! there (DSSP's "averaged SSP"), or its earliest ("before every SSP").
//!
//! One direction of the deciding number for every figure: theirs over ours, so above 1 means
//! ours got there first (a speedup), for the time claim and its twin alike. One id layout:
//! [`ClaimId`], the twin's `-area` after the claim's name.

use crate::judge::claim_id::ClaimId;
use crate::judge::comparison::PaperComparison;
use crate::judge::curve_area::Axis;
use crate::judge::format::show;
use crate::judge::verdict::Judged;
use bench_core::claims::Claim;
use std::fmt::Display;

/// What `ours` is compared with.
#[derive(Debug, Clone)]
pub enum Theirs<K> {
    /// One run.
    Run(K),
    /// A group under its name, read as the mean time of those of its runs that get there
    /// (never, when none does): DSSP's "averaged SSP". The measured value says how many got
    /// there.
    Mean(String, Vec<K>),
    /// A group under its name, read as its earliest run: before it is before every one of
    /// them; never, when none gets there.
    Fastest(String, Vec<K>),
}

impl<K: Display> Theirs<K> {
    fn name(&self) -> String {
        match self {
            Theirs::Run(k) => k.to_string(),
            Theirs::Mean(name, _) | Theirs::Fastest(name, _) => name.clone(),
        }
    }

    fn keys(&self) -> &[K] {
        match self {
            Theirs::Run(k) => std::slice::from_ref(k),
            Theirs::Mean(_, ks) | Theirs::Fastest(_, ks) => ks,
        }
    }
}

/// One comparison a paper states: `ours` reaches the target before `theirs`, in its `words`.
#[derive(Debug, Clone)]
pub struct TimeToTarget<'w, K> {
    id: ClaimId,
    words: &'w PaperComparison,
    ours: K,
    theirs: Theirs<K>,
    axis: Axis,
    shown_in: Option<(&'static str, f64)>,
    statement: Option<String>,
    numbers: Option<String>,
}

impl<'w, K> TimeToTarget<'w, K> {
    /// `ours` against `theirs` (run keys of the judged runs) by seconds to the target, stated
    /// as "`ours` reaches held-out loss T before `theirs`, ..." in `words`.
    pub fn new(id: ClaimId, words: &'w PaperComparison, ours: K, theirs: K) -> Self {
        Self::against(id, words, ours, Theirs::Run(theirs))
    }

    /// `ours` against a group of runs read as one time ([`Theirs::Mean`], [`Theirs::Fastest`]);
    /// no whole-curve twin follows (a group has no one curve).
    pub fn against(id: ClaimId, words: &'w PaperComparison, ours: K, theirs: Theirs<K>) -> Self {
        TimeToTarget {
            id,
            words,
            ours,
            theirs,
            axis: Axis::Seconds,
            shown_in: None,
            statement: None,
            numbers: None,
        }
    }

    /// The same comparison on `axis` (clocks, iterations): the crossing's place on it, and
    /// the twin's area over it.
    pub fn on(self, axis: Axis) -> Self {
        TimeToTarget { axis, ..self }
    }

    /// The numbers written in `unit`, `per` of them to one unit of the axis (epochs from
    /// iterations); the ratio, a ratio of the same axis, does not change.
    pub fn shown_in(self, unit: &'static str, per: f64) -> Self {
        TimeToTarget {
            shown_in: Some((unit, per)),
            ..self
        }
    }

    /// The paper's own numbers for this comparison (a table's times), written before the
    /// quoted words in the claim's paper value.
    pub fn with_numbers(self, numbers: impl Into<String>) -> Self {
        TimeToTarget {
            numbers: Some(numbers.into()),
            ..self
        }
    }

    /// The claim's statement, where the paper's comparison reads better in its own terms
    /// than the default.
    pub fn stated(self, statement: impl Into<String>) -> Self {
        TimeToTarget {
            statement: Some(statement.into()),
            ..self
        }
    }
}

/// The deciding number of a comparison, lower better: `theirs` over `ours` (above 1: ours
/// first); not a number when either never got there.
pub fn speedup(ours: Option<f64>, theirs: Option<f64>) -> f64 {
    match (ours, theirs) {
        (Some(a), Some(b)) if a > 0.0 => b / a,
        _ => f64::NAN,
    }
}

impl<K: Display + PartialEq + Clone> Judged<'_, '_, K> {
    /// The time claim of `comparison` and its whole-curve twin (where the target is
    /// optimum-relative and both runs are judged), in that order.
    pub fn time_claims(&self, comparison: TimeToTarget<'_, K>) -> Vec<Claim> {
        let TimeToTarget {
            id,
            words,
            ours,
            theirs,
            axis,
            shown_in,
            statement,
            numbers,
        } = comparison;
        let at = |key: &K| self.crossing(key).map(|p| axis.at(p));
        let (unit, per) = shown_in.unwrap_or((axis.unit(), 1.0));
        let shown = |v: Option<f64>| show(v.map(|x| x * per));
        let a = at(&ours);
        let (b, group) = match &theirs {
            Theirs::Run(k) => (at(k), String::new()),
            Theirs::Mean(_, ks) => {
                let got: Vec<f64> = ks.iter().filter_map(at).collect();
                let mean = (!got.is_empty()).then(|| got.iter().sum::<f64>() / got.len() as f64);
                (
                    mean,
                    format!(
                        " (the mean of the {} of {} that get there: {})",
                        got.len(),
                        ks.len(),
                        each(ks, &at, &shown)
                    ),
                )
            }
            Theirs::Fastest(_, ks) => {
                let fastest = ks
                    .iter()
                    .filter_map(|k| at(k).map(|t| (k, t)))
                    .min_by(|x, y| x.1.total_cmp(&y.1));
                (
                    fastest.map(|(_, t)| t),
                    format!(
                        " (the earliest of {}{})",
                        each(ks, &at, &shown),
                        fastest.map_or(String::new(), |(k, _)| format!(": {k}"))
                    ),
                )
            }
        };
        let name = theirs.name();
        let (holds, how) = words.judge(a, b);
        let statement = statement.unwrap_or_else(|| {
            let measure = match axis {
                Axis::Seconds => "time",
                _ => unit,
            };
            format!(
                "{ours} reaches {} {:.4} {}",
                self.words().loss,
                self.target,
                words.before_in(&name, measure)
            )
        });
        let paper = match numbers {
            Some(n) => format!("{n}; {}", words.cite()),
            None => words.cite(),
        };
        let claim = Claim::check(
            id.to_string(),
            statement,
            paper,
            format!(
                "{ours} {} {unit}, {name} {} {unit}{group}: {how}",
                shown(a),
                shown(b)
            ),
            holds,
        )
        .with_value(speedup(a, b));
        let twin = match &theirs {
            Theirs::Run(k) => self.area_claim(id.twin().into(), words, axis, &ours, k),
            _ => None,
        };
        let mut keys = vec![ours];
        keys.extend(theirs.keys().iter().cloned());
        std::iter::once(self.gate(claim, &keys))
            .chain(twin)
            .collect()
    }
}

/// `k1 t1, k2 never, ...`: each of a group's times on the axis, as shown.
fn each<K: Display>(
    keys: &[K],
    at: &impl Fn(&K) -> Option<f64>,
    shown: &impl Fn(Option<f64>) -> String,
) -> String {
    keys.iter()
        .map(|k| format!("{k} {}", shown(at(k))))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::comparison::{Allows, DEFAULT_TOLERANCE};
    use crate::judge::reference::tests::{curve, reference};
    use crate::judge::verdict::Judge;
    use bench_core::claims::Verdict;

    const FASTER: PaperComparison = PaperComparison {
        quote: "a is faster than b",
        source: "Paper §1, Fig 1",
        allows: Allows::Better,
        tolerance: DEFAULT_TOLERANCE,
    };

    /// The time claim, its deciding number theirs over ours, its twin right after it under
    /// the `-area` id, and the statement by the axis.
    #[test]
    fn one_comparison_gives_the_time_claim_and_its_twin() {
        let r = reference(0.0);
        // Start 1.0, optimum 0.0: the target is 0.1. `a` crosses at its 4th evaluation of
        // 10, `b` at its 8th.
        let mut la = vec![1.0, 0.8, 0.5, 0.3, 0.09];
        la.extend([0.05; 6]);
        let mut lb = vec![1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.3, 0.2, 0.09];
        lb.extend([0.05; 2]);
        let (a, b) = (curve(&la), curve(&lb));
        let judged = Judge::new(Some(&r)).judge([("a", &a[..]), ("b", &b[..])]);
        let claims = judged.time_claims(TimeToTarget::new(
            ClaimId::new("fig", "part", "a-before-b"),
            &FASTER,
            "a",
            "b",
        ));
        assert_eq!(claims.len(), 2, "{claims:?}");
        let (time, twin) = (&claims[0], &claims[1]);
        assert_eq!(time.claim_id, "fig/part/a-before-b");
        assert_eq!(twin.claim_id, "fig/part/a-before-b-area");
        assert_eq!(time.verdict, Verdict::Pass, "{time:?}");
        assert_eq!(time.value, Some(2.0));
        assert!(
            twin.value.unwrap() > 1.0,
            "ours nearer the optimum: {twin:?}"
        );
        assert!(
            time.statement
                .contains("before b, by more than 5% of its time"),
            "{}",
            time.statement
        );
        // The other way round: b is not faster, and the number is below 1.
        let back = judged.time_claims(TimeToTarget::new(
            ClaimId::new("fig", "", "b-before-a"),
            &FASTER,
            "b",
            "a",
        ));
        assert_eq!(back[0].claim_id, "fig/b-before-a");
        assert_eq!(back[0].verdict, Verdict::Fail);
        assert_eq!(back[0].value, Some(0.5));
        // On iterations, shown in epochs: the statement's measure and the numbers' unit.
        let epochs = judged.time_claims(
            TimeToTarget::new(ClaimId::new("fig", "", "x"), &FASTER, "a", "b")
                .on(Axis::Iterations)
                .shown_in("epochs", 0.5),
        );
        assert!(
            epochs[0].statement.contains("of its epochs"),
            "{}",
            epochs[0].statement
        );
        assert!(
            epochs[0]
                .measured_value
                .starts_with("a 2.000 epochs, b 4.000 epochs"),
            "{}",
            epochs[0].measured_value
        );
        // Without a reference there is no optimum-relative target and no twin.
        let plain = Judge::new(None).judge([("a", &a[..]), ("b", &b[..])]);
        let alone = plain.time_claims(TimeToTarget::new(
            ClaimId::new("f", "", "n"),
            &FASTER,
            "a",
            "b",
        ));
        assert_eq!(alone.len(), 1);
    }

    /// Curves whose accuracy rises as `accs` (one evaluation a second) and whose loss falls
    /// from 1 alongside, so every one learns.
    fn accuracy_curve(accs: &[f64]) -> Vec<bench_core::metrics::ProgressRow> {
        let mut c = curve(&accs.iter().map(|a| 1.0 - a).collect::<Vec<_>>());
        for (row, &a) in c.iter_mut().zip(accs) {
            row.accuracy = a;
        }
        c
    }

    /// At a fixed accuracy: the crossing is the first evaluation at or above it, no twin, the
    /// statement names the accuracy; a group read as its mean or its earliest run.
    #[test]
    fn an_accuracy_target_and_groups_of_runs() {
        use crate::judge::reference::ReferenceWords;
        use crate::judge::verdict::Judge;
        // Ten evaluations each; 0.5 reached at 4 s (a), 6 s (b), 8 s (c), never (d).
        let ramp = |at: usize| -> Vec<f64> {
            (0..10)
                .map(|i| if i >= at { 0.6 } else { 0.05 * i as f64 })
                .collect()
        };
        let (a, b, c, d) = (ramp(4), ramp(6), ramp(8), vec![0.1; 10]);
        let (a, b, c) = (accuracy_curve(&a), accuracy_curve(&b), accuracy_curve(&c));
        let mut d = accuracy_curve(&d);
        d[9].loss = 0.5;
        let judged = Judge::at_accuracy(0.5, ReferenceWords::HELD_OUT_ACCURACY).judge([
            ("a", &a[..]),
            ("b", &b[..]),
            ("c", &c[..]),
            ("d", &d[..]),
        ]);
        assert!(!judged.relative);
        assert_eq!(judged.seconds_to_target(&"a"), Some(4.0));
        assert_eq!(judged.seconds_to_target(&"d"), None);
        let one = judged.time_claims(TimeToTarget::new(
            ClaimId::new("f", "", "a-before-b"),
            &FASTER,
            "a",
            "b",
        ));
        assert_eq!(one.len(), 1, "no twin at a fixed accuracy: {one:?}");
        assert_eq!(one[0].verdict, Verdict::Pass, "{:?}", one[0]);
        assert_eq!(one[0].value, Some(1.5));
        assert!(
            one[0]
                .statement
                .starts_with("a reaches held-out accuracy 0.5000 before b"),
            "{}",
            one[0].statement
        );
        // The mean of those that get there: b 6 and c 8 (d never) is 7.
        let mean = judged.time_claims(TimeToTarget::against(
            ClaimId::new("f", "", "a-before-mean"),
            &FASTER,
            "a",
            Theirs::Mean("the averaged rest".into(), vec!["b", "c", "d"]),
        ));
        assert_eq!(mean.len(), 1);
        assert_eq!(mean[0].value, Some(7.0 / 4.0));
        assert!(
            mean[0].measured_value.contains(
                "the averaged rest 7.000 s (the mean of the 2 of 3 that get there: b 6.000, c 8.000, d never)"
            ),
            "{}",
            mean[0].measured_value
        );
        // The earliest: before every one of them is before b.
        let every = judged.time_claims(TimeToTarget::against(
            ClaimId::new("f", "", "c-before-every"),
            &FASTER,
            "c",
            Theirs::Fastest("every other".into(), vec!["a", "b", "d"]),
        ));
        assert_eq!(every[0].verdict, Verdict::Fail, "{:?}", every[0]);
        assert_eq!(every[0].value, Some(0.5));
        assert!(
            every[0].measured_value.contains(": a)"),
            "{}",
            every[0].measured_value
        );
        // A group none of which gets there loses to ours; the number is then not a number.
        let none = judged.time_claims(TimeToTarget::against(
            ClaimId::new("f", "", "a-before-none"),
            &FASTER,
            "a",
            Theirs::Fastest("d alone".into(), vec!["d"]),
        ));
        assert_eq!(none[0].verdict, Verdict::Pass, "{:?}", none[0]);
        assert_eq!(none[0].value, None);
    }

    /// A run that never reaches the target loses to one that does, and the number is then
    /// not a number; both crossing at once is not exercised.
    #[test]
    fn never_and_at_once() {
        let r = reference(0.0);
        let a = curve(&[1.0, 0.8, 0.6, 0.4, 0.09, 0.05]);
        let b = curve(&[1.0, 0.9, 0.8, 0.7, 0.6, 0.5]);
        let judged = Judge::new(Some(&r)).judge_by([("a", &a[..]), ("b", &b[..])], |k| *k == "a");
        let c = &judged.time_claims(TimeToTarget::new(
            ClaimId::new("f", "", "b-first"),
            &FASTER,
            "b",
            "a",
        ))[0];
        assert_eq!(c.verdict, Verdict::Fail, "{c:?}");
        assert_eq!(c.value, None);
        let quick = curve(&[1.0, 0.05, 0.05, 0.05, 0.05, 0.05]);
        let judged = Judge::new(Some(&r)).judge([("a", &quick[..]), ("b", &a[..])]);
        let c = &judged.time_claims(TimeToTarget::new(
            ClaimId::new("f", "", "a-first"),
            &FASTER,
            "a",
            "b",
        ))[0];
        assert_eq!(c.verdict, Verdict::NotExercised, "{c:?}");
        assert_eq!(speedup(Some(2.0), Some(3.0)), 1.5);
        assert!(speedup(None, Some(3.0)).is_nan());
    }
}
