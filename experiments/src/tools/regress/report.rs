//! The outputs of a comparison: the terminal table, `regress.json`, `regress.md` (for a CI step
//! summary or a pull-request comment) and a history line.

use super::baseline::Baseline;
use super::compare::{Finding, Outcome};
use anyhow::Result;
use serde::Serialize;
use std::fmt::Write;

/// A comparison's findings with what they were compared against.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The baseline's testbed.
    pub testbed: String,
    /// The baseline's revision.
    pub baseline_revision: String,
    /// The compared results' revision (from their manifests).
    pub revision: String,
    /// Whether absolute numbers gate this comparison (this machine's fingerprint matches the
    /// baseline's, the baseline was accepted with `--absolute gate`, and no `--absolute info`).
    pub same_testbed: bool,
    /// When the baseline was taken on another numeric platform than this machine's: both, as
    /// a sentence (then changed sim bytes are the platform's, not the code's).
    pub platform: Option<String>,
    /// Every finding, most severe first.
    pub findings: Vec<Finding>,
}

impl Report {
    /// A report of `findings` of the results `now` against `base`; `same_testbed`: whether
    /// absolute numbers gated.
    pub fn new(
        base: &Baseline,
        now: &super::snapshot::Snapshot,
        same_testbed: bool,
        findings: Vec<Finding>,
    ) -> Report {
        Report {
            testbed: base.testbed.clone(),
            baseline_revision: base.revision.clone(),
            revision: now.revision(),
            same_testbed,
            platform: None,
            findings,
        }
    }

    /// The same, saying that the baseline's numeric platform `base` is not this machine's
    /// `here` when they differ (an old baseline without one says nothing).
    pub fn on_platforms(mut self, base: &str, here: &str) -> Report {
        if !base.is_empty() && base != here {
            self.platform = Some(format!(
                "the baseline was taken on numeric platform {base}, this machine is {here}: changed sim bytes there are the platform's (other platform), not the code's"
            ));
        }
        self
    }

    /// The findings worth a row, counted per figure (a metric's first path segment: the
    /// figure of an exact-tier file or a claim id) and outcome, figures in order.
    pub fn by_figure(&self) -> Vec<(String, Vec<(&'static str, usize)>)> {
        let mut m: std::collections::BTreeMap<String, std::collections::BTreeMap<Outcome, usize>> =
            Default::default();
        for f in self.listed() {
            let figure = f.metric.split('/').next().unwrap_or(&f.metric).to_string();
            *m.entry(figure).or_default().entry(f.outcome).or_default() += 1;
        }
        m.into_iter()
            .map(|(fig, counts)| {
                let counts = counts
                    .into_iter()
                    .map(|(o, n)| (outcome_word(o), n))
                    .collect();
                (fig, counts)
            })
            .collect()
    }

    /// One line per figure with findings: `figure: 12 changed, 1 REGRESSED`.
    fn figure_lines(&self) -> Vec<String> {
        self.by_figure()
            .into_iter()
            .map(|(fig, counts)| {
                let c: Vec<String> = counts.iter().map(|(o, n)| format!("{n} {o}")).collect();
                format!("{fig}: {}", c.join(", "))
            })
            .collect()
    }

    /// How many findings have `outcome`.
    pub fn count(&self, outcome: Outcome) -> usize {
        self.findings
            .iter()
            .filter(|f| f.outcome == outcome)
            .count()
    }

    /// One line: regressed or not, with the counts.
    pub fn verdict(&self) -> String {
        let r = self.count(Outcome::Regressed);
        format!(
            "{}: {r} regressed, {} noisy, {} improved, {} changed, {} other platform, {} new, {} removed, {} for information, {} unchanged",
            if r > 0 {
                "REGRESSED"
            } else if self.count(Outcome::Noisy) > 0 {
                "noisy"
            } else {
                "ok"
            },
            self.count(Outcome::Noisy),
            self.count(Outcome::Improved),
            self.count(Outcome::Changed),
            self.count(Outcome::OtherPlatform),
            self.count(Outcome::New),
            self.count(Outcome::Removed),
            self.count(Outcome::Info),
            self.count(Outcome::Same)
        )
    }

    /// The findings worth a row: unchanged metrics are only counted.
    fn listed(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.outcome != Outcome::Same)
    }

