//! The failure table (`experiments/failures.toml`): for every claim `make reproduce-all` fails,
//! its class and one line of evidence, and which claims are the harness's own checks rather
//! than a paper's statements. Applied to every claim before `claims.csv` is written, so the
//! class and why travel with the verdict. A failure the table does not explain keeps empty
//! `class` and `why` columns; the report lists it as unexplained, `figures explained` exits
//! non-zero on it (CI runs it), and a test holds the table to the committed baseline.

use anyhow::{bail, Context, Result};
use bench_core::claims::{Claim, ClaimKind, FailureClass, SeededClaim, Verdict};
use serde::Deserialize;

pub mod condition;
pub use condition::{ClaimStats, Condition};

/// The table as committed, compiled in so every binary applies the same explanations.
pub const TABLE: &str = include_str!("../../failures.toml");

/// One explained failure.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Explanation {
    /// Claim id or pattern ([`matches`]).
    pub claim: String,
    /// One of the four classes' words ([`FailureClass::word`]).
    pub class: String,
    /// One line of evidence: the mechanism, the paper passage, the setting that flips it,
    /// quoting this run's numbers through placeholders ([`condition::render`]).
    pub why: String,
    /// The mechanism as a condition on this run's numbers for the claim ([`Condition`]): where
    /// it does not hold the failure is unexplained on that run. None: not yet stated as one
    /// (`figures explained` counts these entries apart).
    #[serde(default)]
    pub when: Option<String>,
}

/// What the table says of one failing claim on one run.
#[derive(Debug, Clone, PartialEq)]
pub enum Explained {
    /// No entry names the claim.
    None,
    /// An entry names it and its condition holds (or it states none): class and this run's why.
    Holds(FailureClass, String),
    /// An entry names it but its condition does not hold here: the words for the why column.
    ConditionFails(String),
}

/// Which claims are not the papers' statements, by kind: claim id patterns ([`matches`]). A
/// claim no pattern names is a paper's claim.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kinds {
    /// The harness's own checks ([`ClaimKind::Harness`]).
    pub harness: Vec<String>,
    /// Bounds and theorems the code enforces ([`ClaimKind::Invariant`]): a failure is a bug.
    #[serde(default)]
    pub invariant: Vec<String>,
    /// Checks of our model ([`ClaimKind::Model`]).
    #[serde(default)]
    pub model: Vec<String>,
}

/// `failures.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureTable {
    /// Which claims are not the papers' own, by kind.
    pub kinds: Kinds,
    /// The explained failures.
    #[serde(default)]
    pub failure: Vec<Explanation>,
}

/// Whether claim `id` matches `pattern`: segments split at `/`; `*` matches any one segment,
/// `head*` any segment that starts with `head`, `**` any number of segments (none included);
/// a pattern ending in `/` matches every id under it.
pub fn matches(pattern: &str, id: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('/') {
        return matches(&format!("{prefix}/**"), id) && !matches(prefix, id);
    }
    let p: Vec<&str> = pattern.split('/').collect();
    let i: Vec<&str> = id.split('/').collect();
    segments_match(&p, &i)
}

fn segments_match(p: &[&str], i: &[&str]) -> bool {
    match p.split_first() {
        None => i.is_empty(),
        Some((&"**", rest)) => (0..=i.len()).any(|k| segments_match(rest, &i[k..])),
        Some((head, rest)) => i.split_first().is_some_and(|(first, tail)| {
            let here = match head.strip_suffix('*') {
                Some(h) => first.starts_with(h),
                None => head == first,
            };
            here && segments_match(rest, tail)
        }),
    }
}

impl FailureTable {
    /// Parses and checks a table: every class is one of the four, every why says something,
    /// and no claim is explained twice.
    ///
    /// # Errors
    /// Naming the entry at fault.
    pub fn parse(text: &str) -> Result<Self> {
        let t: FailureTable = toml::from_str(text).context("failures.toml does not parse")?;
        for (k, e) in t.failure.iter().enumerate() {
            if FailureClass::from_word(&e.class).is_none() {
                bail!(
                    "failures.toml entry {} ({}): class {:?} is not one of {:?}",
                    k + 1,
                    e.claim,
                    e.class,
                    FailureClass::ALL.map(FailureClass::word)
                );
            }
            if e.why.trim().len() < 20 {
                bail!(
                    "failures.toml entry {} ({}): the why must give the evidence, not {:?}",
                    k + 1,
                    e.claim,
                    e.why
                );
            }
            if let Some(w) = &e.when {
                Condition::parse(w)
                    .with_context(|| format!("failures.toml entry {} ({})", k + 1, e.claim))?;
            }
            condition::check_placeholders(&e.why)
                .with_context(|| format!("failures.toml entry {} ({})", k + 1, e.claim))?;
            if let Some(j) = t.failure[..k].iter().position(|o| o.claim == e.claim) {
                bail!(
                    "failures.toml entries {} and {} both explain {}",
                    j + 1,
                    k + 1,
                    e.claim
                );
            }
        }
        Ok(t)
    }

