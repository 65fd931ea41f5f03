//! The exact and claims tiers: a snapshot compared with a baseline's, finding by finding.
//!
//! - exact: a sim CSV whose bytes changed, or that the baseline had and the run lacks, fails
//!   the run; a new one is listed.
//! - claims: a claim that passed in the baseline and does not now (fail, or not applicable)
//!   fails the run; new, removed and improved claims are listed.
//! - figures: a figure of the baseline missing from the run, or run under another driver
//!   (which takes it out of the exact tier), fails the run; a new figure is listed.

use super::snapshot::Snapshot;
use serde::Serialize;
use std::collections::BTreeSet;

/// Which comparison a finding comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The figures present and their drivers.
    Figures,
    /// Sim CSV bytes.
    Exact,
    /// Claim verdicts.
    Claims,
    /// Bounds a protocol guarantees (staleness, gaps): every counted violation must be 0.
    Bounds,
    /// Transport and simulator numbers over an in-run reference, measured now.
    Ratio,
    /// Absolute numbers (Gb/s, ns, events/s), gated only on the baseline's testbed.
    Absolute,
}

/// What a finding says, most severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// A confirmed regression: changed bytes, a lost file, a claim that stopped passing.
    Regressed,
    /// A claim of a figure whose bytes are not reproducible (threads or cluster driver, host
    /// timing) that stopped passing, or a measured metric whose change is inside its noise or
    /// did not hold on re-measurement: noise until a re-run confirms it (exit 3 when nothing
    /// else regressed).
    Noisy,
    /// In the baseline, not in this run (a claim; listed, not failing).
    Removed,
    /// In this run, not in the baseline.
    New,
    /// A claim that failed in the baseline and passes now.
    Improved,
    /// Another value that neither regresses nor improves (a fail that became n.a.).
    Changed,
    /// Sim CSV bytes that differ from a baseline taken on another numeric platform (another
    /// architecture, OS or C library: [`bench_core::metrics::numeric_platform`]), where equal
    /// bytes are not promised: listed, not failing.
    OtherPlatform,
    /// An absolute number that does not gate here (another testbed than the baseline's, a
    /// baseline accepted with `--absolute info`, or `--absolute info` now): printed only.
    Info,
    /// As in the baseline.
    Same,
}

impl Outcome {
    /// Whether this outcome fails the run.
    pub fn fails(self) -> bool {
        self == Outcome::Regressed
    }
}

/// One compared metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The tier.
    pub tier: Tier,
    /// The file (`figure/path`) or claim id.
    pub metric: String,
    /// Its value in the baseline (a hash prefix or a verdict; "-" when absent).
    pub baseline: String,
    /// Its value now.
    pub now: String,
    /// The verdict.
    pub outcome: Outcome,
    /// Measured tiers: the one-sided p-value that the metric got worse.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    /// Measured tiers: median now over median in the baseline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<f64>,
    /// Why, where the verdict needs a word (re-measurement, spread, testbed).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl Finding {
    /// A finding without a p-value or a ratio (every tier but the measured ones).
    pub fn plain(
        tier: Tier,
        metric: String,
        baseline: String,
        now: String,
        outcome: Outcome,
    ) -> Finding {
        Finding {
            tier,
            metric,
            baseline,
            now,
            outcome,
            p_value: None,
            change: None,
            note: String::new(),
        }
    }
}

/// `findings` with the exact tier's changed bytes marked [`Outcome::OtherPlatform`] when the
/// baseline's numeric platform is known and is not this run's (`base` and `here` as
/// [`bench_core::metrics::numeric_platform`] names them; an older baseline without one is taken
/// as this platform's).
pub fn across_platforms(findings: Vec<Finding>, base: &str, here: &str) -> Vec<Finding> {
    if base.is_empty() || base == here {
        return findings;
    }
    findings
        .into_iter()
        .map(|mut f| {
            if f.tier == Tier::Exact && f.outcome == Outcome::Regressed {
                f.outcome = Outcome::OtherPlatform;
                f.note = format!("baseline taken on {base}, this run on {here}");
            }
            f
        })
        .collect()
}

