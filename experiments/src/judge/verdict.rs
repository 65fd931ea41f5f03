//! The one judge the figures with a loss target read their runs with (ASYNC's
//! error targets and DSSP's accuracy targets are their papers' own): a [`Judge`], made from
//! the figure's [`Reference`] or the no-reference rule, takes the compared runs under typed keys
//! and yields a [`Judged`]: the comparison target and how it was chosen, each run's crossing of
//! it and its loss span, the `reference.csv` rows and the standard claims (the best run near the
//! reference, every compared run reaching the target). The rules themselves are in
//! [`crate::judge::reference`]; this file only sequences them, once, for all those figures.

use crate::judge::comparison::{Allows, PaperComparison};
use crate::judge::curve_area::{mean_remaining_way, read_window, same_curve, Axis, WindowReading};
use crate::judge::near_objective::{near_optimum_on_objective, objective_span, ObjectiveSpan};
use crate::judge::reference::{
    comparison_target, every_run_reaches_claim, loss_span, near_reference_claim, reached_and_held,
    reference_rows, target_from_reference, Reference, ReferenceRow, ReferenceWords, COMPARISON_WAY,
};
use bench_core::claims::Claim;
use bench_core::metrics::ProgressRow;
use std::fmt::Display;

/// How a figure reads its runs: against a reference (`Some`) or by the no-reference rule
/// (`None`: the target is half the way from the start to the best loss any run reaches), naming the loss
/// and the reference with its words, a run crossing the target when it reaches it and holds it
/// for `hold` more evaluations.
#[derive(Debug, Clone, Copy)]
pub struct Judge<'a> {
    reference: Option<&'a Reference>,
    words: ReferenceWords,
    hold: usize,
    accuracy: Option<f64>,
}

/// One judged run: its key, its curve, whether it helped set the target, where it crossed the
/// target (the evaluation) and its first and last held-out loss.
#[derive(Debug, Clone)]
pub struct JudgedRun<'r, K> {
    /// The run's key in the figure.
    pub key: K,
    /// Its held-out curve.
    pub progress: &'r [ProgressRow],
    /// Whether the target was set from it (and the every-run claim asks about it).
    pub decides: bool,
    /// The evaluation at which it reached the target and held it, if it did.
    pub crossing: Option<&'r ProgressRow>,
    /// Its first and last held-out loss (NaN when it evaluated nothing).
    pub span: (f64, f64),
    /// Its training objective at its first and last evaluation, where the driver computed it.
    pub objective: Option<(f64, f64)>,
}

/// The compared runs read against the target.
#[derive(Debug, Clone)]
pub struct Judged<'a, 'r, K> {
    judge: Judge<'a>,
    /// The held-out loss the time comparisons use (NaN: none).
    pub target: f64,
    /// How the target was chosen (a manifest note).
    pub rule: String,
    /// Whether the target was set relative to the reference.
    pub relative: bool,
    /// The runs, in the order given.
    pub runs: Vec<JudgedRun<'r, K>>,
}

impl<'a> Judge<'a> {
    /// A judge against `reference`, or by the no-reference rule when there is none; the loss and
    /// reference are named as an optimum's ([`ReferenceWords::OPTIMUM`]), crossings hold for no
    /// further evaluation.
    pub fn new(reference: Option<&'a Reference>) -> Self {
        Judge {
            reference,
            words: ReferenceWords::OPTIMUM,
            hold: 0,
            accuracy: None,
        }
    }

