//! The failure table (`experiments/failures.toml`): for every claim `make reproduce-all` fails,
//! its class and one line of evidence, and which claims are the harness's own checks rather
//! than a paper's statements. Applied to every claim before `claims.csv` is written, so the
//! class and why travel with the verdict. A failure the table does not explain keeps empty
//! `class` and `why` columns; the report lists it as unexplained, `figures explained` exits
//! non-zero on it (CI runs it), and a test holds the table to the committed baseline.

use anyhow::{bail, Context, Result};
use bench_core::claims::{Claim, FailureClass};
use serde::Deserialize;

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
    /// One line of evidence: the numbers, the paper passage, the setting that flips it.
    pub why: String,
}

/// The harness's own checks: claim id patterns.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessChecks {
    /// Claim id patterns ([`matches`]).
    pub claims: Vec<String>,
}

/// `failures.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureTable {
    /// Which claims are the harness's own checks.
    pub harness: HarnessChecks,
    /// The explained failures.
    #[serde(default)]
    pub failure: Vec<Explanation>,
}

/// Whether claim `id` matches `pattern`: segments split at `/`; `*` matches any one segment and
/// `head*` any segment that starts with `head`; a pattern ending in `/` matches every id under
/// it.
pub fn matches(pattern: &str, id: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('/') {
        let n = prefix.split('/').count();
        let head: Vec<&str> = id.split('/').take(n).collect();
        return id.split('/').count() > n && matches(prefix, &head.join("/"));
    }
    let (p, i): (Vec<&str>, Vec<&str>) = (pattern.split('/').collect(), id.split('/').collect());
    p.len() == i.len()
        && p.iter().zip(&i).all(|(p, i)| match p.strip_suffix('*') {
            Some(head) => i.starts_with(head),
            None => p == i,
        })
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

    /// Whether claim `id` is the harness's own check.
    pub fn is_harness(&self, id: &str) -> bool {
        self.harness.claims.iter().any(|p| matches(p, id))
    }

    /// `claim` with its kind and, when it fails, its class and why.
    pub fn apply(&self, claim: Claim) -> Claim {
        let claim = if self.is_harness(&claim.claim_id) {
            claim.harness()
        } else {
            claim
        };
        match self.explanation(&claim.claim_id) {
            Some(e) => {
                let class = FailureClass::from_word(&e.class).expect("checked by parse");
                claim.explained(class, e.why.trim())
            }
            None => claim,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::claims::{ClaimKind, Verdict};

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
    }

    #[test]
    fn the_committed_table_parses() {
        let t = FailureTable::committed();
        assert!(!t.failure.is_empty() && !t.harness.claims.is_empty());
    }

    #[test]
    fn applies_class_and_kind() {
        let t = FailureTable::parse(
            r#"
[harness]
claims = ["sim-validation/"]
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
    }

    #[test]
    fn bad_tables_are_named() {
        let bad_class = "[harness]\nclaims = []\n[[failure]]\nclaim = \"a\"\nclass = \"tuned\"\nwhy = \"long enough evidence here\"\n";
        let e = FailureTable::parse(bad_class).unwrap_err().to_string();
        assert!(e.contains("entry 1 (a)") && e.contains("tuned"), "{e}");
        let twice = "[harness]\nclaims = []\n[[failure]]\nclaim = \"a\"\nclass = \"model differs\"\nwhy = \"long enough evidence here\"\n[[failure]]\nclaim = \"a\"\nclass = \"model differs\"\nwhy = \"long enough evidence here\"\n";
        let e = FailureTable::parse(twice).unwrap_err().to_string();
        assert!(e.contains("entries 1 and 2"), "{e}");
        let short = "[harness]\nclaims = []\n[[failure]]\nclaim = \"a\"\nclass = \"model differs\"\nwhy = \"fails\"\n";
        assert!(FailureTable::parse(short).is_err());
    }
}
