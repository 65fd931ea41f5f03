//! Reference optima and what learning figures read against them: the [`Reference`] of a figure's
//! objective, its `reference.csv` rows, the optimum-relative comparison target, and the claim that
//! the best run got near it (targets relative to a reference optimum, never to what the compared
//! runs happened to reach).

use bench_core::claims::Claim;
use bench_core::metrics::ProgressRow;

/// The reference a learning figure's curves are read against: the exact optimum of an SVM
/// figure's objective on its data, MF's ALS stationary point, or LDA's settled sampler level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reference {
    /// `F(w*)` on the training rows.
    pub objective: f64,
    /// The held-out loss the curves plot (test loss plus the regulariser) at `w*`.
    pub test_loss: f64,
    /// Held-out accuracy at `w*`.
    pub test_accuracy: f64,
    /// Relative duality gap (hinge) or gradient norm (log) at exit.
    pub certificate: f64,
    /// Passes the solver took.
    pub passes: usize,
    /// How far `objective` may sit above the true minimum (the solver's gap bound; NaN where
    /// none is known: MF's stationary point, LDA's level, CGLS).
    pub objective_gap: f64,
    /// The share of the way from the initial model to this optimum that a run must cover to
    /// count as near it, and where the time comparisons' target sits ([`DEFAULT_WAY`] unless a
    /// figure's configuration says otherwise, with its reason: `near_optimum_way`).
    pub way: f64,
}

/// A run counts as converged when `loss - loss* <= NEAR_OPTIMUM (loss_0 - loss*)`: it covered
/// 90% of the way from the initial model's held-out loss `loss_0` to the reference optimum's.
/// The default of [`Reference::way`] (`1 - NEAR_OPTIMUM`).
pub const NEAR_OPTIMUM: f64 = 0.10;

/// The default share of the way to the optimum ([`Reference::way`]): 90%.
pub const DEFAULT_WAY: f64 = 1.0 - NEAR_OPTIMUM;

/// One row of a figure's `reference.csv`: the reference optimum of one part (a dataset, a
/// driver) and the held-out loss a run must reach to count as near it, which the figures draw
/// as lines beside the curves.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ReferenceRow {
    /// The part of the figure (dataset or panel) the optimum belongs to.
    pub part: String,
    /// `F(w*)` on the training rows.
    pub objective: f64,
    /// Held-out loss at `w*` (what the curves plot).
    pub test_loss: f64,
    /// Held-out accuracy at `w*`.
    pub test_accuracy: f64,
    /// Relative duality gap (hinge) or gradient norm (log) at exit; for MF the gradient norm
    /// relative to the start, for LDA the drift of the sampler's last quarter.
    pub certificate: f64,
    /// Passes the solver took (ALS sweeps for MF, sampler clocks for LDA).
    pub passes: usize,
    /// Held-out loss of the initial model.
    pub initial_loss: f64,
    /// `test_loss + (1 - way) (initial_loss - test_loss)`: the near-optimum line.
    pub target_loss: f64,
}

impl Reference {
    /// MF's ALS stationary point as a reference (no accuracy: MF has none).
    pub fn of_mf(o: &bench_core::workload::MfOptimum) -> Self {
        Reference {
            objective: o.objective,
            test_loss: o.test_loss,
            test_accuracy: f64::NAN,
            certificate: o.certificate,
            passes: o.sweeps,
            objective_gap: f64::NAN,
            way: DEFAULT_WAY,
        }
    }

    /// This optimum as `part`'s row of `reference.csv`, for runs starting at `initial_loss`.
    pub fn row(&self, part: &str, initial_loss: f64) -> ReferenceRow {
        ReferenceRow {
            part: part.to_string(),
            objective: self.objective,
            test_loss: self.test_loss,
            test_accuracy: self.test_accuracy,
            certificate: self.certificate,
            passes: self.passes,
            initial_loss,
            target_loss: self.test_loss + (1.0 - self.way) * (initial_loss - self.test_loss),
        }
    }

