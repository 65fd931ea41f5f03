//! Hop's per-step cost of a setting against the standard protocol (Hop §7.3.3, Figs 15-16, backup
//! workers): "although receiving one less update hurts the per iteration progress, the effect is
//! insignificant compared to the gained speedup in the per iteration execution time". Two claims,
//! one per half of the sentence, on the iterations each needs to reach the target:
//! - it hurts: the setting needs more iterations than standard, by more than the tolerance (a
//!   strict order: as many within the tolerance is a tie and fails, saying so);
//! - the hurt is insignificant against the speedup: the extra iterations, as a share of
//!   standard's (`ratio - 1`), are at most a share of the iteration speedup's gain
//!   (`speedup - 1`), both measured in the same run. The paper names no number; "insignificant
//!   compared to" is read as at most half, `max_step_cost_share` in the configuration.

use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};
use bench_core::claims::Claim;

/// Hop's words on the per-step cost, for both claims (`allows` and `tolerance`: more
/// iterations than standard by more than 5% is a hurt).
const HURTS: PaperComparison = PaperComparison {
    quote: "although receiving one less update hurts the per iteration progress, the effect is insignificant compared to the gained speedup in the per iteration execution time",
    source: "Hop §7.3.3, Figs 15-16",
    allows: Allows::Better,
    tolerance: DEFAULT_TOLERANCE,
};

/// What the two claims read: the iterations `label` and standard need to reach `target`
/// (`None`: never), and `label`'s iteration speedup over standard.
pub(super) struct StepCost<'a> {
    /// Claim id prefix, `<figure>/<part>/<setting>`.
    pub id: String,
    /// The setting's label.
    pub label: &'a str,
    /// The loss both runs are read at.
    pub target: f64,
    /// Share of the speedup's gain the extra iterations may take ("insignificant").
    pub share: f64,
    /// Iterations the setting needs.
    pub its: Option<f64>,
    /// Iterations standard needs.
    pub standard: Option<f64>,
    /// The setting's seconds per iteration over standard's, inverted (above 1: faster).
    pub speedup: f64,
}

impl StepCost<'_> {
    /// The iterations ratio, setting over standard (NaN when either never gets there).
    fn ratio(&self) -> f64 {
        match (self.its, self.standard) {
            (Some(a), Some(b)) if b > 0.0 => a / b,
            _ => f64::NAN,
        }
    }

    fn evidence(&self) -> String {
        let shown = |x: Option<f64>| x.map_or("never".to_string(), |x| format!("{x:.0}"));
        format!(
            "{} {} iterations, standard {} ({:.3}x)",
            self.label,
            shown(self.its),
            shown(self.standard),
            self.ratio()
        )
    }

    /// `<id>-per-step-hurts` and `<id>-per-step-cost`.
    pub fn claims(&self) -> [Claim; 2] {
        let ratio = self.ratio();
        // More iterations than standard beyond the tolerance, read on the setting over
        // standard (the value and the failure table's conditions read the same ratio); a
        // setting that never gets there is hurt, a standard that never does leaves nothing to
        // compare.
        let tol = HURTS.tolerance;
        let (hurts, how) = match (self.its, self.standard) {
            (Some(_), Some(_)) if ratio > 1.0 + tol => (true, "more".to_string()),
            (Some(_), Some(_)) if ratio >= 1.0 - tol => {
                (false, format!("a tie (within {:.0}%)", 100.0 * tol))
            }
            (Some(_), Some(_)) => (false, "fewer".to_string()),
            (None, Some(_)) => (true, "more (it never gets there)".to_string()),
            (_, None) => (false, "standard never gets there".to_string()),
        };
        let hurt = Claim::check(
            format!("{}-per-step-hurts", self.id),
            format!(
                "{} needs more iterations than standard to reach loss {:.4}, by more than {:.0}%",
                self.label,
                self.target,
                100.0 * HURTS.tolerance
            ),
            HURTS.cite(),
            format!("{}: {how}", self.evidence()),
            hurts,
        )
        .with_value(ratio);
        let bound = 1.0 + self.share * (self.speedup - 1.0);
        let cost = Claim::check(
            format!("{}-per-step-cost", self.id),
            format!(
                "{}'s extra iterations to reach loss {:.4} are at most {:.0}% of its iteration speedup's gain (at most {bound:.3}x standard's at a {:.3}x speedup)",
                self.label,
                self.target,
                100.0 * self.share,
                self.speedup
            ),
            HURTS.cite(),
            format!(
                "{}; iteration speedup {:.3}x",
                self.evidence(),
                self.speedup
            ),
            ratio <= bound,
        )
        .with_value(ratio);
        [hurt, cost]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::claims::Verdict;

    fn verdicts(its: Option<f64>, standard: Option<f64>, speedup: f64) -> [Verdict; 2] {
        let c = StepCost {
            id: "f/g/b".into(),
            label: "b",
            target: 0.3,
            share: 0.5,
            its,
            standard,
            speedup,
        }
        .claims();
        [c[0].verdict, c[1].verdict]
    }

    #[test]
    fn hurt_needs_more_iterations_beyond_the_tolerance_and_cost_is_bounded_by_the_speedup() {
        use Verdict::{Fail, Pass};
        // 10% more iterations at a 1.4x speedup: hurts, and within half of the 0.4 gain.
        assert_eq!(verdicts(Some(110.0), Some(100.0), 1.4), [Pass, Pass]);
        // The same 10% at a 1.1x speedup: more than half of the 0.1 gain.
        assert_eq!(verdicts(Some(110.0), Some(100.0), 1.1), [Pass, Fail]);
        // A tie within 5% does not show a hurt; it is no cost either. The line is on the
        // setting over standard: 5.1% more is a hurt, 5% is not.
        assert_eq!(verdicts(Some(103.0), Some(100.0), 1.4), [Fail, Pass]);
        assert_eq!(verdicts(Some(105.0), Some(100.0), 1.4), [Fail, Pass]);
        assert_eq!(verdicts(Some(105.1), Some(100.0), 1.4), [Pass, Pass]);
        assert_eq!(verdicts(Some(100.0), Some(100.0), 1.4), [Fail, Pass]);
        // Fewer iterations: no hurt.
        assert_eq!(verdicts(Some(90.0), Some(100.0), 1.4), [Fail, Pass]);
        // Twice as many: a hurt, not an insignificant one.
        assert_eq!(verdicts(Some(200.0), Some(100.0), 1.8), [Pass, Fail]);
        // A setting that never gets there hurts and costs too much; standard never: neither.
        assert_eq!(verdicts(None, Some(100.0), 1.8), [Pass, Fail]);
        assert_eq!(verdicts(Some(100.0), None, 1.8), [Fail, Fail]);
    }
}