    /// A judge whose target is the fixed accuracy `target` (higher better), named with `words`
    /// ([`ReferenceWords::HELD_OUT_ACCURACY`], [`ReferenceWords::TRAINING_ACCURACY`]): the
    /// figures whose papers state their comparisons at an accuracy (DSSP's Fig 3 and Table I,
    /// ASAP's Fig 8). A run crosses it at its first evaluation at or above it (held as
    /// [`Self::holding`] says). The target is not optimum-relative, so no whole-curve twin
    /// follows a time claim.
    pub fn at_accuracy(target: f64, words: ReferenceWords) -> Judge<'static> {
        Judge {
            reference: None,
            words,
            hold: 0,
            accuracy: Some(target),
        }
    }

    /// The same judge naming the loss and the reference with `words`.
    pub fn with_words(self, words: ReferenceWords) -> Self {
        Judge { words, ..self }
    }

    /// The same judge counting a crossing only when the next `hold` evaluations stay at or
    /// below the target.
    pub fn holding(self, hold: usize) -> Self {
        Judge { hold, ..self }
    }

    /// Judges `runs`, every one of them setting the target.
    pub fn judge<'r, K>(
        &self,
        runs: impl IntoIterator<Item = (K, &'r [ProgressRow])>,
    ) -> Judged<'a, 'r, K> {
        self.judge_by(runs, |_| true)
    }

    /// Judges `runs`, the target set from those `decides` picks (the others are crossed
    /// against it and counted in the spans, not in the every-run claim).
    pub fn judge_by<'r, K>(
        &self,
        runs: impl IntoIterator<Item = (K, &'r [ProgressRow])>,
        decides: impl Fn(&K) -> bool,
    ) -> Judged<'a, 'r, K> {
        let runs: Vec<(K, &'r [ProgressRow], bool)> = runs
            .into_iter()
            .map(|(k, p)| {
                let d = decides(&k);
                (k, p, d)
            })
            .collect();
        let deciding: Vec<&[ProgressRow]> = runs.iter().filter(|r| r.2).map(|r| r.1).collect();
        let (target, rule, relative) = match self.accuracy {
            Some(a) => (
                a,
                format!(
                    "target = {} {a:.4}, set by the figure's configuration",
                    self.words.loss
                ),
                false,
            ),
            None => {
                let (target, rule) = comparison_target(self.reference, &deciding);
                (
                    target,
                    rule,
                    target_from_reference(self.reference, &deciding),
                )
            }
        };
        let runs = runs
            .into_iter()
            .map(|(key, progress, decides)| JudgedRun {
                key,
                progress,
                decides,
                crossing: self.crossing_in(progress, target),
                span: loss_span(progress),
                objective: objective_span(progress),
            })
            .collect();
        Judged {
            judge: *self,
            target,
            rule,
            relative,
            runs,
        }
    }
}

impl Judge<'_> {
    /// Where `progress` reaches `target` and holds it: a loss at or below it, or an accuracy
    /// at or above it for a judge [`Judge::at_accuracy`].
    fn crossing_in<'p>(&self, progress: &'p [ProgressRow], target: f64) -> Option<&'p ProgressRow> {
        match self.accuracy {
            None => reached_and_held(progress, target, self.hold),
            Some(a) => (0..progress.len())
                .find(|&i| {
                    progress[i..progress.len().min(i + 1 + self.hold)]
                        .iter()
                        .all(|p| p.accuracy >= a)
                })
                .map(|i| &progress[i]),
        }
    }
}

impl<K> Judged<'_, '_, K> {
    /// The judged run under `key`.
    pub fn run(&self, key: &K) -> Option<&JudgedRun<'_, K>>
    where
        K: PartialEq,
    {
        self.runs.iter().find(|r| &r.key == key)
    }

    /// The evaluation at which the run under `key` crossed the target.
    pub fn crossing(&self, key: &K) -> Option<&ProgressRow>
    where
        K: PartialEq,
    {
        self.run(key).and_then(|r| r.crossing)
    }

    /// When the run under `key` crossed the target.
    pub fn seconds_to_target(&self, key: &K) -> Option<f64>
    where
        K: PartialEq,
    {
        self.crossing(key).map(|p| p.time)
    }

    /// How the judge names the loss and the reference.
    pub fn words(&self) -> ReferenceWords {
        self.judge.words
    }

    /// Where `progress`, a curve not among the judged runs (a prediction of one), crosses the
    /// same target, held as the judge holds it.
    pub fn crossing_of<'p>(&self, progress: &'p [ProgressRow]) -> Option<&'p ProgressRow> {
        self.judge.crossing_in(progress, self.target)
    }
}

/// A crossing at or before this many evaluations after the start tests nothing.
pub const EARLY_EVALUATIONS: usize = 2;
/// Nor does one within this share of the run's evaluated time.
pub const EARLY_SHARE: f64 = 0.05;
/// A comparison whose runs all cross the target at or after this share of their evaluated
/// time is decided by the runs' length, not by how fast they learn: the target sits at the
/// end of the budget, where every run gets there at once.
pub const LATE_SHARE: f64 = 0.9;

