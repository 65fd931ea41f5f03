//! The one time-to-target comparison every figure with a loss target states its papers'
//! "faster", "before", "fewer clocks" with: `ours` against `theirs` by when each first reaches
//! the judged target on one axis (seconds, iterations, clocks), read in the paper's words
//! ([`PaperComparison`]: three outcomes and a tolerance), not exercised when the runs cannot
//! tell anything ([`Judged::unexercised_by`]: neither learns, one crosses at once, or both
//! cross only in their last tenth), and followed by its whole-curve twin
//! ([`Judged::area_claim`]) where the target is optimum-relative.
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

/// One comparison a paper states: `ours` reaches the target before `theirs`, in its `words`.
#[derive(Debug, Clone)]
pub struct TimeToTarget<'w, K> {
    id: ClaimId,
    words: &'w PaperComparison,
    ours: K,
    theirs: K,
    axis: Axis,
    shown_in: Option<(&'static str, f64)>,
    statement: Option<String>,
}

impl<'w, K> TimeToTarget<'w, K> {
    /// `ours` against `theirs` (run keys of the judged runs) by seconds to the target, stated
    /// as "`ours` reaches held-out loss T before `theirs`, ..." in `words`.
    pub fn new(id: ClaimId, words: &'w PaperComparison, ours: K, theirs: K) -> Self {
        TimeToTarget {
            id,
            words,
            ours,
            theirs,
            axis: Axis::Seconds,
            shown_in: None,
            statement: None,
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
        } = comparison;
        let at = |key: &K| self.crossing(key).map(|p| axis.at(p));
        let (a, b) = (at(&ours), at(&theirs));
        let (holds, how) = words.judge(a, b);
        let (unit, per) = shown_in.unwrap_or((axis.unit(), 1.0));
        let shown = |v: Option<f64>| show(v.map(|x| x * per));
        let statement = statement.unwrap_or_else(|| {
            let measure = match axis {
                Axis::Seconds => "time",
                _ => unit,
            };
            format!(
                "{ours} reaches {} {:.4} {}",
                self.words().loss,
                self.target,
                words.before_in(&theirs.to_string(), measure)
            )
        });
        let claim = Claim::check(
            id.to_string(),
            statement,
            words.cite(),
            format!(
                "{ours} {} {unit}, {theirs} {} {unit}: {how}",
                shown(a),
                shown(b)
            ),
            holds,
        )
        .with_value(speedup(a, b));
        let twin = self.area_claim(id.twin().into(), words, axis, &ours, &theirs);
        std::iter::once(self.gate(claim, &[ours, theirs]))
            .chain(twin)
            .collect()
    }
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