    /// A manifest note.
    pub fn note(&self, what: &str) -> String {
        format!(
            "{what}: reference optimum of the same objective on the same data (bench_core::workload::linear_optimum): F* = {:.5} on the training rows, held-out loss {:.5} and accuracy {:.4} at w* (certificate {:.1e} after {} passes); a run is near the optimum when its training objective has covered {:.0}% of the way from the initial model's to F* (judge/near_objective.rs; F* bounds it from below), its held-out loss shown beside; the time comparisons' target is {:.0}% of the way on the held-out loss the curves plot",
            self.objective,
            self.test_loss,
            self.test_accuracy,
            self.certificate,
            self.passes,
            self.way * 100.0,
            self.way * 100.0,
        )
    }
}

/// A run's first and last held-out loss (NaN when it evaluated nothing), for
/// [`near_optimum_claim`].
pub fn loss_span(progress: &[ProgressRow]) -> (f64, f64) {
    let loss = |p: Option<&ProgressRow>| p.map_or(f64::NAN, |p| p.loss);
    (loss(progress.first()), loss(progress.last()))
}

/// Where on the way from the initial held-out loss to the reference optimum's the time
/// comparisons' target sits by default ([`Reference::way`] sets it per figure): at the
/// near-optimum line ([`NEAR_OPTIMUM`]), the line the figures
/// draw. Relative to the optimum, not to what the compared runs happened to reach; a run that
/// never gets near the optimum never reaches it, so a comparison is made where the sync modes'
/// consistency matters, not on the first steps every mode takes alike. (It was half way while
/// the curves stopped short of the optimum; with the budgets and step sizes tuned to converge,
/// half way is crossed at the first evaluation of most runs.)
pub const COMPARISON_WAY: f64 = 1.0 - NEAR_OPTIMUM;

/// For the fallback target (no reference optimum: a CNN, real data): the share of the way
/// from the runs' initial held-out loss to the best (lowest) held-out loss any compared run
/// reaches, where the target sits. Half: a CNN half's curves sit near chance for much of their
/// budget and are still falling when it ends, so a target near the best loss (or at the
/// largest final loss of the runs) is crossed only in the last tenth of every run, where the
/// budget's length decides the comparison; half the way is crossed in the middle of the
/// descent (seed 1 of the quick Hop CNN halves: at 70-83% of the runs, where 90% of the way
/// is crossed at 86-100% or never).
pub const NO_REFERENCE_WAY: f64 = 0.5;

/// For the fallback target: the best loss must lie below the start by at least this share of
/// the start, or no run learned and there is no target (NaN: the comparisons are then not
/// made).
pub const MIN_LEARNING: f64 = 0.05;

/// The held-out loss a figure's time-to-target comparisons use, and how it was chosen: with a
/// reference optimum, [`Reference::way`] of the way from the runs' initial loss to the
/// optimum's; without one (real data, a CNN), [`NO_REFERENCE_WAY`] of the way from the runs'
/// initial loss to the best loss any of them reaches ([`MIN_LEARNING`]: NaN when none learned).
pub fn comparison_target(reference: Option<&Reference>, runs: &[&[ProgressRow]]) -> (f64, String) {
    let start = first_start(runs);
    match (reference, start) {
        (Some(r), Some(start)) if start > r.test_loss => (
            r.test_loss + (1.0 - r.way) * (start - r.test_loss),
            format!(
                "target = {:.0}% of the way from the initial held-out loss {start:.4} to the reference optimum's {:.4}",
                r.way * 100.0,
                r.test_loss
            ),
        ),
        _ => {
            let (target, best) = best_loss_target(runs);
            (
                target,
                format!(
                    "target = {:.0}% of the way from the initial held-out loss {} to the best any compared run reaches, {best:.4} (no reference optimum: real data, a CNN, a reference switched off, or an optimum no better than the start; no target when the best is less than {:.0}% below the start)",
                    NO_REFERENCE_WAY * 100.0,
                    start.map_or("NaN".into(), |s| format!("{s:.4}")),
                    MIN_LEARNING * 100.0
                ),
            )
        }
    }
}