/// Where `crossing`, a row of `progress`, lies in its run: the evaluation's number after the
/// start (the evaluation at time 0, if any, is the start), the number of evaluations and the
/// share of the run's last evaluation time.
fn crossing_place(progress: &[ProgressRow], crossing: &ProgressRow) -> Option<(usize, usize, f64)> {
    let i = progress.iter().position(|p| std::ptr::eq(p, crossing))?;
    let start = usize::from(progress.first().is_some_and(|p| p.time == 0.0));
    let last = progress.last().map_or(0.0, |p| p.time);
    let share = if last > 0.0 {
        crossing.time / last
    } else {
        0.0
    };
    Some((i + 1 - start, progress.len() - start, share))
}

fn place_words((nth, evaluations, share): (usize, usize, f64)) -> String {
    format!(
        "crosses the target at evaluation {nth} of {evaluations} ({:.1}% of its run)",
        100.0 * share
    )
}

/// Why `crossing`, a row of `progress`, came too early for a time comparison to mean anything:
/// at or before evaluation [`EARLY_EVALUATIONS`] after the start, or within [`EARLY_SHARE`] of
/// the run's last evaluation time. The runs compared then cannot differ by more than those
/// first evaluations.
pub fn early_crossing(progress: &[ProgressRow], crossing: &ProgressRow) -> Option<String> {
    let place = crossing_place(progress, crossing)?;
    (place.0 <= EARLY_EVALUATIONS || place.2 <= EARLY_SHARE).then(|| place_words(place))
}

/// A run learns when its best held-out loss falls to this share of its first one or below.
pub const LEARNS_SHARE: f64 = 0.8;

/// Why `progress` shows no learning: its best held-out loss stays above [`LEARNS_SHARE`] of
/// its first (a network at chance, a step too small for the budget). Comparing such runs by
/// when they reach a target compares noise. `None` when it learns or evaluated too little to
/// tell.
pub fn not_learning(progress: &[ProgressRow]) -> Option<String> {
    let first = progress.first()?.loss;
    let best = progress
        .iter()
        .map(|p| p.loss)
        .filter(|l| l.is_finite())
        .fold(f64::INFINITY, f64::min);
    (progress.len() > 1 && first.is_finite() && first > 0.0 && best > LEARNS_SHARE * first).then(
        || {
            format!(
                "does not learn (best held-out loss {best:.4} against {first:.4} at the start, above {LEARNS_SHARE}x)"
            )
        },
    )
}

/// Where `crossing` lies when it comes at or after [`LATE_SHARE`] of its run; `None` when
/// earlier.
pub fn late_crossing(progress: &[ProgressRow], crossing: &ProgressRow) -> Option<String> {
    let place = crossing_place(progress, crossing)?;
    (place.2 >= LATE_SHARE).then(|| place_words(place))
}

impl<K: Display + PartialEq> Judged<'_, '_, K> {
    /// Why comparing the runs under `keys` by when they reach the target tests nothing: none of
    /// them learns ([`not_learning`]: the times would compare noise; one run that learns
    /// against one that does not is a finding), one crosses it at once ([`early_crossing`]), or
    /// every one crosses it only in the last tenth of its run ([`late_crossing`]: the budget's
    /// length decides); `None` otherwise.
    pub fn unexercised_by(&self, keys: &[K]) -> Option<String> {
        let compared: Vec<&JudgedRun<'_, K>> =
            self.runs.iter().filter(|r| keys.contains(&r.key)).collect();
        let idle: Vec<String> = compared
            .iter()
            .filter_map(|r| not_learning(r.progress).map(|why| format!("{} {why}", r.key)))
            .collect();
        if !compared.is_empty() && idle.len() == compared.len() {
            return Some(idle.join("; "));
        }
        let early: Vec<String> = compared
            .iter()
            .filter_map(|r| {
                let c = r.crossing?;
                early_crossing(r.progress, c).map(|why| format!("{} {why}", r.key))
            })
            .collect();
        if !early.is_empty() {
            return Some(early.join("; "));
        }
        let late: Vec<String> = compared
            .iter()
            .map_while(|r| {
                let c = r.crossing?;
                late_crossing(r.progress, c).map(|why| format!("{} {why}", r.key))
            })
            .collect();
        (compared.len() > 1 && late.len() == compared.len()).then(|| {
            format!(
                "every compared run reaches the target only in the last {:.0}% of its run, so the \
                 budget's length decides: {}",
                100.0 * (1.0 - LATE_SHARE),
                late.join("; ")
            )
        })
    }