/// Every finding of the exact and claims tiers, most severe first, then by tier and metric.
pub fn compare(base: &Snapshot, now: &Snapshot) -> Vec<Finding> {
    let mut out = Vec::new();
    let names: BTreeSet<&String> = base.figures.keys().chain(now.figures.keys()).collect();
    for f in names {
        let (b, n) = (base.figures.get(f), now.figures.get(f));
        out.push(Finding {
            tier: Tier::Figures,
            metric: f.clone(),
            baseline: b.map_or("-".into(), |d| format!("driver {d}")),
            now: n.map_or("-".into(), |d| format!("driver {d}")),
            outcome: match (b, n) {
                (Some(b), Some(n)) if b == n => Outcome::Same,
                (Some(_), _) => Outcome::Regressed,
                (None, _) => Outcome::New,
            },
            p_value: None,
            change: None,
            note: String::new(),
        });
    }
    let short = |h: &String| h.chars().take(12).collect::<String>();
    let files: BTreeSet<&String> = base.exact.keys().chain(now.exact.keys()).collect();
    for f in files {
        let (b, n) = (base.exact.get(f), now.exact.get(f));
        // A figure the run did not hash (another driver now) is a figures-tier finding.
        let figure = f.split('/').next().unwrap_or_default();
        if b.is_some() && n.is_none() && now.not_hashed.iter().any(|x| x == figure) {
            continue;
        }
        let outcome = match (b, n) {
            (Some(b), Some(n)) if b == n => Outcome::Same,
            (Some(_), _) => Outcome::Regressed,
            (None, _) => Outcome::New,
        };
        out.push(Finding {
            tier: Tier::Exact,
            metric: f.clone(),
            baseline: b.map_or("-".into(), short),
            now: n.map_or("-".into(), short),
            outcome,
            p_value: None,
            change: None,
            note: String::new(),
        });
    }
    let ids: BTreeSet<&String> = base.claims.keys().chain(now.claims.keys()).collect();
    for id in ids {
        let (b, n) = (base.claims.get(id), now.claims.get(id));
        let figure = id.split('/').next().unwrap_or_default();
        let timed = now.not_hashed.iter().any(|x| x == figure);
        let outcome = match (b.map(String::as_str), n.map(String::as_str)) {
            (Some(b), Some(n)) if b == n => Outcome::Same,
            (Some("pass"), Some(_)) if timed => Outcome::Noisy,
            (Some("pass"), Some(_)) => Outcome::Regressed,
            (Some(_), Some("pass")) => Outcome::Improved,
            (Some(_), Some(_)) => Outcome::Changed,
            (Some(_), None) => Outcome::Removed,
            (None, _) => Outcome::New,
        };
        out.push(Finding {
            tier: Tier::Claims,
            metric: id.clone(),
            baseline: b.cloned().unwrap_or_else(|| "-".into()),
            now: n.cloned().unwrap_or_else(|| "-".into()),
            outcome,
            p_value: None,
            change: None,
            note: String::new(),
        });
    }
    out.sort_by(|a, b| (a.outcome, a.tier, &a.metric).cmp(&(b.outcome, b.tier, &b.metric)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(files: &[(&str, &str)], claims: &[(&str, &str)]) -> Snapshot {
        Snapshot {
            exact: files
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            claims: claims
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            not_hashed: Vec::new(),
            revisions: Vec::new(),
            figures: Default::default(),
            scales: Vec::new(),
        }
    }

    fn outcome(f: &[Finding], metric: &str) -> Outcome {
        f.iter().find(|x| x.metric == metric).unwrap().outcome
    }

    #[test]
    fn byte_changes_and_lost_passes_regress_the_rest_is_listed() {
        let base = snap(
            &[("a/x.csv", "h1"), ("a/y.csv", "h2"), ("b/z.csv", "h3")],
            &[
                ("a/p", "pass"),
                ("a/q", "fail"),
                ("a/r", "pass"),
                ("a/s", "pass"),
                ("a/t", "n.a."),
            ],
        );
        let now = snap(
            &[("a/x.csv", "h1"), ("a/y.csv", "CHANGED"), ("c/w.csv", "h4")],
            &[
                ("a/p", "pass"),
                ("a/q", "pass"),
                ("a/r", "fail"),
                ("a/t", "n.a."),
                ("a/u", "fail"),
            ],
        );
        let f = compare(&base, &now);
        assert_eq!(outcome(&f, "a/x.csv"), Outcome::Same);
        assert_eq!(outcome(&f, "a/y.csv"), Outcome::Regressed);
        assert_eq!(outcome(&f, "b/z.csv"), Outcome::Regressed, "a lost file");
        assert_eq!(outcome(&f, "c/w.csv"), Outcome::New);
        assert_eq!(outcome(&f, "a/q"), Outcome::Improved);
        assert_eq!(outcome(&f, "a/r"), Outcome::Regressed);
        assert_eq!(outcome(&f, "a/s"), Outcome::Removed);
        assert_eq!(outcome(&f, "a/t"), Outcome::Same);
        assert_eq!(outcome(&f, "a/u"), Outcome::New);
        assert!(f[0].outcome.fails(), "most severe first");
        assert_eq!(f.iter().filter(|x| x.outcome.fails()).count(), 3);
        // the same snapshot against itself: nothing fails
        assert!(compare(&base, &base)
            .iter()
            .all(|x| x.outcome == Outcome::Same));
        // a timed figure's claim that stops passing is noise until confirmed
        let mut timed = snap(&[], &[("t/p", "fail")]);
        timed.not_hashed.push("t".into());
        let c = compare(&snap(&[], &[("t/p", "pass")]), &timed);
        assert_eq!(outcome(&c, "t/p"), Outcome::Noisy);
        // a pass that becomes not applicable is a lost check
        let na = snap(&[], &[("a/p", "n.a.")]);
        assert_eq!(outcome(&compare(&base, &na), "a/p"), Outcome::Regressed);
    }

    #[test]
    fn a_figure_lost_or_moved_to_another_driver_regresses_once() {
        let mut base = snap(&[("a/x.csv", "h1")], &[]);
        base.figures.insert("a".into(), "sim".into());
        base.figures.insert("b".into(), "threads".into());
        let mut now = snap(&[], &[]);
        now.not_hashed.push("a".into());
        now.figures.insert("a".into(), "threads".into());
        let f = compare(&base, &now);
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(outcome(&f, "a"), Outcome::Regressed, "moved to threads");
        assert_eq!(outcome(&f, "b"), Outcome::Regressed, "lost");
        // a fail that became n.a. is listed, not failing
        let c = compare(
            &snap(&[], &[("a/p", "fail")]),
            &snap(&[], &[("a/p", "n.a.")]),
        );
        assert_eq!(outcome(&c, "a/p"), Outcome::Changed);
    }

    #[test]
    fn changed_bytes_on_another_numeric_platform_are_listed_not_failing() {
        let base = snap(&[], &[]);
        let mut now = base.clone();
        now.exact.insert("f/a.csv".into(), "1111".into());
        let mut then = base.clone();
        then.exact.insert("f/a.csv".into(), "2222".into());
        let f = compare(&then, &now);
        assert_eq!(outcome(&f, "f/a.csv"), Outcome::Regressed);
        let same = across_platforms(f.clone(), "x86_64-linux-gnu", "x86_64-linux-gnu");
        assert_eq!(outcome(&same, "f/a.csv"), Outcome::Regressed);
        let old = across_platforms(f.clone(), "", "x86_64-linux-gnu");
        assert_eq!(outcome(&old, "f/a.csv"), Outcome::Regressed);
        let other = across_platforms(f, "aarch64-linux-gnu", "x86_64-linux-gnu");
        assert_eq!(outcome(&other, "f/a.csv"), Outcome::OtherPlatform);
        assert!(!Outcome::OtherPlatform.fails());
    }
}