/// The fallback target of [`comparison_target`] and the best loss it is read from: NaN when
/// no run learned.
fn best_loss_target(runs: &[&[ProgressRow]]) -> (f64, f64) {
    let best = runs
        .iter()
        .flat_map(|r| r.iter().map(|p| p.loss))
        .filter(|l| l.is_finite())
        .fold(f64::NAN, f64::min);
    let Some(start) = first_start(runs) else {
        return (f64::NAN, best);
    };
    let drop = start - best;
    if drop > 0.0 && drop >= MIN_LEARNING * start.abs() {
        (start - NO_REFERENCE_WAY * drop, best)
    } else {
        (f64::NAN, best)
    }
}

/// The first finite initial held-out loss among `runs`.
fn first_start(runs: &[&[ProgressRow]]) -> Option<f64> {
    runs.iter()
        .filter_map(|r| r.first().map(|p| p.loss))
        .find(|l| l.is_finite())
}

/// Whether [`comparison_target`] sets its target relative to the reference optimum for these
/// `runs` (false: it falls back to [`NO_REFERENCE_WAY`] of the way to the best loss any run
/// reaches).
pub fn target_from_reference(reference: Option<&Reference>, runs: &[&[ProgressRow]]) -> bool {
    matches!((reference, first_start(runs)), (Some(r), Some(start)) if start > r.test_loss)
}

/// The evaluation at which `progress` reaches `target` and holds it for `hold` more
/// evaluations (or all that remain).
pub fn reached_and_held(
    progress: &[ProgressRow],
    target: f64,
    hold: usize,
) -> Option<&ProgressRow> {
    (0..progress.len())
        .find(|&i| {
            progress[i..progress.len().min(i + 1 + hold)]
                .iter()
                .all(|p| p.loss <= target)
        })
        .map(|i| &progress[i])
}

/// `part`'s row of `reference.csv` (none without a reference), its initial loss the first
/// finite start among `runs` (`(name, initial held-out loss, final held-out loss)`).
pub fn reference_rows(
    part: &str,
    reference: Option<&Reference>,
    runs: &[(String, f64, f64)],
) -> Vec<ReferenceRow> {
    let start = runs.iter().map(|r| r.1).find(|l| l.is_finite());
    match (reference, start) {
        (Some(r), Some(start)) => vec![r.row(part, start)],
        _ => Vec::new(),
    }
}

/// `(name, initial held-out loss, final held-out loss)` of each run (`(name, its progress)`),
/// as [`near_optimum_claim`] and [`reference_rows`] take them.
pub fn loss_spans<'a, N: ToString>(
    runs: impl IntoIterator<Item = (N, &'a [ProgressRow])>,
) -> Vec<(String, f64, f64)> {
    runs.into_iter()
        .map(|(name, progress)| {
            let (first, last) = loss_span(progress);
            (name.to_string(), first, last)
        })
        .collect()
}

/// How a near-reference claim names the loss its curves plot and the reference they are read
/// against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReferenceWords {
    /// The loss, e.g. "held-out loss".
    pub loss: &'static str,
    /// The reference, e.g. "reference optimum".
    pub reference: &'static str,
    /// Its short name in measured values, e.g. "optimum".
    pub short: &'static str,
}

impl ReferenceWords {
    /// A convex objective's exact optimum, read on held-out rows (the SVM figures, MF).
    pub const OPTIMUM: ReferenceWords = ReferenceWords {
        loss: "held-out loss",
        reference: "reference optimum",
        short: "optimum",
    };

    /// A fixed accuracy on held-out images or rows ([`crate::judge::verdict::Judge::at_accuracy`]).
    pub const HELD_OUT_ACCURACY: ReferenceWords = ReferenceWords {
        loss: "held-out accuracy",
        reference: "accuracy target",
        short: "target",
    };

    /// A fixed accuracy on the training images (ASAP's Fig 8 reads its training accuracy).
    pub const TRAINING_ACCURACY: ReferenceWords = ReferenceWords {
        loss: "training accuracy",
        reference: "accuracy target",
        short: "target",
    };
}

