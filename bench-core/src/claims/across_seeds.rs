//! One verdict from several seeds: a claim is undecided when more than a fifth of the seeds that
//! exercised it disagree with the rest ([`UNDECIDED_SHARE`]); otherwise it passes when it passes
//! for a strict majority of them and, where it has a deciding number, for the seed at its
//! median. The row keeps the first seed's measured value and says how many
//! seeds passed and which failed, and where the claim has a deciding number
//! ([`Claim::with_value`]), its median, min and max over the seeds, so the spread is visible in
//! `claims.csv` and the report.

use super::{Claim, ClaimKind, FailureClass, Verdict, UNDECIDED_SHARE};

/// One row of a several-seed `claims.csv`: the claim's columns, then `seeds` (how many seeds
/// evaluated it) and `passes` (how many of them it passed for).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SeededClaim {
    /// Stable id, `<figure>/<short-name>`.
    pub claim_id: String,
    /// The statement checked.
    pub statement: String,
    /// What the paper reports.
    pub paper_value: String,
    /// The first evaluating seed's measured value, and the seeds it failed for.
    pub measured_value: String,
    /// Undecided when more than [`UNDECIDED_SHARE`] of the seeds that exercised it disagree with
    /// the others; else pass when a strict majority of them passed; not exercised when at least
    /// half of the evaluating seeds did not exercise it; n.a. when none evaluated it.
    pub verdict: Verdict,
    /// Seeds behind the verdict: those that exercised the claim (n.a. and not exercised left
    /// out), or, for a claim not exercised, those that did not exercise it.
    pub seeds: usize,
    /// Seeds for which it passed.
    pub passes: usize,
    /// Median of the claim's deciding number over the evaluating seeds that gave one.
    pub median: Option<f64>,
    /// Smallest of them.
    pub min: Option<f64>,
    /// Largest of them.
    pub max: Option<f64>,
    /// A paper's statement or the harness's own check.
    #[serde(default)]
    pub kind: ClaimKind,
    /// For a failure: its class, from the first failing seed that carries one.
    #[serde(default)]
    pub class: Option<FailureClass>,
    /// For a failure: the evidence for its class.
    #[serde(default)]
    pub why: String,
}

/// Median (mean of the middle two for an even count), min and max of `values`.
fn spread(mut values: Vec<f64>) -> (Option<f64>, Option<f64>, Option<f64>) {
    if values.is_empty() {
        return (None, None, None);
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    };
    (
        Some(median),
        values.first().copied(),
        values.last().copied(),
    )
}

/// Whether the seed(s) at the median of the claim's deciding number passed (both middle ones
/// for an even count), when every evaluating seed gave a number; true without numbers. A
/// majority of passes whose median seed fails means the verdict does not follow the number
/// (a pass and a fail on either side of it), and the claim is not taken to hold.
fn median_passes(evaluated: &[(u64, &Claim)]) -> bool {
    let mut valued: Vec<(f64, Verdict)> = evaluated
        .iter()
        .filter_map(|(_, c)| c.value.map(|v| (v, c.verdict)))
        .collect();
    if valued.is_empty() || valued.len() < evaluated.len() {
        return true;
    }
    valued.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = valued.len();
    let middle = if n % 2 == 1 {
        &valued[n / 2..=n / 2]
    } else {
        &valued[n / 2 - 1..=n / 2]
    };
    middle.iter().all(|(_, v)| *v == Verdict::Pass)
}

/// Whether a claim with `passes` passing of `exercised` seeds is undecided: the smaller side is
/// more than [`UNDECIDED_SHARE`] of them.
pub fn seeds_disagree(passes: usize, exercised: usize) -> bool {
    let minority = passes.min(exercised - passes.min(exercised));
    minority > 0 && minority as f64 > UNDECIDED_SHARE * exercised as f64
}

