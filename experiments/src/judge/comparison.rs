//! Comparative claims as the papers word them: three outcomes, not a strict `<`. A paper's
//! "faster or comparable" holds when ours is better or equivalent; "insignificant" allows a
//! difference within the tolerance. Two numbers within the relative tolerance of each other are
//! equivalent (ties decided by rounding are ties); the statement says which outcomes it allows,
//! and quotes the paper with its section and figure.

use std::fmt;

/// The relative tolerance a comparative claim uses unless the paper's words give another:
/// within 5% of each other, two times (or clocks) are comparable.
pub const DEFAULT_TOLERANCE: f64 = 0.05;

/// How one measurement compares with another where lower is better (a time, clocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Lower by more than the tolerance.
    Better,
    /// Within the tolerance.
    Equivalent,
    /// Higher by more than the tolerance.
    Worse,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Better => "better",
            Outcome::Equivalent => "equivalent",
            Outcome::Worse => "worse",
        })
    }
}

/// Which outcomes a paper's statement allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allows {
    /// "faster", "before": better only.
    Better,
    /// "faster or comparable", "no later than": better or equivalent.
    BetterOrEquivalent,
}

/// A paper's comparative statement: its words, where they are, and what they allow.
#[derive(Debug, Clone, Copy)]
pub struct PaperComparison {
    /// The paper's words, quoted.
    pub quote: &'static str,
    /// Where in the paper: section, and figure, table or equation (`Hop §7.3.3, Fig 14`).
    pub source: &'static str,
    /// The outcomes that make the statement hold.
    pub allows: Allows,
    /// Relative tolerance of "equivalent".
    pub tolerance: f64,
}

impl PaperComparison {
    /// `ours` against `theirs`, lower better: `None` when either is missing or not positive
    /// (a run that never got there is compared by the caller, not here).
    pub fn outcome(&self, ours: f64, theirs: f64) -> Option<Outcome> {
        if !(ours.is_finite() && theirs.is_finite() && ours > 0.0 && theirs > 0.0) {
            return None;
        }
        let ratio = ours / theirs;
        Some(if ratio < 1.0 - self.tolerance {
            Outcome::Better
        } else if ratio > 1.0 + self.tolerance {
            Outcome::Worse
        } else {
            Outcome::Equivalent
        })
    }

    /// Whether `outcome` makes the statement hold.
    pub fn holds(&self, outcome: Outcome) -> bool {
        match self.allows {
            Allows::Better => outcome == Outcome::Better,
            Allows::BetterOrEquivalent => outcome != Outcome::Worse,
        }
    }

    /// Whether the statement holds for `ours` against `theirs` (lower better; `None`: never got
    /// there), and the words saying how they compared: a run that got there beats one that did
    /// not; when neither did, the statement does not hold.
    pub fn judge(&self, ours: Option<f64>, theirs: Option<f64>) -> (bool, String) {
        match (ours, theirs) {
            (Some(a), Some(b)) => match self.outcome(a, b) {
                Some(o) => (
                    self.holds(o),
                    format!(
                        "{o} ({:.3}x, equivalent within {:.0}%)",
                        a / b,
                        100.0 * self.tolerance
                    ),
                ),
                None => (a <= b, "not comparable as a ratio".into()),
            },
            (Some(_), None) => (true, "better (the other never gets there)".into()),
            (None, Some(_)) => (false, "worse (never gets there)".into()),
            (None, None) => (false, "neither gets there".into()),
        }
    }

    /// How a claim's statement words what this comparison allows of a time (or a count)
    /// against `theirs`'s, lower better: "before X, by more than 5% of its time" (better) or
    /// "before X or within 5% of its time" (better or equivalent).
    pub fn before(&self, theirs: &str) -> String {
        self.before_in(theirs, "time")
    }

    /// [`Self::before`] on an axis other than time: "of its `measure`" (clocks, iterations).
    pub fn before_in(&self, theirs: &str, measure: &str) -> String {
        let pct = 100.0 * self.tolerance;
        match self.allows {
            Allows::Better => format!("before {theirs}, by more than {pct:.0}% of its {measure}"),
            Allows::BetterOrEquivalent => {
                format!("before {theirs} or within {pct:.0}% of its {measure}")
            }
        }
    }

    /// The paper's words and where they are, for a claim's paper value.
    pub fn cite(&self) -> String {
        format!("\"{}\" ({})", self.quote, self.source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMPARABLE: PaperComparison = PaperComparison {
        quote: "ESSP converges faster or comparable to SSP",
        source: "ESSP §\"Experiments\", Fig 3",
        allows: Allows::BetterOrEquivalent,
        tolerance: DEFAULT_TOLERANCE,
    };

    #[test]
    fn three_outcomes_and_what_the_words_allow() {
        assert_eq!(COMPARABLE.outcome(186.0, 185.0), Some(Outcome::Equivalent));
        assert_eq!(COMPARABLE.outcome(225.0, 204.0), Some(Outcome::Worse));
        assert_eq!(COMPARABLE.outcome(150.0, 204.0), Some(Outcome::Better));
        assert_eq!(COMPARABLE.outcome(0.0, 1.0), None);
        assert!(COMPARABLE.judge(Some(186.0), Some(185.0)).0);
        let (holds, words) = COMPARABLE.judge(Some(225.0), Some(204.0));
        assert!(!holds);
        assert!(words.starts_with("worse (1.103x"), "{words}");
        let strict = PaperComparison {
            allows: Allows::Better,
            ..COMPARABLE
        };
        assert!(!strict.judge(Some(186.0), Some(185.0)).0);
        assert!(strict.judge(Some(100.0), Some(185.0)).0);
        assert!(COMPARABLE.judge(Some(1.0), None).0);
        assert!(!COMPARABLE.judge(None, Some(1.0)).0);
        assert!(!COMPARABLE.judge(None, None).0);
        assert_eq!(
            COMPARABLE.cite(),
            "\"ESSP converges faster or comparable to SSP\" (ESSP §\"Experiments\", Fig 3)"
        );
    }
}