/// The claim that the best of a figure's runs (`(name, initial held-out loss, final held-out
/// loss)`) covered at least [`Reference::way`] of the way from its initial loss to the
/// reference optimum's: without it a figure's comparisons could be made on curves that never
/// left their start. It fails when the optimum is no better than the initial model on held-out
/// rows (nothing to learn), and is not applicable with no reference (real data).
pub fn near_optimum_claim(
    id: String,
    reference: Option<&Reference>,
    runs: &[(String, f64, f64)],
) -> Claim {
    near_reference_claim(id, reference, runs, ReferenceWords::OPTIMUM)
}

/// As [`near_optimum_claim`], naming the loss and the reference with `words` (a reference
/// that is not an optimum, e.g. a sampler's settled level, says so).
pub fn near_reference_claim(
    id: String,
    reference: Option<&Reference>,
    runs: &[(String, f64, f64)],
    words: ReferenceWords,
) -> Claim {
    let ReferenceWords {
        loss: what,
        reference: named,
        short,
    } = words;
    let statement = format!(
        "the best run covers {:.0}% of the way from the initial {what} to the {named}'s",
        reference.map_or(DEFAULT_WAY, |r| r.way) * 100.0
    );
    let paper = "the compared runs train to convergence";
    let Some(r) = reference else {
        return Claim::not_applicable(
            id,
            statement,
            paper,
            format!("no {named}: not computed for this configuration (real data at this size, or switched off), and none exists for a CNN"),
        );
    };
    let best = runs
        .iter()
        .filter(|x| x.1.is_finite() && x.2.is_finite())
        .min_by(|a, b| a.2.total_cmp(&b.2));
    let Some((name, start, loss)) = best else {
        return Claim::check(id, statement, paper, "no run reported a loss", false);
    };
    let room = start - r.test_loss;
    if room <= 0.0 {
        return Claim::check(
            id,
            statement,
            paper,
            format!(
                "nothing to converge to: the {short}'s {what} {:.4} is no better than the initial {start:.4} (the twin is not learnable at this size)",
                r.test_loss
            ),
            false,
        );
    }
    let covered = (start - loss) / room;
    Claim::check(
        id,
        statement,
        paper,
        format!(
            "best {name}: {what} {start:.4} -> {loss:.4}, {short} {:.4}: {:.0}% of the way",
            r.test_loss,
            covered * 100.0
        ),
        covered >= r.way,
    )
    .with_value(covered)
}