    /// `claim`, a comparison of the runs under `keys` by their time to the target, marked not
    /// exercised when one of them crosses the target at once.
    pub fn gate(&self, claim: Claim, keys: &[K]) -> Claim {
        match self.unexercised_by(keys) {
            Some(why) => claim.not_exercised(why),
            None => claim,
        }
    }
}

impl<K: Display + PartialEq> Judged<'_, '_, K> {
    /// The claim `id`, whole-curve twin of a time claim ([`crate::judge::curve_area`]): `ours`
    /// against `theirs` by their mean remaining way to the reference optimum over the window
    /// both cover on `axis`, read in the time claim's `words` (lower better). By convention its
    /// id is the time claim's with `-area` after the claim's name; its deciding number is
    /// theirs over ours (above 1: ours nearer).
    /// `None` where the target is not optimum-relative (no reference, or the fallback rule:
    /// no way to measure) or a key is not among the runs; not exercised when the two runs are
    /// identical record for record. It fails, whatever the means, when `ours` diverges in the
    /// window or when neither run gets [`AREA_LEARNS_WAY`] of the way there: two curves that
    /// both stay near the whole way have means whose ratio would read "equivalent".
    pub fn area_claim(
        &self,
        id: String,
        words: &PaperComparison,
        axis: Axis,
        ours: &K,
        theirs: &K,
    ) -> Option<Claim> {
        let r = self.judge.reference.filter(|_| self.relative)?;
        let start = r.test_loss + (self.target - r.test_loss) / (1.0 - r.way);
        let (a, b) = (self.run(ours)?, self.run(theirs)?);
        let end = |run: &JudgedRun<'_, K>| run.progress.last().map(|p| axis.at(p));
        let horizon = end(a)?.min(end(b)?);
        let mean = |run: &JudgedRun<'_, K>| {
            mean_remaining_way(run.progress, axis, start, r.test_loss, horizon)
        };
        let (ma, mb) = (mean(a)?, mean(b)?);
        // Means near the whole way for both runs read "equivalent"; a twin decides only where
        // a run learns, and never for a run that diverges in the window.
        let read =
            |run: &JudgedRun<'_, K>| read_window(run.progress, axis, start, r.test_loss, horizon);
        let (ra, rb) = (read(a), read(b));
        let learns = |w: &WindowReading| w.least <= 1.0 - AREA_LEARNS_WAY;
        let (holds, how) = if let Some(x) = ra.diverged_at {
            (
                false,
                format!(
                    "{ours} diverges (a loss that is not finite at {x:.4} {})",
                    axis.unit()
                ),
            )
        } else if !learns(&ra) && !learns(&rb) {
            (
                false,
                format!(
                    "neither gets {:.0}% of the way in the window",
                    100.0 * AREA_LEARNS_WAY
                ),
            )
        } else {
            words.judge(Some(ma), Some(mb))
        };
        let pct = 100.0 * words.tolerance;
        let allowed = match words.allows {
            Allows::Better => format!("below {theirs}'s by more than {pct:.0}%"),
            Allows::BetterOrEquivalent => format!("below {theirs}'s or within {pct:.0}% of it"),
        };
        let claim = Claim::check(
            id,
            format!(
                "over the first {horizon:.4} {unit}, {ours}'s mean remaining way to the \
                 {reference}'s {loss} {:.4} (every target at once) is {allowed}",
                r.test_loss,
                unit = axis.unit(),
                reference = self.judge.words.reference,
                loss = self.judge.words.loss,
            ),
            words.cite(),
            format!("{ours} {ma:.4}, {theirs} {mb:.4}: {how}"),
            holds,
        )
        .with_value(if ma > 0.0 { mb / ma } else { f64::NAN });
        Some(if same_curve(a.progress, b.progress) {
            claim.not_exercised(format!(
                "{ours} and {theirs} are identical record for record"
            ))
        } else {
            claim
        })
    }
}