    /// The terminal table: every finding that is not unchanged, then the verdict line.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "regress against {} (baseline {}, now {}){}",
            self.testbed,
            self.baseline_revision,
            self.revision,
            if self.same_testbed {
                ""
            } else {
                "; absolute numbers do not gate here (another fingerprint, or --absolute info)"
            }
        );
        if let Some(p) = &self.platform {
            let _ = writeln!(s, "platform: {p}");
        }
        let lines = self.figure_lines();
        if !lines.is_empty() {
            let _ = writeln!(s, "by figure:");
            for l in &lines {
                let _ = writeln!(s, "  {l}");
            }
        }
        let _ = writeln!(
            s,
            "{:<10} {:<8} {:<60} {:<22} {:<22} {:>7} {:>7}  note",
            "verdict", "tier", "metric", "baseline", "now", "ratio", "p"
        );
        for f in self.listed() {
            let _ = writeln!(
                s,
                "{:<10} {:<8} {:<60} {:<22} {:<22} {:>7} {:>7}  {}",
                outcome_word(f.outcome),
                tier_word(f),
                f.metric,
                f.baseline,
                f.now,
                f.change.map_or(String::new(), |c| format!("{c:.3}")),
                f.p_value.map_or(String::new(), |p| format!("{p:.3}")),
                f.note
            );
        }
        let _ = writeln!(s, "{}", self.verdict());
        s
    }

    /// `regress.json`.
    ///
    /// # Errors
    /// Never in practice (serialisation of plain data).
    pub fn json(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(self)? + "\n")
    }

    /// `regress.md`.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "## syncbench regress: {}\n\nAgainst testbed `{}` (baseline `{}`, now `{}`).\n\n",
            self.verdict(),
            self.testbed,
            self.baseline_revision,
            self.revision
        );
        if let Some(p) = &self.platform {
            let _ = writeln!(s, "Platform: {p}.\n");
        }
        if self.findings.iter().all(|f| f.outcome == Outcome::Same) {
            s.push_str("Every sim CSV, claim, bound and measured metric is as in the baseline.\n");
            return s;
        }
        s.push_str("By figure:\n\n");
        for l in self.figure_lines() {
            let _ = writeln!(s, "- {l}");
        }
        s.push('\n');
        s.push_str(
            "| verdict | tier | metric | baseline | now | ratio | p | note |\n|---|---|---|---|---|---|---|---|\n",
        );
        for f in self.listed() {
            let _ = writeln!(
                s,
                "| {} | {} | `{}` | {} | {} | {} | {} | {} |",
                outcome_word(f.outcome),
                tier_word(f),
                f.metric,
                f.baseline,
                f.now,
                f.change.map_or(String::new(), |c| format!("{c:.3}")),
                f.p_value.map_or(String::new(), |p| format!("{p:.3}")),
                f.note
            );
        }
        s
    }

    /// One JSON line for the history file.
    ///
    /// # Errors
    /// Never in practice.
    pub fn history_line(&self, testbed: &str) -> Result<String> {
        Ok(serde_json::to_string(&serde_json::json!({
            "revision": self.revision,
            "testbed": testbed,
            "baseline_revision": self.baseline_revision,
            "regressed": self.count(Outcome::Regressed),
            "noisy": self.count(Outcome::Noisy),
            "improved": self.count(Outcome::Improved),
            "changed": self.count(Outcome::Changed),
            "other_platform": self.count(Outcome::OtherPlatform),
            "new": self.count(Outcome::New),
            "removed": self.count(Outcome::Removed),
            "info": self.count(Outcome::Info),
            "unchanged": self.count(Outcome::Same),
        }))?)
    }
}

fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Regressed => "REGRESSED",
        Outcome::Noisy => "noisy",
        Outcome::Removed => "removed",
        Outcome::New => "new",
        Outcome::Improved => "improved",
        Outcome::Changed => "changed",
        Outcome::OtherPlatform => "other platform",
        Outcome::Info => "info",
        Outcome::Same => "same",
    }
}

fn tier_word(f: &Finding) -> &'static str {
    match f.tier {
        super::compare::Tier::Figures => "figures",
        super::compare::Tier::Exact => "exact",
        super::compare::Tier::Claims => "claims",
        super::compare::Tier::Bounds => "bounds",
        super::compare::Tier::Ratio => "ratio",
        super::compare::Tier::Absolute => "absolute",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::regress::compare::Tier;

    fn report(findings: Vec<Finding>) -> Report {
        Report {
            testbed: "t".into(),
            baseline_revision: "a".into(),
            revision: "b".into(),
            same_testbed: false,
            platform: None,
            findings,
        }
    }

    #[test]
    fn findings_are_counted_by_figure_and_another_platform_is_said() {
        let f = |metric: &str, outcome| {
            Finding::plain(Tier::Exact, metric.into(), "x".into(), "y".into(), outcome)
        };
        let rep = report(vec![
            f("asap-fig8/curves.csv", Outcome::Regressed),
            f("asap-fig8/summary.csv", Outcome::Regressed),
            f("asap-fig8/claims.csv", Outcome::Noisy),
            f("dssp-fig3/curves.csv", Outcome::OtherPlatform),
            f("hop-fig12/curves.csv", Outcome::Same),
        ])
        .on_platforms("x86_64-linux-gnu", "aarch64-linux-gnu");
        assert_eq!(
            rep.figure_lines(),
            [
                "asap-fig8: 2 REGRESSED, 1 noisy",
                "dssp-fig3: 1 other platform"
            ],
            "an unchanged figure is not listed"
        );
        let table = rep.table();
        assert!(table.contains("platform: the baseline was taken on numeric platform x86_64-linux-gnu, this machine is aarch64-linux-gnu"), "{table}");
        assert!(
            table.contains("by figure:\n  asap-fig8: 2 REGRESSED, 1 noisy\n"),
            "{table}"
        );
        let md = rep.markdown();
        assert!(md.contains("- dssp-fig3: 1 other platform"), "{md}");
        // The same platform, or a baseline that names none, says nothing.
        assert!(report(vec![]).on_platforms("", "x").platform.is_none());
        assert!(report(vec![]).on_platforms("x", "x").platform.is_none());
    }
}