    /// The committed table.
    ///
    /// # Panics
    /// When the committed table is malformed (a unit test parses it).
    pub fn committed() -> Self {
        Self::parse(TABLE).expect("experiments/failures.toml is checked by a unit test")
    }

    /// The explanation for claim `id`: the first entry whose pattern matches.
    pub fn explanation(&self, id: &str) -> Option<&Explanation> {
        self.failure.iter().find(|e| matches(&e.claim, id))
    }

    /// The kind of claim `id`: the first of harness, invariant and model check whose patterns
    /// name it, else a paper's claim.
    pub fn kind(&self, id: &str) -> ClaimKind {
        let named = |patterns: &[String]| patterns.iter().any(|p| matches(p, id));
        if named(&self.kinds.harness) {
            ClaimKind::Harness
        } else if named(&self.kinds.invariant) {
            ClaimKind::Invariant
        } else if named(&self.kinds.model) {
            ClaimKind::Model
        } else {
            ClaimKind::Paper
        }
    }

    /// What the table says of failing claim `id` given this run's `stats` of it.
    pub fn judge(&self, id: &str, stats: &ClaimStats) -> Explained {
        let Some(e) = self.explanation(id) else {
            return Explained::None;
        };
        let class = FailureClass::from_word(&e.class).expect("checked by parse");
        match e.when.as_deref().map(|w| Condition::parse(w).expect("checked by parse")) {
            Some(c) if !c.holds(stats) => Explained::ConditionFails(format!(
                "unexplained: experiments/failures.toml's {} entry for it says {}, but its condition {} does not hold on this run",
                e.class,
                condition::render(e.why.trim(), stats),
                c.describe(stats)
            )),
            _ => Explained::Holds(class, condition::render(e.why.trim(), stats)),
        }
    }

    /// The class and why a failing claim gets from [`Self::judge`]: None where no entry names
    /// it; no class (unexplained) where its entry's condition does not hold.
    fn class_and_why(
        &self,
        id: &str,
        stats: &ClaimStats,
    ) -> Option<(Option<FailureClass>, String)> {
        match self.judge(id, stats) {
            Explained::Holds(class, why) => Some((Some(class), why)),
            Explained::ConditionFails(why) => Some((None, why)),
            Explained::None => None,
        }
    }

    /// `claim` (one seed's) with its kind and, when it fails, its class and why. A failing
    /// invariant is a bug, never explained away: it keeps empty class and why, so `figures
    /// explained` (and CI) fails on it.
    pub fn apply(&self, claim: Claim) -> Claim {
        let kind = self.kind(&claim.claim_id);
        let mut claim = claim.of_kind(kind);
        if claim.kind == ClaimKind::Invariant || claim.verdict != Verdict::Fail {
            return claim;
        }
        let stats = ClaimStats {
            median: claim.value,
            min: claim.value,
            max: claim.value,
            passes: 0,
            seeds: 1,
        };
        if let Some((class, why)) = self.class_and_why(&claim.claim_id, &stats) {
            (claim.class, claim.why) = (class, why);
        }
        claim
    }