/// The share of the way to the optimum that one of a whole-curve twin's runs must cover inside
/// the window for the twin to decide: below it both curves stay near the whole way, and their
/// means' ratio reads "equivalent" without either learning. Halfway, not the time claims'
/// [`COMPARISON_WAY`]: the window ends at the earlier run's last evaluation, where a run the
/// time claim sees reaching the target later may not yet have (asap-fig9 at 10 Gbit/s:
/// NOTIFY-ACK's mean remaining way 0.35 against BSP's 0.60, neither at 90% in the window).
pub const AREA_LEARNS_WAY: f64 = 0.5;

/// Shares of the way from the initial held-out loss to the reference optimum's at which
/// `ways.csv` reports every run's crossing: early, the claims' own target at the default way
/// (a figure whose reference sets another way, [`Reference::way`], reports at that one), and
/// the flat tail.
pub const WAYS: [f64; 3] = [0.5, COMPARISON_WAY, 0.99];

/// One run's crossing of one optimum-relative target (`ways.csv`): the verdicts decide at the
/// [`COMPARISON_WAY`] target; the other rows show whether the order holds early and late.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WayRow {
    /// Figure part (panel, driver).
    pub part: String,
    /// The run.
    pub run: String,
    /// Share of the way to the reference optimum.
    pub way: f64,
    /// The held-out loss at that share.
    pub target_loss: f64,
    /// When the run first reached it and held it, seconds (empty: never).
    pub seconds: String,
    /// At which of its iterations.
    pub iteration: String,
}

impl<K: Display> Judged<'_, '_, K> {
    /// Every run's crossing of the targets at [`WAYS`] of the way to the reference optimum
    /// (none when the target is not optimum-relative: no reference, or the fallback rule).
    pub fn way_rows(&self, part: &str) -> Vec<WayRow> {
        let Some(r) = self.judge.reference.filter(|_| self.relative) else {
            return Vec::new();
        };
        // The comparison target sits the reference's way from the start.
        let start = r.test_loss + (self.target - r.test_loss) / (1.0 - r.way);
        let mut rows = Vec::new();
        for way in [WAYS[0], r.way, WAYS[2]] {
            let target = r.test_loss + (1.0 - way) * (start - r.test_loss);
            for run in &self.runs {
                let at = reached_and_held(run.progress, target, self.judge.hold);
                rows.push(WayRow {
                    part: part.to_string(),
                    run: run.key.to_string(),
                    way,
                    target_loss: target,
                    seconds: at.map_or_else(String::new, |p| p.time.to_string()),
                    iteration: at.map_or_else(String::new, |p| p.iteration.to_string()),
                });
            }
        }
        rows
    }

    /// `(name, initial held-out loss, final held-out loss)` of every run.
    pub fn spans(&self) -> Vec<(String, f64, f64)> {
        self.runs
            .iter()
            .map(|r| (r.key.to_string(), r.span.0, r.span.1))
            .collect()
    }

    /// `part`'s row of `reference.csv` (none without a reference).
    pub fn reference_rows(&self, part: &str) -> Vec<ReferenceRow> {
        reference_rows(part, self.judge.reference, &self.spans())
    }

    /// The claim that the best run got near the reference: on the training objective against
    /// `F*` where every run carries its objective and the reference is an optimum of it
    /// ([`near_optimum_on_objective`]), else on the held-out loss
    /// ([`crate::judge::reference::near_reference_claim`]: MF, LDA's sampler level).
    ///
    /// A run without its objective among runs with one (a driver that did not compute it) puts
    /// the claim on the held-out reading, and the claim says so.
    pub fn near_optimum_claim(&self, id: String) -> Claim {
        let optimum = self.judge.words == ReferenceWords::OPTIMUM;
        if let (Some(r), true) = (self.judge.reference, optimum) {
            if let Some(spans) = self.objective_spans() {
                return near_optimum_on_objective(id, r, &spans);
            }
        }
        let claim = near_reference_claim(id, self.judge.reference, &self.spans(), self.judge.words);
        let missing: Vec<String> = self
            .runs
            .iter()
            .filter(|r| r.objective.is_none())
            .map(|r| r.key.to_string())
            .collect();
        if optimum
            && self.judge.reference.is_some()
            && !missing.is_empty()
            && missing.len() < self.runs.len()
        {
            let mut claim = claim;
            claim.measured_value.push_str(&format!(
                " [held-out reading: no training objective for {}]",
                missing.join(", ")
            ));
            claim
        } else {
            claim
        }
    }