/// Aggregates each seed's claims (in run order) by claim id, in the order ids first appear:
/// a claim is undecided when its seeds disagree ([`seeds_disagree`]), else passes when a
/// strict majority of the seeds that evaluated it pass and, where it has a deciding number,
/// the median seed passes.
pub fn across_seeds(per_seed: &[(u64, Vec<Claim>)]) -> Vec<SeededClaim> {
    let mut ids: Vec<&str> = Vec::new();
    for (_, claims) in per_seed {
        for c in claims {
            if !ids.contains(&c.claim_id.as_str()) {
                ids.push(&c.claim_id);
            }
        }
    }
    ids.into_iter()
        .map(|id| {
            let runs: Vec<(u64, &Claim)> = per_seed
                .iter()
                .filter_map(|(seed, cs)| cs.iter().find(|c| c.claim_id == id).map(|c| (*seed, c)))
                .collect();
            let evaluated: Vec<(u64, &Claim)> = runs
                .iter()
                .copied()
                .filter(|(_, c)| c.verdict != Verdict::NotApplicable)
                .collect();
            // Seeds whose run could not tell a pass from a fail stay out of the vote; when
            // they are at least half of the evaluating seeds the claim is not exercised.
            let unexercised: Vec<(u64, &Claim)> = evaluated
                .iter()
                .copied()
                .filter(|(_, c)| c.verdict == Verdict::NotExercised)
                .collect();
            let exercised: Vec<(u64, &Claim)> = evaluated
                .iter()
                .copied()
                .filter(|(_, c)| c.verdict != Verdict::NotExercised)
                .collect();
            let passes = exercised
                .iter()
                .filter(|(_, c)| c.verdict == Verdict::Pass)
                .count();
            let failed: Vec<String> = exercised
                .iter()
                .filter(|(_, c)| c.verdict == Verdict::Fail)
                .map(|(s, _)| s.to_string())
                .collect();
            let verdict = if evaluated.is_empty() {
                Verdict::NotApplicable
            } else if 2 * unexercised.len() >= evaluated.len() {
                Verdict::NotExercised
            } else if seeds_disagree(passes, exercised.len()) {
                Verdict::Undecided
            } else if 2 * passes > exercised.len() && median_passes(&exercised) {
                Verdict::Pass
            } else {
                Verdict::Fail
            };
            let shown = if verdict == Verdict::NotExercised {
                &unexercised
            } else {
                &exercised
            };
            let first = shown
                .first()
                .or(runs.first())
                .expect("an id comes from a run");
            let not_exercised_for = if unexercised.is_empty() {
                String::new()
            } else {
                let seeds: Vec<String> = unexercised.iter().map(|(s, _)| s.to_string()).collect();
                format!(", not exercised for seed {}", seeds.join(", "))
            };
            // A seed whose numbers went NaN or infinite (a diverging run) is named, whatever
            // the verdict: the first seed's value alone would hide it.
            let diverged: Vec<String> = runs
                .iter()
                .filter(|(_, c)| {
                    // Rust prints them `NaN` and `inf`: whole words, not parts of others.
                    c.measured_value
                        .split(|ch: char| !ch.is_ascii_alphabetic())
                        .any(|w| matches!(w, "NaN" | "nan" | "inf"))
                })
                .map(|(s, _)| s.to_string())
                .collect();
            let not_exercised_for = if diverged.is_empty() {
                not_exercised_for
            } else {
                format!(
                    "{not_exercised_for}; NaN or infinite in seed {}",
                    diverged.join(", ")
                )
            };
            let measured_value = if evaluated.is_empty() {
                first.1.measured_value.clone()
            } else if exercised.is_empty() {
                format!(
                    "{} (seed {}{})",
                    first.1.measured_value,
                    first.0,
                    not_exercised_for.replacen(',', ";", 1)
                )
            } else {
                format!(
                    "{} (seed {}; passes for {passes} of {} seeds{}{not_exercised_for})",
                    first.1.measured_value,
                    first.0,
                    exercised.len(),
                    if failed.is_empty() {
                        String::new()
                    } else {
                        format!(", fails for seed {}", failed.join(", "))
                    }
                )
            };
            let (median, min, max) = spread(shown.iter().filter_map(|(_, c)| c.value).collect());
            let explained = exercised
                .iter()
                .find(|(_, c)| c.verdict == Verdict::Fail && c.class.is_some())
                .filter(|_| verdict == Verdict::Fail);
            SeededClaim {
                kind: first.1.kind,
                class: explained.and_then(|(_, c)| c.class),
                why: explained.map_or_else(String::new, |(_, c)| c.why.clone()),
                median,
                min,
                max,
                claim_id: id.to_string(),
                statement: first.1.statement.clone(),
                paper_value: first.1.paper_value.clone(),
                measured_value,
                verdict,
                seeds: shown.len(),
                passes,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(id: &str, pass: Option<bool>, m: &str) -> Claim {
        match pass {
            Some(p) => Claim::check(id, "s", "p", m, p),
            None => Claim::not_applicable(id, "s", "p", m),
        }
    }

    #[test]
    fn seeds_that_disagree_leave_a_claim_undecided() {
        assert!(seeds_disagree(2, 3) && seeds_disagree(1, 3) && seeds_disagree(1, 2));
        assert!(!seeds_disagree(3, 3) && !seeds_disagree(0, 3));
        // One seed in five or fewer the other way decides.
        assert!(!seeds_disagree(4, 5) && !seeds_disagree(1, 5) && !seeds_disagree(6, 7));
        assert!(seeds_disagree(5, 7) && seeds_disagree(2, 7));
    }

    #[test]
    fn a_strict_majority_of_evaluating_seeds_decides() {
        let runs = vec![
            (
                1,
                vec![
                    c("a", Some(true), "1.0"),
                    c("b", Some(false), "x"),
                    c("n", None, "why"),
                ],
            ),
            (
                2,
                vec![
                    c("a", Some(false), "2.0"),
                    c("b", Some(true), "y"),
                    c("n", None, "why"),
                ],
            ),
            (3, vec![c("a", Some(true), "3.0"), c("b", Some(false), "z")]),
        ];
        let agg = across_seeds(&runs);
        let get = |id: &str| agg.iter().find(|x| x.claim_id == id).unwrap();
        // Two of three is a split: undecided, never a pass.
        assert_eq!(
            (get("a").verdict, get("a").passes, get("a").seeds),
            (Verdict::Undecided, 2, 3)
        );
        assert_eq!(
            get("a").measured_value,
            "1.0 (seed 1; passes for 2 of 3 seeds, fails for seed 2)"
        );
        assert_eq!((get("b").verdict, get("b").passes), (Verdict::Undecided, 1));
        assert_eq!(
            (get("n").verdict, get("n").seeds),
            (Verdict::NotApplicable, 0)
        );
        assert_eq!(get("n").measured_value, "why");
        // A tie is undecided.
        let tie = vec![
            (1, vec![c("t", Some(true), "")]),
            (2, vec![c("t", Some(false), "")]),
        ];
        assert_eq!(across_seeds(&tie)[0].verdict, Verdict::Undecided);
        // Four of five decide: a pass, and a fail the other way round.
        let five = |passing: usize| -> Vec<(u64, Vec<Claim>)> {
            (0..5u64)
                .map(|k| (k + 1, vec![c("f", Some((k as usize) < passing), "")]))
                .collect()
        };
        assert_eq!(across_seeds(&five(4))[0].verdict, Verdict::Pass);
        assert_eq!(across_seeds(&five(1))[0].verdict, Verdict::Fail);
        assert_eq!(across_seeds(&five(3))[0].verdict, Verdict::Undecided);
        assert_eq!(
            agg.iter().map(|x| x.claim_id.as_str()).collect::<Vec<_>>(),
            ["a", "b", "n"]
        );
    }
}

#[cfg(test)]
mod spread_tests {
    use super::*;

    #[test]
    fn a_majority_whose_median_seed_fails_is_a_fail() {
        let c = |v: f64, pass: bool| Claim::check("a", "s", "p", "m", pass).with_value(v);
        // Passes at the extremes, fails at the median: the number does not carry the verdict.
        let seeds = |runs: &[(f64, bool)]| -> Vec<(u64, Vec<Claim>)> {
            (1u64..)
                .zip(runs)
                .map(|(k, &(v, pass))| (k, vec![c(v, pass)]))
                .collect()
        };
        let five = [
            (0.1, true),
            (0.3, true),
            (0.5, false),
            (0.7, true),
            (0.9, true),
        ];
        let agg = across_seeds(&seeds(&five));
        assert_eq!((agg[0].passes, agg[0].verdict), (4, Verdict::Fail));
        // The usual case: the median seed is among the passes.
        let five = [
            (0.1, false),
            (0.3, true),
            (0.5, true),
            (0.7, true),
            (0.9, true),
        ];
        assert_eq!(across_seeds(&seeds(&five))[0].verdict, Verdict::Pass);
        // An even count: both middle ones must pass.
        let mut ten: Vec<(f64, bool)> = (0..10).map(|k| (f64::from(k), true)).collect();
        assert_eq!(across_seeds(&seeds(&ten))[0].verdict, Verdict::Pass);
        ten[4].1 = false;
        assert_eq!(across_seeds(&seeds(&ten))[0].verdict, Verdict::Fail);
    }

    #[test]
    fn values_spread_over_the_evaluating_seeds() {
        let c = |v: f64, pass: bool| Claim::check("a", "s", "p", "m", pass).with_value(v);
        let runs = vec![
            (1, vec![c(3.0, true)]),
            (2, vec![c(1.0, false)]),
            (3, vec![c(2.0, true)]),
            (
                4,
                vec![Claim::not_applicable("a", "s", "p", "why").with_value(9.0)],
            ),
        ];
        let a = &across_seeds(&runs)[0];
        assert_eq!((a.median, a.min, a.max), (Some(2.0), Some(1.0), Some(3.0)));
        assert_eq!(spread(vec![4.0, 1.0]), (Some(2.5), Some(1.0), Some(4.0)));
        let none = across_seeds(&[(1, vec![Claim::check("b", "s", "p", "m", true)])]);
        assert_eq!(none[0].median, None);
        assert_eq!(
            Claim::check("c", "s", "p", "m", true)
                .with_value(f64::NAN)
                .value,
            None
        );
    }

    #[test]
    fn seeds_that_did_not_exercise_a_claim_stay_out_of_the_vote() {
        let ne = |id: &str| Claim::check(id, "s", "p", "t", true).not_exercised("early");
        // One seed of three not exercised: the two others decide.
        let runs = vec![
            (1, vec![ne("a"), ne("b")]),
            (2, vec![Claim::check("a", "s", "p", "x", true), ne("b")]),
            (
                3,
                vec![
                    Claim::check("a", "s", "p", "y", true),
                    Claim::check("b", "s", "p", "z", true),
                ],
            ),
        ];
        let agg = across_seeds(&runs);
        assert_eq!(
            (agg[0].verdict, agg[0].passes, agg[0].seeds),
            (Verdict::Pass, 2, 2)
        );
        assert!(
            agg[0]
                .measured_value
                .ends_with("(seed 2; passes for 2 of 2 seeds, not exercised for seed 1)"),
            "{}",
            agg[0].measured_value
        );
        // None exercised: no pass count to give.
        let all = across_seeds(&[(4, vec![ne("c")]), (5, vec![ne("c")])]);
        assert_eq!(
            all[0].measured_value,
            "t [not exercised: early] (seed 4; not exercised for seed 4, 5)"
        );
        // Two of three not exercised: the claim is not exercised, whatever the third says.
        assert_eq!((agg[1].verdict, agg[1].seeds), (Verdict::NotExercised, 2));
        assert!(agg[1]
            .measured_value
            .starts_with("t [not exercised: early]"));
    }

    #[test]
    fn a_seed_that_went_nan_is_named() {
        let runs = vec![
            (
                1,
                vec![Claim::check("a", "s", "p", "loss 0.1004 (dominant)", true)],
            ),
            (
                2,
                vec![Claim::check("a", "s", "p", "loss NaN at clock 171", false)],
            ),
            (3, vec![Claim::check("a", "s", "p", "loss inf", true)]),
        ];
        let agg = across_seeds(&runs);
        assert!(
            agg[0]
                .measured_value
                .ends_with("; NaN or infinite in seed 2, 3)"),
            "{}",
            agg[0].measured_value
        );
    }
}