/// The claim that every compared run reaches the comparison `target`
/// ([`comparison_target`]) within its budget: the papers' figures show each compared mode
/// converging (some later than others), so a mode that never gets near the optimum is a
/// different picture even when the time comparisons among the others pass. `runs` are
/// `(name, time to the target)`; `relative`: the target was set relative to the reference
/// optimum ([`target_from_reference`]), else it is [`NO_REFERENCE_WAY`] of the way to the best
/// loss any run reached. Not applicable when there is no target (no run learned).
pub fn every_run_reaches_claim(
    id: String,
    relative: bool,
    target: f64,
    runs: &[(String, Option<f64>)],
) -> Claim {
    let statement = if relative {
        format!("every compared run reaches the near-optimum loss {target:.4} within its budget")
    } else {
        format!(
            "every compared run reaches the loss {target:.4}, {:.0}% of the way to the best any of them reaches, within its budget",
            NO_REFERENCE_WAY * 100.0
        )
    };
    let paper = "every compared mode converges in the paper's figure";
    let missed: Vec<&str> = runs
        .iter()
        .filter(|(_, t)| t.is_none())
        .map(|(name, _)| name.as_str())
        .collect();
    if !target.is_finite() {
        return Claim::not_applicable(
            id,
            statement,
            paper,
            format!(
                "no target: no compared run's loss fell {:.0}% below the start",
                MIN_LEARNING * 100.0
            ),
        );
    }
    let reached = runs.len() - missed.len();
    let slowest = runs
        .iter()
        .filter_map(|(name, t)| t.map(|t| (name, t)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let measured = match (missed.is_empty(), slowest) {
        (true, Some((name, t))) => format!(
            "{reached} of {} reach it; the last, {name}, at {}",
            runs.len(),
            crate::judge::format::show(Some(t))
        ),
        _ => format!(
            "{reached} of {} reach it; never: {}",
            runs.len(),
            missed.join(", ")
        ),
    };
    Claim::check(
        id,
        statement,
        paper,
        measured,
        !runs.is_empty() && missed.is_empty(),
    )
    .with_value(reached as f64 / runs.len().max(1) as f64)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use bench_core::claims::Verdict;

    /// A held-out curve evaluated at times and iterations 0, 1, 2, ... (shared with the
    /// judge's tests).
    pub(crate) fn curve(losses: &[f64]) -> Vec<ProgressRow> {
        losses
            .iter()
            .enumerate()
            .map(|(i, &loss)| ProgressRow {
                time: i as f64,
                iteration: i as f64,
                loss,
                accuracy: f64::NAN,
                train_objective: None,
            })
            .collect()
    }

    /// A reference optimum whose held-out loss is `test_loss`, at the default way (shared
    /// with the judge's tests).
    pub(crate) fn reference(test_loss: f64) -> Reference {
        Reference {
            objective: 0.1,
            test_loss,
            test_accuracy: 0.9,
            certificate: 1e-5,
            passes: 10,
            objective_gap: f64::NAN,
            way: DEFAULT_WAY,
        }
    }

    #[test]
    fn a_dip_under_the_target_is_not_reaching_it() {
        let p: Vec<ProgressRow> = [0.9, 0.4, 0.8, 0.45, 0.4, 0.42, 0.3]
            .iter()
            .enumerate()
            .map(|(i, &loss)| ProgressRow {
                time: i as f64,
                iteration: i as f64,
                loss,
                accuracy: f64::NAN,
                train_objective: None,
            })
            .collect();
        assert_eq!(reached_and_held(&p, 0.5, 0).map(|p| p.time), Some(1.0));
        assert_eq!(reached_and_held(&p, 0.5, 2).map(|p| p.time), Some(3.0));
        // near the end, what remains must stay under
        assert_eq!(reached_and_held(&p, 0.35, 5).map(|p| p.time), Some(6.0));
        assert_eq!(reached_and_held(&p, 0.2, 1), None);
    }

    /// The comparison target sits on the near-optimum line, whatever the runs reached; without
    /// an optimum (or with one no better than the start) it falls back to half the way to the
    /// best loss reached, and says so.
    #[test]
    fn the_comparison_target_is_relative_to_the_optimum() {
        let (a, b) = (curve(&[1.0, 0.9, 0.8]), curve(&[1.0, 0.7]));
        let runs = [&a[..], &b[..]];
        let (t, how) = comparison_target(Some(&reference(0.4)), &runs);
        // 0.4 + 0.1 x (1.0 - 0.4): the line `reference_rows` draws
        assert!((t - 0.46).abs() < 1e-12, "{t}");
        assert!(how.contains("90% of the way"), "{how}");
        let (t, how) = comparison_target(None, &runs);
        // Half the way from 1.0 to the best loss reached, 0.7.
        assert!((t - 0.85).abs() < 1e-12, "{t}");
        assert!(how.contains("50% of the way"), "{how}");
        let (t, _) = comparison_target(Some(&reference(1.2)), &runs);
        assert!((t - 0.85).abs() < 1e-12, "{t}");
        // A run that diverged past its start does not move it.
        let diverged = curve(&[1.0, 0.9, 3.5, f64::NAN]);
        let (t, _) = comparison_target(None, &[&a[..], &b[..], &diverged[..]]);
        assert!((t - 0.85).abs() < 1e-12, "{t}");
        // A run that sat near its start (a CNN at chance) beside one that learned: half the
        // way to the learner's best, 2.30 - (2.30 - 0.47) / 2.
        let (stuck, learner) = (curve(&[2.30, 2.28, 2.29]), curve(&[2.34, 1.1, 0.47]));
        let (t, _) = comparison_target(None, &[&stuck[..], &learner[..]]);
        assert!((t - 1.385).abs() < 1e-12, "{t}");
        // When no run learned there is no target.
        let other = curve(&[2.31, 2.27]);
        let (t, _) = comparison_target(None, &[&stuck[..], &other[..]]);
        assert!(t.is_nan(), "{t}");
        let rows = reference_rows("p", Some(&reference(0.4)), &[("a".into(), 1.0, 0.8)]);
        assert_eq!(rows.len(), 1);
        assert!((rows[0].target_loss - 0.46).abs() < 1e-12);
        assert!(reference_rows("p", None, &[("a".into(), 1.0, 0.8)]).is_empty());
    }

    #[test]
    fn every_run_must_reach_the_target_with_or_without_a_reference() {
        let all = [("a".to_string(), Some(1.0)), ("b".to_string(), Some(3.0))];
        let c = every_run_reaches_claim("x".into(), true, 0.3, &all);
        assert_eq!(c.verdict, Verdict::Pass);
        assert!(
            c.measured_value.contains("the last, b,"),
            "{}",
            c.measured_value
        );
        let one_missed = [("a".to_string(), Some(1.0)), ("b".to_string(), None)];
        let c = every_run_reaches_claim("x".into(), true, 0.3, &one_missed);
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(
            c.measured_value.contains("never: b"),
            "{}",
            c.measured_value
        );
        // Without a reference the target is not reached by construction: it is checked.
        let c = every_run_reaches_claim("x".into(), false, 0.3, &all);
        assert_eq!(c.verdict, Verdict::Pass);
        assert!(c.statement.contains("50% of the way"), "{}", c.statement);
        let c = every_run_reaches_claim("x".into(), false, 0.3, &one_missed);
        assert_eq!(c.verdict, Verdict::Fail);
        let c = every_run_reaches_claim("x".into(), false, f64::NAN, &all);
        assert_eq!(c.verdict, Verdict::NotApplicable);
        let c = every_run_reaches_claim("x".into(), true, 0.3, &[]);
        assert_eq!(c.verdict, Verdict::Fail);
        // The target is relative only when the optimum is below the runs' start.
        let r = reference(0.2);
        let runs = [curve(&[0.9, 0.3])];
        let slices: Vec<&[ProgressRow]> = runs.iter().map(|c| &c[..]).collect();
        assert!(target_from_reference(Some(&r), &slices));
        assert!(!target_from_reference(None, &slices));
        let flat = [curve(&[0.1, 0.1])];
        let slices: Vec<&[ProgressRow]> = flat.iter().map(|c| &c[..]).collect();
        assert!(!target_from_reference(Some(&r), &slices));
    }

    /// A reference's way moves both the near-optimum line and the comparison target: a run
    /// that covered 85% of the way passes at 80% and fails at the default 90%.
    #[test]
    fn the_way_sets_the_line_and_the_target() {
        let r90 = reference(0.2);
        let r80 = Reference { way: 0.8, ..r90 };
        let runs = [("a".to_string(), 1.0, 1.0 - 0.85 * 0.8)];
        let v = |r: &Reference| near_optimum_claim("x".into(), Some(r), &runs).verdict;
        assert_eq!(v(&r90), bench_core::claims::Verdict::Fail);
        assert_eq!(v(&r80), bench_core::claims::Verdict::Pass);
        let start = [curve(&[1.0, 0.5])];
        let slices: Vec<&[ProgressRow]> = start.iter().map(|c| &c[..]).collect();
        let (t90, _) = comparison_target(Some(&r90), &slices);
        let (t80, why) = comparison_target(Some(&r80), &slices);
        assert!((t90 - (0.2 + 0.1 * 0.8)).abs() < 1e-12, "{t90}");
        assert!((t80 - (0.2 + 0.2 * 0.8)).abs() < 1e-12, "{t80}");
        assert!(why.contains("80% of the way"), "{why}");
        assert_eq!(r80.row("p", 1.0).target_loss, t80);
    }
}
