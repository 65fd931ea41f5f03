//! One verdict from several seeds: a claim passes when it passes for a strict majority of the
//! seeds that evaluated it and, where it has a deciding number, for the seed at its median. The row keeps the first seed's measured value and says how many
//! seeds passed and which failed, and where the claim has a deciding number
//! ([`Claim::with_value`]), its median, min and max over the seeds, so the spread is visible in
//! `claims.csv` and the report.

use super::{Claim, Verdict};

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
    /// Pass when a strict majority of evaluating seeds passed; n.a. when none evaluated it.
    pub verdict: Verdict,
    /// Seeds that evaluated the claim (n.a. excluded).
    pub seeds: usize,
    /// Seeds for which it passed.
    pub passes: usize,
    /// Median of the claim's deciding number over the evaluating seeds that gave one.
    pub median: Option<f64>,
    /// Smallest of them.
    pub min: Option<f64>,
    /// Largest of them.
    pub max: Option<f64>,
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

/// Aggregates each seed's claims (in run order) by claim id, in the order ids first appear:
/// a claim passes when a strict majority of the seeds that evaluated it pass and, where it
/// has a deciding number, the median seed passes.
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
            let passes = evaluated
                .iter()
                .filter(|(_, c)| c.verdict == Verdict::Pass)
                .count();
            let failed: Vec<String> = evaluated
                .iter()
                .filter(|(_, c)| c.verdict == Verdict::Fail)
                .map(|(s, _)| s.to_string())
                .collect();
            let first = evaluated
                .first()
                .or(runs.first())
                .expect("an id comes from a run")
                .1;
            let verdict = if evaluated.is_empty() {
                Verdict::NotApplicable
            } else if 2 * passes > evaluated.len() && median_passes(&evaluated) {
                Verdict::Pass
            } else {
                Verdict::Fail
            };
            let measured_value = if evaluated.is_empty() {
                first.measured_value.clone()
            } else {
                format!(
                    "{} (seed {}; passes for {passes} of {} seeds{})",
                    first.measured_value,
                    evaluated[0].0,
                    evaluated.len(),
                    if failed.is_empty() {
                        String::new()
                    } else {
                        format!(", fails for seed {}", failed.join(", "))
                    }
                )
            };
            let (median, min, max) =
                spread(evaluated.iter().filter_map(|(_, c)| c.value).collect());
            SeededClaim {
                median,
                min,
                max,
                claim_id: id.to_string(),
                statement: first.statement.clone(),
                paper_value: first.paper_value.clone(),
                measured_value,
                verdict,
                seeds: evaluated.len(),
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
        assert_eq!(
            (get("a").verdict, get("a").passes, get("a").seeds),
            (Verdict::Pass, 2, 3)
        );
        assert_eq!(
            get("a").measured_value,
            "1.0 (seed 1; passes for 2 of 3 seeds, fails for seed 2)"
        );
        assert_eq!((get("b").verdict, get("b").passes), (Verdict::Fail, 1));
        assert_eq!(
            (get("n").verdict, get("n").seeds),
            (Verdict::NotApplicable, 0)
        );
        assert_eq!(get("n").measured_value, "why");
        // A tie is not a majority.
        let tie = vec![
            (1, vec![c("t", Some(true), "")]),
            (2, vec![c("t", Some(false), "")]),
        ];
        assert_eq!(across_seeds(&tie)[0].verdict, Verdict::Fail);
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
        let runs = vec![
            (1, vec![c(0.1, true)]),
            (2, vec![c(0.5, false)]),
            (3, vec![c(0.9, true)]),
        ];
        let agg = across_seeds(&runs);
        assert_eq!((agg[0].passes, agg[0].verdict), (2, Verdict::Fail));
        // The usual case: the median seed is among the passes.
        let runs = vec![
            (1, vec![c(0.1, false)]),
            (2, vec![c(0.5, true)]),
            (3, vec![c(0.9, true)]),
        ];
        assert_eq!(across_seeds(&runs)[0].verdict, Verdict::Pass);
        // Four seeds: both middle ones must pass.
        let runs = vec![
            (1, vec![c(0.1, false)]),
            (2, vec![c(0.4, true)]),
            (3, vec![c(0.6, true)]),
            (4, vec![c(0.9, true)]),
        ];
        assert_eq!(across_seeds(&runs)[0].verdict, Verdict::Pass);
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
}