    /// An aggregate over seeds with its class and why decided on the aggregate's own numbers
    /// (the per-seed claims' explanations are replaced).
    pub fn apply_seeded(&self, mut claim: SeededClaim) -> SeededClaim {
        claim.class = None;
        claim.why.clear();
        if claim.kind == ClaimKind::Invariant || claim.verdict != Verdict::Fail {
            return claim;
        }
        let stats = ClaimStats {
            median: claim.median,
            min: claim.min,
            max: claim.max,
            passes: claim.passes,
            seeds: claim.seeds,
        };
        if let Some((class, why)) = self.class_and_why(&claim.claim_id, &stats) {
            (claim.class, claim.why) = (class, why);
        }
        claim
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::claims::Verdict;

    #[test]
    fn patterns() {
        assert!(matches("a/b/c", "a/b/c"));
        assert!(!matches("a/b/c", "a/b/d"));
        assert!(matches("a/*/c", "a/sim/c"));
        assert!(!matches("a/*/c", "a/sim/x/c"));
        assert!(matches("a/torn-*", "a/torn-order-agrees"));
        assert!(!matches("a/torn-*", "a/order-torn"));
        assert!(matches("sim-validation/", "sim-validation/x"));
        assert!(matches(
            "hop-table1/*/",
            "hop-table1/notify-ack/ring-8/bound-reached"
        ));
        assert!(!matches("sim-validation/", "sim-validation"));
        assert!(!matches("sim-validation/", "sim-validationx/y"));
        assert!(matches(
            "**/best-run-near-*",
            "hop-fig12/ring-16/best-run-near-optimum"
        ));
        assert!(matches(
            "**/best-run-near-*",
            "hop-fig13/best-run-near-optimum"
        ));
        assert!(!matches(
            "**/best-run-near-*",
            "hop-fig13/best-run-near-optimum/x"
        ));
        assert!(matches(
            "essp-fig2-staleness/**/ssp-bound-*",
            "essp-fig2-staleness/sim/ssp-bound-s3"
        ));
        assert!(!matches("a/**/c", "a/b/d"));
    }

    #[test]
    fn the_committed_table_parses() {
        let t = FailureTable::committed();
        assert!(!t.failure.is_empty() && !t.kinds.harness.is_empty());
        assert!(!t.kinds.invariant.is_empty() && !t.kinds.model.is_empty());
    }

    #[test]
    fn applies_class_and_kind() {
        let t = FailureTable::parse(
            r#"
[kinds]
harness = ["sim-validation/"]
invariant = ["f/*/bound"]
[[failure]]
claim = "f/*/bound"
class = "model differs"
why = "an invariant is never explained away"
[[failure]]
claim = "f/*/x"
class = "model differs"
why = "the paper's system does y; ours does z"
"#,
        )
        .unwrap();
        let c = t.apply(Claim::check("f/sim/x", "s", "p", "m", false));
        assert_eq!(c.class, Some(FailureClass::ModelDiffers));
        assert_eq!(c.kind, ClaimKind::Paper);
        let c = t.apply(Claim::check("sim-validation/y", "s", "p", "m", false));
        assert_eq!((c.kind, c.class), (ClaimKind::Harness, None));
        let c = t.apply(Claim::check("f/sim/x", "s", "p", "m", true));
        assert_eq!((c.verdict, c.class), (Verdict::Pass, None));
        let c = t.apply(Claim::check("f/sim/bound", "s", "p", "m", false));
        assert_eq!(
            (c.kind, c.class, c.why.as_str()),
            (ClaimKind::Invariant, None, "")
        );
    }

    #[test]
    fn bad_tables_are_named() {
        let bad_class = "[kinds]\nharness = []\n[[failure]]\nclaim = \"a\"\nclass = \"tuned\"\nwhy = \"long enough evidence here\"\n";
        let e = FailureTable::parse(bad_class).unwrap_err().to_string();
        assert!(e.contains("entry 1 (a)") && e.contains("tuned"), "{e}");
        let twice = "[kinds]\nharness = []\n[[failure]]\nclaim = \"a\"\nclass = \"model differs\"\nwhy = \"long enough evidence here\"\n[[failure]]\nclaim = \"a\"\nclass = \"model differs\"\nwhy = \"long enough evidence here\"\n";
        let e = FailureTable::parse(twice).unwrap_err().to_string();
        assert!(e.contains("entries 1 and 2"), "{e}");
        let short = "[kinds]\nharness = []\n[[failure]]\nclaim = \"a\"\nclass = \"model differs\"\nwhy = \"fails\"\n";
        assert!(FailureTable::parse(short).is_err());
    }

    /// A condition is checked against the run's own numbers: it explains the failure where it
    /// holds, quoting them, and leaves it unexplained (no class, a why that says so) where not.
    #[test]
    fn conditions_are_checked_on_each_runs_numbers() {
        let t = FailureTable::parse(
            r#"
[kinds]
harness = []
[[failure]]
claim = "f/x"
class = "not reproduced"
when = "min > 1.05"
why = "ours takes {median}x theirs ({min}-{max}, {fails} of {seeds} seeds fail)"
"#,
        )
        .unwrap();
        let c = Claim::check("f/x", "s", "p", "m", false).with_value(1.2);
        let c = t.apply(c);
        assert_eq!(c.class, Some(FailureClass::NotReproduced));
        assert_eq!(
            c.why,
            "ours takes 1.200x theirs (1.200-1.200, 1 of 1 seeds fail)"
        );
        let c = t.apply(Claim::check("f/x", "s", "p", "m", false).with_value(1.01));
        assert_eq!(c.class, None);
        assert!(
            c.why.starts_with("unexplained:") && c.why.contains("`min > 1.05` (min 1.010)"),
            "{}",
            c.why
        );
        let per_seed = |v: f64| vec![Claim::check("f/x", "s", "p", "m", false).with_value(v)];
        let agg = |vals: &[f64]| {
            let seeds: Vec<(u64, Vec<Claim>)> = vals
                .iter()
                .enumerate()
                .map(|(k, &v)| (k as u64 + 1, per_seed(v)))
                .collect();
            let mut a = bench_core::claims::across_seeds(&seeds);
            t.apply_seeded(a.remove(0))
        };
        let a = agg(&[1.1, 1.2, 1.3]);
        assert_eq!(a.class, Some(FailureClass::NotReproduced));
        assert_eq!(
            a.why,
            "ours takes 1.200x theirs (1.100-1.300, 3 of 3 seeds fail)"
        );
        let a = agg(&[1.0, 1.2, 1.3]);
        assert_eq!(a.class, None, "one seed outside the condition: unexplained");
        assert!(a.why.contains("does not hold on this run"), "{}", a.why);
        let bad = "[kinds]\nharness = []\n[[failure]]\nclaim = \"a\"\nclass = \"model differs\"\nwhen = \"mean > 1\"\nwhy = \"long enough evidence here\"\n";
        let e = format!("{:#}", FailureTable::parse(bad).unwrap_err());
        assert!(e.contains("entry 1 (a)") && e.contains("\"mean\""), "{e}");
    }
}