    /// Every run's held-out and training-objective spans, when every run has the latter.
    pub fn objective_spans(&self) -> Option<Vec<ObjectiveSpan>> {
        if self.runs.is_empty() {
            return None;
        }
        self.runs
            .iter()
            .map(|r| {
                Some(ObjectiveSpan {
                    name: r.key.to_string(),
                    held_out: r.span,
                    objective: r.objective?,
                })
            })
            .collect()
    }

    /// The claim that every run that set the target reaches it
    /// ([`crate::judge::reference::every_run_reaches_claim`]), not exercised when one of them
    /// crosses it at once ([`early_crossing`]): a target reached by the first evaluations says
    /// nothing about the runs.
    pub fn every_run_reaches_claim(&self, id: String) -> Claim {
        let reached: Vec<(String, Option<f64>)> = self
            .runs
            .iter()
            .filter(|r| r.decides)
            .map(|r| (r.key.to_string(), r.crossing.map(|p| p.time)))
            .collect();
        let claim = every_run_reaches_claim(id, self.relative, self.target, &reached);
        let early: Vec<String> = self
            .runs
            .iter()
            .filter(|r| r.decides)
            .filter_map(|r| {
                early_crossing(r.progress, r.crossing?).map(|why| format!("{} {why}", r.key))
            })
            .collect();
        if early.is_empty() {
            claim
        } else {
            claim.not_exercised(early.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::reference::tests::{curve, reference};
    use crate::judge::reference::{loss_spans, near_optimum_claim};

    /// The judge's sequence gives what the rules give one by one.
    #[test]
    fn the_judge_sequences_the_rules() {
        let r = reference(0.4);
        let (a, b, c) = (
            curve(&[1.0, 0.9, 0.45]),
            curve(&[1.0, 0.7, 0.6]),
            curve(&[1.0, 2.0, 3.0]),
        );
        let runs = [("a", &a[..]), ("b", &b[..]), ("c", &c[..])];
        for reference in [Some(&r), None] {
            let judged = Judge::new(reference).judge_by(runs, |k| *k != "c");
            let (target, rule) = comparison_target(reference, &[&a[..], &b[..]]);
            assert_eq!(judged.target.to_bits(), target.to_bits());
            assert_eq!(judged.rule, rule);
            assert_eq!(judged.spans(), loss_spans(runs));
            assert_eq!(
                judged.near_optimum_claim("x".into()).measured_value,
                near_optimum_claim("x".into(), reference, &loss_spans(runs)).measured_value
            );
            let every = judged.every_run_reaches_claim("y".into());
            if reference.is_some() {
                // c set no target, so it is not asked about
                assert!(
                    every.measured_value.contains("1 of 2"),
                    "{}",
                    every.measured_value
                );
            }
            assert_eq!(judged.seconds_to_target(&"c"), None);
        }
        let judged = Judge::new(Some(&r)).judge(runs);
        assert_eq!(judged.seconds_to_target(&"a"), Some(2.0));
        assert_eq!(judged.reference_rows("p").len(), 1);
        // a crosses at evaluation 2 of 2: the every-run claim and a comparison with it test
        // nothing.
        assert_eq!(
            judged.every_run_reaches_claim("z".into()).verdict,
            bench_core::claims::Verdict::NotExercised
        );
        let late = curve(&[
            1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.6, 0.5, 0.45, 0.4, 0.35,
        ]);
        let slow = curve(&[
            1.0, 0.99, 0.98, 0.97, 0.96, 0.95, 0.94, 0.93, 0.92, 0.91, 0.9, 0.89,
        ]);
        let pair = Judge::new(Some(&r)).judge([("late", &late[..]), ("slow", &slow[..])]);
        assert!(pair.unexercised_by(&["late", "slow"]).is_none());
        let claim = Claim::check("c", "s", "p", "m", true);
        assert_eq!(pair.gate(claim.clone(), &["late", "slow"]), claim);
        let gated = judged.gate(claim, &["a", "b"]);
        assert_eq!(gated.verdict, bench_core::claims::Verdict::NotExercised);
        assert!(
            gated
                .measured_value
                .contains("a crosses the target at evaluation 2 of 2 (100.0% of its run)"),
            "{}",
            gated.measured_value
        );
        // Both cross only at the end of their runs (evaluations 11 of 11): the budget's length
        // decides, so the comparison is not exercised; one crossing mid-run decides it.
        let tail = |last: f64| {
            let mut v: Vec<f64> = (0..11).map(|i| 1.0 - 0.01 * f64::from(i)).collect();
            v.push(last);
            curve(&v)
        };
        let (end_a, end_b) = (tail(0.45), tail(0.44));
        let ends = Judge::new(Some(&r)).judge([("x", &end_a[..]), ("y", &end_b[..])]);
        let why = ends
            .unexercised_by(&["x", "y"])
            .expect("decided by the budget");
        assert!(
            why.contains("last 10% of its run")
                && why.contains("y crosses the target at evaluation 11 of 11"),
            "{why}"
        );
        let mixed = Judge::new(Some(&r)).judge([("late", &late[..]), ("x", &end_a[..])]);
        assert!(mixed.unexercised_by(&["late", "x"]).is_none());
        // Runs at chance (hop-fig12-cnn's 2.303 to 2.281) yield no comparison; one that learns
        // against one that does not is compared (the learner is better).
        let chance = curve(&[2.303, 2.30, 2.29, 2.281]);
        let chance2 = curve(&[2.303, 2.29, 2.30, 2.29]);
        let learner = curve(&[2.303, 2.0, 1.8, 1.5, 1.0, 0.5]);
        let flat = Judge::new(None).judge([("c", &chance[..]), ("d", &chance2[..])]);
        let why = flat.unexercised_by(&["c", "d"]).expect("neither learns");
        assert!(
            why.starts_with("c does not learn (best held-out loss 2.2810 against 2.3030"),
            "{why}"
        );
        assert!(not_learning(&learner).is_none());
        let one = Judge::new(None).judge([("c", &chance[..]), ("l", &learner[..])]);
        assert!(one.unexercised_by(&["c", "l"]).is_none());
        let d = curve(&[1.0, 0.2, 0.9, 0.2]);
        let held = Judge::new(None).holding(1).judge([("d", &d[..])]);
        assert_eq!(held.seconds_to_target(&"d"), Some(3.0));
        assert_eq!(held.crossing_of(&d).map(|p| p.time), Some(3.0));
    }

    /// ways.csv: every run at 50%, the claims' 90% and 99% of the way, with the targets the
    /// reference gives, and nothing where the target is not optimum-relative.
    #[test]
    fn way_rows_cross_each_share_of_the_way() {
        let r = reference(0.0);
        let a = curve(&[1.0, 0.6, 0.4, 0.05, 0.005]);
        let b = curve(&[1.0, 0.9, 0.8, 0.7, 0.08]);
        let judged = Judge::new(Some(&r)).judge([("a", &a[..]), ("b", &b[..])]);
        let rows = judged.way_rows("p");
        assert_eq!(rows.len(), 6);
        let at = |run: &str, way: f64| {
            let row = rows.iter().find(|x| x.run == run && x.way == way).unwrap();
            (row.target_loss, row.seconds.clone())
        };
        let (t50, a50) = at("a", 0.5);
        assert!((t50 - 0.5).abs() < 1e-12, "{t50}");
        assert_eq!(a50, "2");
        assert_eq!(at("b", 0.5).1, "4");
        let (t90, a90) = at("a", COMPARISON_WAY);
        assert!((t90 - judged.target).abs() < 1e-12);
        assert_eq!(a90, "3");
        assert_eq!(at("b", COMPARISON_WAY).1, "4");
        assert_eq!(at("a", 0.99).1, "4");
        assert_eq!(at("b", 0.99).1, "", "b never gets 99% of the way");
        assert!(Judge::new(None)
            .judge([("a", &a[..])])
            .way_rows("p")
            .is_empty());
    }

    /// The whole-curve twin of a time claim: hand-computed areas, the paper's words deciding,
    /// identical runs not exercised, and no claim without an optimum-relative target.
    #[test]
    fn area_claims_read_the_whole_curve() {
        use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};
        use crate::judge::curve_area::Axis;
        use bench_core::claims::Verdict;
        const FASTER: PaperComparison = PaperComparison {
            quote: "a converges faster",
            source: "paper.txt:1",
            allows: Allows::Better,
            tolerance: DEFAULT_TOLERANCE,
        };
        let r = reference(0.0);
        let a = curve(&[1.0, 0.6, 0.4, 0.05, 0.005]);
        let b = curve(&[1.0, 0.9, 0.8, 0.7, 0.08]);
        let c = b.clone();
        let judged = Judge::new(Some(&r)).judge([("a", &a[..]), ("b", &b[..]), ("c", &c[..])]);
        // a: (0.8 + 0.5 + 0.225 + 0.0275) / 4; b: (0.95 + 0.85 + 0.75 + 0.39) / 4.
        let (ma, mb) = (1.5525 / 4.0, 2.94 / 4.0);
        let ab = judged
            .area_claim(
                "f/a-before-b-area".into(),
                &FASTER,
                Axis::Seconds,
                &"a",
                &"b",
            )
            .unwrap();
        assert_eq!(ab.claim_id, "f/a-before-b-area");
        assert_eq!(ab.verdict, Verdict::Pass, "{}", ab.measured_value);
        assert!((ab.value.unwrap() - mb / ma).abs() < 1e-9, "{:?}", ab.value);
        assert!(
            ab.measured_value.starts_with("a 0.3881, b 0.7350: better"),
            "{}",
            ab.measured_value
        );
        let ba = judged
            .area_claim(
                "f/b-before-a-area".into(),
                &FASTER,
                Axis::Iterations,
                &"b",
                &"a",
            )
            .unwrap();
        assert_eq!(ba.verdict, Verdict::Fail, "{}", ba.measured_value);
        let same = judged
            .area_claim(
                "f/b-before-c-area".into(),
                &FASTER,
                Axis::Seconds,
                &"b",
                &"c",
            )
            .unwrap();
        assert_eq!(same.verdict, Verdict::NotExercised);
        // "Faster or comparable" between runs that do not learn, or against a diverging
        // ours, fails although the means are within the tolerance of each other.
        const COMPARABLE: PaperComparison = PaperComparison {
            allows: Allows::BetterOrEquivalent,
            ..FASTER
        };
        let flat = curve(&[1.0, 0.99, 0.98, 0.97, 0.97]);
        let flatter = curve(&[1.0, 1.0, 0.99, 0.99, 0.98]);
        let nan = curve(&[1.0, 0.6, f64::NAN, 0.05, 0.005]);
        let judged = Judge::new(Some(&r)).judge([
            ("flat", &flat[..]),
            ("flatter", &flatter[..]),
            ("nan", &nan[..]),
            ("b", &b[..]),
        ]);
        let claim = |ours: &'static str, theirs: &'static str| {
            judged
                .area_claim(
                    format!("f/{ours}-{theirs}-area"),
                    &COMPARABLE,
                    Axis::Seconds,
                    &ours,
                    &theirs,
                )
                .unwrap()
        };
        let neither = claim("flatter", "flat");
        assert_eq!(neither.verdict, Verdict::Fail, "{}", neither.measured_value);
        assert!(
            neither
                .measured_value
                .contains("neither gets 50% of the way"),
            "{}",
            neither.measured_value
        );
        let diverged = claim("nan", "flat");
        assert_eq!(
            diverged.verdict,
            Verdict::Fail,
            "{}",
            diverged.measured_value
        );
        assert!(
            diverged.measured_value.contains("nan diverges"),
            "{}",
            diverged.measured_value
        );
        // The same words pass where ours learns and theirs is comparable or worse.
        assert_eq!(claim("b", "flat").verdict, Verdict::Pass);
        assert!(judged
            .area_claim(
                "f/a-before-x-area".into(),
                &FASTER,
                Axis::Seconds,
                &"a",
                &"x"
            )
            .is_none());
        assert!(Judge::new(None)
            .judge([("a", &a[..]), ("b", &b[..])])
            .area_claim(
                "f/a-before-b-area".into(),
                &FASTER,
                Axis::Seconds,
                &"a",
                &"b"
            )
            .is_none());
    }
}
