//! REPORT.md's front page: what ran (the figures, scale, seeds, revision, machine, time), the
//! papers' claims by paper with a link to each paper's figures, and one line per figure with its
//! verdict counts. It opens the report so that a reader has the answer before the details.

use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The verdict words of `claims.csv`, in the order counts are kept.
pub const VERDICTS: [&str; 5] = ["pass", "fail", "undecided", "not exercised", "n.a."];

/// The papers by the prefix of their figures' ids, with the heading the report gives them and
/// their titles (docs/papers.md names authors and venues); the harness's own studies last.
const PAPERS: [(&str, &str, &str); 6] = [
    (
        "asap-",
        "ASAP",
        "ASAP: Asynchronous Approximate Data-parallel Computation (Kadav, Kruus)",
    ),
    (
        "essp-",
        "ESSP",
        "High-Performance Distributed ML at Scale through Parameter Server Consistency Models (Dai et al., AAAI 2015)",
    ),
    (
        "async-",
        "ASYNC",
        "ASYNC: Asynchronous Machine Learning on Distributed Systems (Soori, Can, Gurbuzbalaban, Dehnavi)",
    ),
    (
        "hop-",
        "Hop",
        "Hop: Heterogeneity-aware Decentralized Training (Luo, Zhuo, Lin, Qian, ASPLOS '19)",
    ),
    (
        "dssp-",
        "DSSP",
        "Dynamic Stale Synchronous Parallel Distributed Training for Deep Learning (Zhao, An, Chen, Liu)",
    ),
    (
        "",
        "Harness studies",
        "syncbench's own studies: every mode on one workload, the simulator against measured runs, scale",
    ),
];

/// One figure with results: its verdict counts by claim kind (rows in the headline's kind
/// order, columns in [`VERDICTS`]' order) and what its manifest says about the run.
#[derive(Debug, Clone)]
pub struct FigureRun {
    /// Figure id.
    pub id: &'static str,
    /// Title.
    pub title: &'static str,
    /// Claims by kind and verdict.
    pub counts: [[usize; 5]; 4],
    /// The seeds it ran (the first seed's, and every one under `seeds/`), ascending.
    pub seeds: Vec<u64>,
    /// Its manifest, where it could be read.
    pub manifest: Option<serde_json::Value>,
}

impl FigureRun {
    /// A text field of the manifest (`?` where missing).
    pub fn field(&self, path: &[&str]) -> String {
        let mut v = self.manifest.as_ref();
        for p in path {
            v = v.and_then(|m| m.get(*p));
        }
        match v {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(serde_json::Value::Null) | None => "?".into(),
            Some(other) => other.to_string(),
        }
    }

    fn wall_seconds(&self) -> f64 {
        self.manifest
            .as_ref()
            .and_then(|m| m["wall_seconds"].as_f64())
            .unwrap_or(0.0)
    }
}

/// The index into [`PAPERS`] of the paper figure `id` belongs to.
fn paper_of(id: &str) -> usize {
    PAPERS
        .iter()
        .position(|(prefix, _, _)| !prefix.is_empty() && id.starts_with(prefix))
        .unwrap_or(PAPERS.len() - 1)
}

/// The heading anchor a paper's section gets (GitHub's and the HTML report's rule).
pub fn paper_anchor(i: usize) -> String {
    crate::html::slug(PAPERS[i].1)
}

