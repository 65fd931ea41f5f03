//! "Near the optimum" read on the training objective: the objective a figure's runs minimise,
//! `F(w)` on the training rows, is bounded below by the reference optimum `F*` (up to the solver's
//! gap bound), so the share of the way a run covered,
//! `(F(w_0) - F(w_T)) / (F(w_0) - F*)`, is at most 1 (as much more as that bound allows) and
//! means what it says. The held-out loss the curves plot has no such bound (a run can end below
//! the optimum's held-out loss: shares of 104% were read that way), so it is shown beside, not
//! decided on.

use crate::judge::reference::Reference;
use bench_core::claims::Claim;

/// How far below `F*`, relative to it, a run's objective may end before the reference itself is
/// in doubt, where the solver gives no gap bound ([`Reference::objective_gap`] NaN) or a
/// smaller one: the sums over the training rows round.
pub const BELOW_OPTIMUM_SLACK: f64 = 1e-9;

/// One run as the claim reads it: its name, first and last held-out loss, and first and last
/// training objective.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectiveSpan {
    /// The run.
    pub name: String,
    /// Its first and last held-out loss.
    pub held_out: (f64, f64),
    /// Its training objective at its first and last evaluation.
    pub objective: (f64, f64),
}

pub use bench_core::metrics::objective_span;

/// The claim that the best run (lowest final training objective) covered at least
/// [`Reference::way`] of the way from its initial training objective to the reference optimum
/// `F*`, with the held-out loss beside it. Fails when the optimum is no better than the start
/// (nothing to learn), and when a run ends below `F*` by more than the reference's precision
/// (its gap bound, [`Reference::objective_gap`]; the reference would then not be the optimum:
/// a check on the harness, not on the run).
pub fn near_optimum_on_objective(
    id: String,
    reference: &Reference,
    runs: &[ObjectiveSpan],
) -> Claim {
    let statement = format!(
        "the best run covers {:.0}% of the way from the initial training objective to the reference optimum F*'s",
        reference.way * 100.0
    );
    let paper = "the compared runs train to convergence";
    let f_star = reference.objective;
    let best = runs
        .iter()
        .filter(|r| r.objective.0.is_finite() && r.objective.1.is_finite())
        .min_by(|a, b| a.objective.1.total_cmp(&b.objective.1));
    let Some(best) = best else {
        let diverged: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
        return Claim::check(
            id,
            statement,
            paper,
            format!(
                "no run ended with a finite training objective ({})",
                diverged.join(", ")
            ),
            false,
        );
    };
    let (start, end) = best.objective;
    let room = start - f_star;
    if room <= 0.0 {
        return Claim::check(
            id,
            statement,
            paper,
            format!("nothing to converge to: F* = {f_star:.5} is no better than the initial training objective {start:.5}"),
            false,
        );
    }
    let covered = (start - end) / room;
    let (h0, h1) = best.held_out;
    let h_room = h0 - reference.test_loss;
    let held = if h_room > 0.0 {
        format!("{:.0}%", 100.0 * (h0 - h1) / h_room)
    } else {
        "no room".to_string()
    };
    let floor = BELOW_OPTIMUM_SLACK * f_star.abs().max(1e-12);
    let slack = if reference.objective_gap.is_finite() {
        reference.objective_gap.max(floor)
    } else {
        reference.certificate.max(BELOW_OPTIMUM_SLACK) * f_star.abs().max(1e-12)
    };
    let below = end < f_star - slack;
    let mut measured = format!(
        "best {}: training objective {start:.5} -> {end:.5}, F* {f_star:.5}: {:.1}% of the way (held-out loss {h0:.4} -> {h1:.4}, the optimum's {:.4}: {held})",
        best.name,
        covered * 100.0,
        reference.test_loss,
    );
    if below {
        measured.push_str(&format!(
            "; ends below F* by {:.2e}, more than the solver's gap bound {slack:.1e}: the reference is not the optimum",
            f_star - end
        ));
    }
    Claim::check(
        id,
        statement,
        paper,
        measured,
        covered >= reference.way && !below,
    )
    .with_value(covered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::claims::Verdict;

    fn reference() -> Reference {
        Reference {
            objective: 0.30,
            test_loss: 0.40,
            test_accuracy: 0.9,
            certificate: 1e-5,
            passes: 10,
            objective_gap: 1e-6,
            way: crate::judge::reference::DEFAULT_WAY,
        }
    }

    fn span(name: &str, objective: (f64, f64), held_out: (f64, f64)) -> ObjectiveSpan {
        ObjectiveSpan {
            name: name.into(),
            held_out,
            objective,
        }
    }

    #[test]
    fn the_best_run_is_read_on_the_objective_not_the_held_out_loss() {
        // "a" ends lower on held-out rows, below the optimum's (the unbounded reading: 110%),
        // but only half way on the objective; "b" covers 95% of the objective's way.
        let runs = [
            span("a", (0.70, 0.50), (0.70, 0.37)),
            span("b", (0.70, 0.32), (0.70, 0.45)),
        ];
        let c = near_optimum_on_objective("x".into(), &reference(), &runs);
        assert_eq!(c.verdict, Verdict::Pass, "{}", c.measured_value);
        assert!(
            c.measured_value.starts_with("best b:"),
            "{}",
            c.measured_value
        );
        assert!((c.value.unwrap() - 0.95).abs() < 1e-9);
        assert!(c.measured_value.contains("held-out loss 0.7000 -> 0.4500"));
        let short = [span("a", (0.70, 0.50), (0.70, 0.37))];
        let c = near_optimum_on_objective("x".into(), &reference(), &short);
        assert_eq!(c.verdict, Verdict::Fail, "{}", c.measured_value);
        assert!((c.value.unwrap() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn ending_below_the_optimum_fails_as_a_bad_reference() {
        let runs = [span("a", (0.70, 0.29), (0.70, 0.40))];
        let c = near_optimum_on_objective("x".into(), &reference(), &runs);
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(
            c.measured_value
                .contains("the reference is not the optimum"),
            "{}",
            c.measured_value
        );
        // Within the solver's gap bound (1e-6) it is the optimum, reached.
        let runs = [span("a", (0.70, 0.30 - 9e-7), (0.70, 0.40))];
        let c = near_optimum_on_objective("x".into(), &reference(), &runs);
        assert_eq!(c.verdict, Verdict::Pass, "{}", c.measured_value);
    }

    #[test]
    fn nothing_to_learn_and_no_finite_run_fail() {
        let runs = [span("a", (0.20, 0.20), (0.5, 0.5))];
        let c = near_optimum_on_objective("x".into(), &reference(), &runs);
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(c.measured_value.contains("nothing to converge to"));
        let runs = [span("a", (0.70, f64::NAN), (0.7, f64::NAN))];
        let c = near_optimum_on_objective("x".into(), &reference(), &runs);
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(c.measured_value.contains("no run ended"));
    }

    #[test]
    fn the_span_needs_both_ends() {
        use bench_core::metrics::ProgressRow;
        let row = |o: Option<f64>| ProgressRow {
            time: 0.0,
            iteration: 0.0,
            loss: 1.0,
            accuracy: 0.5,
            train_objective: o,
        };
        assert_eq!(
            objective_span(&[row(Some(0.7)), row(None), row(Some(0.3))]),
            Some((0.7, 0.3))
        );
        assert_eq!(objective_span(&[row(Some(0.7)), row(None)]), None);
        assert_eq!(objective_span(&[]), None);
    }
}