/// `3 pass, 1 fail`: the non-zero counts of `row` in [`VERDICTS`]' order (`none` when all are
/// zero).
fn nonzero(row: &[usize; 5]) -> String {
    let parts: Vec<String> = row
        .iter()
        .zip(VERDICTS)
        .filter(|(n, _)| **n > 0)
        .map(|(n, w)| format!("{n} {w}"))
        .collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

fn add(a: &mut [usize; 5], b: &[usize; 5]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// The distinct values of `f` over `runs`, joined (`?` left out where others are known).
fn distinct(runs: &[FigureRun], f: impl Fn(&FigureRun) -> String) -> String {
    let all: BTreeSet<String> = runs.iter().map(f).collect();
    let known: Vec<&String> = all.iter().filter(|v| v.as_str() != "?").collect();
    if known.is_empty() {
        "?".into()
    } else {
        known
            .iter()
            .map(|v| v.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `1-3`, or `1-3, 5`: a sorted list of seeds as ranges.
pub fn seed_span(seeds: &[u64]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < seeds.len() {
        let mut j = i;
        while j + 1 < seeds.len() && seeds[j + 1] == seeds[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            seeds[i].to_string()
        } else {
            format!("{}-{}", seeds[i], seeds[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// The front page: what ran, then the papers' claims by paper, then one line per figure under
/// its paper. `not_run` names the catalogue's figures without results.
pub fn write(out: &mut String, runs: &[FigureRun], not_run: &[&str]) -> std::fmt::Result {
    writeln!(out, "## What ran\n\n| | |\n|---|---|")?;
    writeln!(
        out,
        "| figures | {} with results{} |",
        runs.len(),
        if not_run.is_empty() {
            String::new()
        } else {
            format!("; not run: {}", not_run.join(", "))
        }
    )?;
    writeln!(
        out,
        "| scale | {} |",
        distinct(runs, |r| r.field(&["scale"]))
    )?;
    // Seeds: the usual span, and the figures that ran further seeds to decide a claim.
    let mut spans: Vec<(String, Vec<&str>)> = Vec::new();
    for r in runs {
        let span = seed_span(&r.seeds);
        match spans.iter_mut().find(|(s, _)| *s == span) {
            Some((_, ids)) => ids.push(r.id),
            None => spans.push((span, vec![r.id])),
        }
    }
    spans.sort_by_key(|(_, ids)| std::cmp::Reverse(ids.len()));
    let seeds = spans
        .iter()
        .enumerate()
        .map(|(i, (span, ids))| {
            if i == 0 {
                let n = ids.len();
                format!("{span} ({n} figure{})", if n == 1 { "" } else { "s" })
            } else {
                format!("{span} ({})", ids.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join("; ");
    writeln!(
        out,
        "| seeds | {seeds}; a figure runs further seeds where a claim's seeds disagree |"
    )?;
    // A figure that ran several drivers names them joined by commas.
    let drivers: BTreeSet<String> = runs
        .iter()
        .flat_map(|r| {
            r.field(&["driver"])
                .split(',')
                .map(|d| d.trim().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|d| d != "?")
        .collect();
    writeln!(
        out,
        "| drivers | {} |",
        drivers.into_iter().collect::<Vec<_>>().join(", ")
    )?;
    writeln!(
        out,
        "| revision | `{}` |",
        distinct(runs, |r| r.field(&["git_revision"]))
    )?;
    writeln!(
        out,
        "| machine | host `{}`: {}; numeric platform `{}`; CNN kernels at `{}` |",
        distinct(runs, |r| r.field(&["host"])),
        distinct(runs, |r| r.field(&["cpu"])),
        distinct(runs, |r| r.field(&["versions", "numeric_platform"])),
        distinct(runs, |r| r.field(&["versions", "cnn_cpu_level"])),
    )?;
    let started = runs
        .iter()
        .map(|r| r.field(&["started_utc"]))
        .filter(|s| s != "?")
        .min()
        .unwrap_or_else(|| "?".into());
    let seconds: f64 = runs.iter().map(FigureRun::wall_seconds).sum();
    writeln!(
        out,
        "| time | started {started}; the figures' runs took {seconds:.0} s in all (`make reproduce-all` runs two at a time) |\n"
    )?;
    // The papers' claims by paper, the other kinds beside them.
    writeln!(
        out,
        "## By paper\n\nThe papers' claims by verdict; the other kinds (below) as checks passed of all.\n\n\
         | paper | figures | pass | fail | undecided | not exercised | n.a. | other checks passing |\n\
         |---|---|---|---|---|---|---|---|"
    )?;
    let mut lines = String::new();
    for (i, (_, name, title)) in PAPERS.iter().enumerate() {
        let of: Vec<&FigureRun> = runs.iter().filter(|r| paper_of(r.id) == i).collect();
        if of.is_empty() {
            continue;
        }
        let (mut paper, mut other) = ([0usize; 5], [0usize; 5]);
        for r in &of {
            add(&mut paper, &r.counts[0]);
            for k in &r.counts[1..] {
                add(&mut other, k);
            }
        }
        writeln!(
            out,
            "| [{name}](#{}) | {} | {} | {} | {} | {} | {} | {} of {} |",
            paper_anchor(i),
            of.len(),
            paper[0],
            paper[1],
            paper[2],
            paper[3],
            paper[4],
            other[0],
            other.iter().sum::<usize>()
        )?;
        writeln!(lines, "### {name}\n\n_{title}_\n")?;
        for r in of {
            let others: [usize; 5] = r.counts[1..].iter().fold([0; 5], |mut a, k| {
                add(&mut a, k);
                a
            });
            let other_total: usize = others.iter().sum();
            writeln!(
                lines,
                "- [{id}](#{anchor}): {}{} — {}",
                if r.counts[0].iter().sum::<usize>() == 0 {
                    "no claim of the paper's own".to_string()
                } else {
                    nonzero(&r.counts[0])
                },
                if other_total > 0 {
                    format!("; other checks {}", nonzero(&others))
                } else {
                    String::new()
                },
                r.title,
                id = r.id,
                anchor = crate::html::slug(r.id)
            )?;
        }
        writeln!(lines)?;
    }
    writeln!(
        out,
        "\n## By figure\n\nEach figure's claims, the papers' first.\n"
    )?;
    out.push_str(&lines);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_as_ranges_and_figures_by_paper() {
        assert_eq!(seed_span(&[1, 2, 3]), "1-3");
        assert_eq!(seed_span(&[1, 2, 3, 5]), "1-3, 5");
        assert_eq!(seed_span(&[4]), "4");
        assert_eq!(seed_span(&[]), "");
        assert_eq!(PAPERS[paper_of("hop-fig12-cnn")].1, "Hop");
        assert_eq!(PAPERS[paper_of("mode-matrix")].1, "Harness studies");
        assert_eq!(paper_anchor(paper_of("mode-matrix")), "harness-studies");
        assert_eq!(nonzero(&[2, 0, 1, 0, 0]), "2 pass, 1 undecided");
        assert_eq!(nonzero(&[0; 5]), "none");
    }
}
