//! `results/REPORT.md`: every figure with its picture, the paper's result beside the measured
//! claims, and every claim's verdict.

use crate::figs;
use crate::front_page::{self, FigureRun, VERDICTS};
use crate::table::Table;
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The claim kinds (`claims.csv`'s `kind` words, bench-core's `ClaimKind`) in headline order,
/// with the headline's name for each.
const KINDS: [(&str, &str); 4] = [
    ("paper", "the papers' claims"),
    ("harness", "the harness's checks"),
    ("invariant", "invariants"),
    ("model check", "model checks"),
];

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The figure's `sensitivity.csv` as one row per claim: at how many of the grid's settings it
/// passes, its verdict at the headline setting, and whether the verdict holds over the grid.
/// The grid runs on the first seed only, so a claim whose seeds disagree (`seed_passes`: claim
/// id to passes and seeds, from claims.csv) is not called robust either: the grid cannot see
/// what another seed flips.
fn sensitivity(
    body: &mut String,
    path: &Path,
    seed_passes: &std::collections::HashMap<String, (u64, u64)>,
) -> Result<()> {
    let t = Table::read(path)?;
    let mut order: Vec<String> = Vec::new();
    let mut per: std::collections::HashMap<String, (usize, usize, String, Vec<String>)> =
        std::collections::HashMap::new();
    for i in 0..t.len() {
        let id = t.str(i, "claim_id")?.to_string();
        let e = per.entry(id.clone()).or_insert_with(|| {
            order.push(id);
            (0, 0, String::new(), Vec::new())
        });
        e.1 += 1;
        if t.str(i, "verdict")? == "pass" {
            e.0 += 1;
            e.3.push(t.str(i, "setting")?.to_string());
        }
        if t.str(i, "headline")? == "true" {
            e.2 = t.str(i, "verdict")?.to_string();
        }
    }
    writeln!(
        body,
        "**Sensitivity** (`sensitivity.csv`: the claims re-derived over a grid of modelling knobs, first seed; robust only where the verdict holds over the grid and every seed agrees):\n\n| claim | passes at | headline | seeds passing | robust | settings where it passes |\n|---|---|---|---|---|---|"
    )?;
    for id in &order {
        let (passes, total, headline, at) = &per[id];
        let over_grid = *passes == 0 || passes == total;
        let seeds = seed_passes.get(id);
        let seeds_agree = seeds.is_none_or(|&(p, n)| p == 0 || p == n);
        writeln!(
            body,
            "| `{}` | {passes}/{total} | {} | {} | {} | {} |",
            md_escape(id),
            if headline.is_empty() { "-" } else { headline },
            seeds.map_or("-".to_string(), |(p, n)| format!("{p}/{n}")),
            match (over_grid, seeds_agree) {
                (true, true) => "yes",
                (true, false) => "**no** (seeds split)",
                _ => "**no**",
            },
            if over_grid {
                String::new()
            } else {
                md_escape(&at.join("; "))
            }
        )?;
    }
    writeln!(body)?;
    Ok(())
}

/// The seeds a figure's results hold: the first seed's (its manifest) and every one under
/// `seeds/`, ascending.
fn seeds_of(dir: &Path, manifest: Option<&serde_json::Value>) -> Vec<u64> {
    let mut seeds: Vec<u64> = std::fs::read_dir(dir.join("seeds"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    if let Some(first) = manifest.and_then(|m| m["seed"].as_u64()) {
        seeds.push(first);
    }
    seeds.sort_unstable();
    seeds.dedup();
    seeds
}

/// Writes the report (and, with `html`, REPORT.html beside it) and returns its path.
///
/// # Errors
/// A claims.csv that cannot be read, or the report that cannot be written.
pub fn write(results: &Path, html: bool) -> Result<PathBuf> {
    // Benchmarks are reported only when they ran (they are not part of reproduce-all).
    let benches = figs::BENCHES
        .iter()
        .filter(|f| results.join(f.id).join("claims.csv").exists());
    let mut runs: Vec<(FigureRun, Table)> = Vec::new();
    let mut not_run = Vec::new();
    for f in figs::ALL.iter().chain(benches) {
        let dir = results.join(f.id);
        let claims_path = dir.join("claims.csv");
        if !claims_path.exists() {
            not_run.push(f.id);
            continue;
        }
        let t = Table::read(&claims_path).with_context(|| format!("claims of {}", f.id))?;
        // Pass, fail, undecided, not exercised and n.a. by the claim's kind (the `kind`
        // column, `paper` when an older claims.csv has none), in KINDS' order.
        let mut counts = [[0usize; 5]; KINDS.len()];
        for i in 0..t.len() {
            let verdict = t.str(i, "verdict")?;
            let slot = VERDICTS.iter().position(|v| *v == verdict).unwrap_or(4);
            let kind = if t.has("kind") {
                t.str(i, "kind")?
            } else {
                "paper"
            };
            let k = KINDS.iter().position(|(w, _)| *w == kind).unwrap_or(0);
            counts[k][slot] += 1;
        }
        let manifest = std::fs::read_to_string(dir.join("manifest.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
        let seeds = seeds_of(&dir, manifest.as_ref());
        runs.push((
            FigureRun {
                id: f.id,
                title: f.title,
                counts,
                seeds,
                manifest,
            },
            t,
        ));
    }
    let mut body = String::from("# The figures in detail\n\n");
    for f in figs::ALL.iter().chain(figs::BENCHES) {
        let Some((run, t)) = runs.iter().find(|(r, _)| r.id == f.id) else {
            if figs::ALL.iter().any(|a| a.id == f.id) {
                writeln!(
                    body,
                    "## {}\n\n_{}_\n\nNot run: no results in `{}`. Run `make fig-{}`.\n",
                    f.id,
                    f.title,
                    results.join(f.id).display(),
                    f.id
                )?;
            }
            continue;
        };
        figure_section(&mut body, results, f, run, t)?;
    }
    let figure_runs: Vec<FigureRun> = runs.iter().map(|(r, _)| r.clone()).collect();
    let mut counts = [[0usize; 5]; KINDS.len()];
    for r in &figure_runs {
        for (total, c) in counts.iter_mut().zip(&r.counts) {
            for (x, y) in total.iter_mut().zip(c) {
                *x += y;
            }
        }
    }
    let mut out = String::new();
    writeln!(out, "# syncbench reproduction report\n")?;
    let failures = crate::failures::collect(results)?;
    let violated = failures.iter().filter(|f| f.is_invariant()).count();
    let unexplained = failures
        .iter()
        .filter(|f| !f.explained() && !f.is_invariant())
        .count();
    let total = |slot: usize| counts.iter().map(|c| c[slot]).sum::<usize>();
    let paper = counts[0];
    writeln!(
        out,
        "**The papers' claims: {} pass, {} fail, {} undecided, {} not exercised, {} n.a.**{}{}\n",
        paper[0],
        paper[1],
        paper[2],
        paper[3],
        paper[4],
        if violated > 0 {
            format!(" **{violated} invariant(s) violated: a bug.**")
        } else {
            String::new()
        },
        if unexplained > 0 {
            format!(" **{unexplained} failure(s) unexplained.**")
        } else {
            String::new()
        }
    )?;
    front_page::write(&mut out, &figure_runs, &not_run)?;
    writeln!(
        out,
        "## How to read it\n\n{} figure(s) with results; claims: {} pass, {} fail, {} undecided, {} not exercised, {} n.a., by kind:\n\n\
         | kind | pass | fail | undecided | not exercised | n.a. |\n|---|---|---|---|---|---|",
        figure_runs.len(),
        total(0),
        total(1),
        total(2),
        total(3),
        total(4),
    )?;
    for ((_, title), c) in KINDS.iter().zip(&counts) {
        writeln!(
            out,
            "| {title} | {} | {} | {} | {} | {} |",
            c[0], c[1], c[2], c[3], c[4]
        )?;
    }
    writeln!(
        out,
        "\n_The papers' claims_ are statements of the papers; _the harness's checks_ are our own \
         (a run got near the optimum, every run reached the target); _invariants_ are bounds and \
         theorems the code enforces (a failure is a bug, and CI fails on it); _model checks_ test \
         our model (the simulator against measured runs, how tight a bound gets). Which claims are \
         of which kind is said once, in `experiments/failures.toml`'s `[kinds]`.\n"
    )?;
    writeln!(
        out,
        "\
         Each claim is evaluated on the measured data of this run; a failing claim is reported with its numbers, \
         never tuned away. A claim is _not exercised_ when the run could not have told a pass from a fail (the \
         target was crossed within the first evaluations, the compared runs were identical, a bound never bound): \
         it is counted apart, with the reason in its measured value. Where a figure ran several seeds (`--seeds`), \
         a claim whose seeds disagree (more than one in five the other way) is _undecided_, counted apart and never \
         as a pass, and the figure runs further seeds, up to `--max-seeds`, to decide it; otherwise \
         a claim passes when it passes for a strict majority of the seeds that exercised it and, where it has a \
         deciding number, for the seed at its median; its verdict says for how many it did. Where a figure has `sensitivity.csv`, a table after its claims \
         says which verdicts hold over a grid of modelling knobs. \
         Regenerate one figure with `make fig-<id>`, everything with `make reproduce-all`.\n"
    )?;
    out.push_str(&crate::failures::section(&failures)?);
    out.push_str(&body);
    std::fs::create_dir_all(results)
        .with_context(|| format!("cannot create {}", results.display()))?;
    if html {
        let page = crate::html::page("syncbench reproduction report", &out);
        write_atomically(&results.join("REPORT.html"), &page)?;
    }
    let path = results.join("REPORT.md");
    write_atomically(&path, &out)?;
    Ok(path)
}

/// Writes `text` to `path` through a temporary file beside it, so a reader never sees half a
/// report.
fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("report");
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// One figure's section: the paper's result, how it ran, its notes and deviations, its
/// picture, its claims and its sensitivity table.
fn figure_section(
    body: &mut String,
    results: &Path,
    f: &figs::FigureDef,
    run: &FigureRun,
    t: &Table,
) -> Result<()> {
    let dir = results.join(f.id);
    writeln!(body, "## {}\n\n_{}_\n", f.id, f.title)?;
    writeln!(body, "**Paper:** {}\n", f.paper)?;
    if let Some(m) = &run.manifest {
        writeln!(
            body,
            "Run: driver `{}`, seeds {}, {:.1} s (scale, revision and machine: [What ran](#what-ran)).\n",
            m["driver"].as_str().unwrap_or("?"),
            front_page::seed_span(&run.seeds),
            m["wall_seconds"].as_f64().unwrap_or(0.0)
        )?;
        if let Some(notes) = m["notes"].as_array() {
            let notes: Vec<&str> = notes.iter().map(|n| n.as_str().unwrap_or("")).collect();
            for n in merge_seed_notes(&notes) {
                writeln!(body, "- {n}")?;
            }
            writeln!(body)?;
        }
        write_deviations(body, &m["deviations"])?;
    }
    // The figure's own files, so a reader goes from a verdict to the numbers behind it.
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.ends_with(".csv") || n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    if !files.is_empty() {
        writeln!(
            body,
            "Files: {}.\n",
            files
                .iter()
                .map(|n| format!("[{n}]({}/{n})", f.id))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    if dir.join(format!("{}.png", f.id)).exists() {
        writeln!(body, "![{id}]({id}/{id}.png)\n", id = f.id)?;
    } else {
        writeln!(
            body,
            "_Figure not rendered yet: run `figures render --figure {}`._\n",
            f.id
        )?;
    }
    // A statement or a paper passage several rows share is said once, above the table, and
    // each row refers to it by its letter.
    let mut shared = SharedTexts::default();
    for i in 0..t.len() {
        shared.count(t.str(i, "statement")?);
        shared.count(t.str(i, "paper_value")?);
    }
    shared.write(body)?;
    writeln!(
        body,
        "| claim | statement | paper | measured | verdict |\n|---|---|---|---|---|"
    )?;
    for i in 0..t.len() {
        let verdict = t.str(i, "verdict")?;
        let kind = if t.has("kind") {
            t.str(i, "kind")?
        } else {
            "paper"
        };
        let mut mark = match verdict {
            "pass" => "pass",
            "fail" => "**FAIL**",
            "not exercised" => "_not exercised_",
            "undecided" => "_undecided_",
            other => other,
        }
        .to_string();
        // Several seeds: how many of the evaluating seeds the claim passed for.
        if t.has("seeds") && verdict != "n.a." {
            mark.push_str(&format!(
                " ({}/{} seeds)",
                t.str(i, "passes")?,
                t.str(i, "seeds")?
            ));
            // The deciding number's spread over the seeds, where the claim has one.
            if t.has("median") && !t.str(i, "median")?.is_empty() {
                mark.push_str(&format!(
                    "; median {:.3}, range {:.3} to {:.3}",
                    t.num(i, "median")?,
                    t.num(i, "min")?,
                    t.num(i, "max")?
                ));
            }
        }
        // A failure's class, and a harness check's kind, beside its verdict.
        if verdict == "fail" && t.has("class") && !t.str(i, "class")?.is_empty() {
            mark.push_str(&format!(" ({})", t.str(i, "class")?));
        }
        if kind != "paper" {
            mark.push_str(&format!(" [{kind}]"));
        }
        writeln!(
            body,
            "| `{}` | {} | {} | {} | {} |",
            md_escape(t.str(i, "claim_id")?),
            shared.cell(t.str(i, "statement")?),
            shared.cell(t.str(i, "paper_value")?),
            md_escape(t.str(i, "measured_value")?),
            mark
        )?;
    }
    writeln!(body)?;
    let sens = dir.join("sensitivity.csv");
    if sens.exists() {
        let mut seed_passes = std::collections::HashMap::new();
        if t.has("seeds") {
            for i in 0..t.len() {
                if let (Ok(p), Ok(n)) = (
                    t.str(i, "passes")?.parse::<u64>(),
                    t.str(i, "seeds")?.parse::<u64>(),
                ) {
                    seed_passes.insert(t.str(i, "claim_id")?.to_string(), (p, n));
                }
            }
        }
        sensitivity(body, &sens, &seed_passes)
            .with_context(|| format!("sensitivity of {}", f.id))?;
    }
    Ok(())
}

/// A manifest's notes with those that differ only in their seed ("... seed 1)", "... seed 2)")
/// said once, at the first one's place, for all their seeds ("... seeds 1-5)").
fn merge_seed_notes(notes: &[&str]) -> Vec<String> {
    // (the note with its seed number cut out, the seeds)
    let split = |n: &str| -> Option<(String, u64)> {
        let at = n.rfind("seed ")? + "seed ".len();
        let digits: String = n[at..].chars().take_while(char::is_ascii_digit).collect();
        let seed = digits.parse().ok()?;
        Some((format!("{}#{}", &n[..at], &n[at + digits.len()..]), seed))
    };
    let mut merged: Vec<(String, Vec<u64>)> = Vec::new();
    for n in notes {
        match split(n) {
            Some((shape, seed)) => match merged
                .iter_mut()
                .find(|(s, v)| *s == shape && !v.is_empty())
            {
                Some((_, seeds)) => seeds.push(seed),
                None => merged.push((shape, vec![seed])),
            },
            None => merged.push((n.to_string(), Vec::new())),
        }
    }
    merged
        .into_iter()
        .map(|(shape, seeds)| match seeds.as_slice() {
            [] => shape,
            [one] => shape.replacen("seed #", &format!("seed {one}"), 1),
            many => {
                let mut sorted = many.to_vec();
                sorted.sort_unstable();
                shape.replacen(
                    "seed #",
                    &format!("seeds {}", front_page::seed_span(&sorted)),
                    1,
                )
            }
        })
        .collect()
}

/// Texts of a figure's claims table that several rows share: a statement or paper passage of
/// at least [`SharedTexts::LONG`] characters on two rows or more gets a letter, is written once
/// above the table, and its cells say "see [a]".
#[derive(Default)]
struct SharedTexts {
    /// Each long text with its count, in first-seen order.
    seen: Vec<(String, usize)>,
}

impl SharedTexts {
    /// Shorter texts are cheaper to repeat than to refer to.
    const LONG: usize = 60;

    fn count(&mut self, text: &str) {
        if text.chars().count() < Self::LONG {
            return;
        }
        match self.seen.iter_mut().find(|(t, _)| t == text) {
            Some((_, n)) => *n += 1,
            None => self.seen.push((text.to_string(), 1)),
        }
    }

    /// The shared texts with their letters (a, b, ..., z, then aa, ab, ...).
    fn lettered(&self) -> impl Iterator<Item = (String, &str)> {
        self.seen
            .iter()
            .filter(|(_, n)| *n > 1)
            .enumerate()
            .map(|(k, (t, _))| (letter(k), t.as_str()))
    }

    fn write(&self, body: &mut String) -> std::fmt::Result {
        let mut any = false;
        for (l, t) in self.lettered() {
            if !any {
                writeln!(body, "Said once for the rows that share it:\n")?;
                any = true;
            }
            writeln!(body, "- **[{l}]** {}", md_escape(t))?;
        }
        if any {
            writeln!(body)?;
        }
        Ok(())
    }

    /// The table cell for `text`: a reference to it where it is shared, else the text.
    fn cell(&self, text: &str) -> String {
        match self.lettered().find(|(_, t)| *t == text) {
            Some((l, _)) => format!("see **[{l}]**"),
            None => md_escape(text),
        }
    }
}

/// The `k`-th letter label: a to z, then aa, ab, ...
fn letter(k: usize) -> String {
    let a = |i: usize| char::from(b'a' + (i % 26) as u8);
    if k < 26 {
        a(k).to_string()
    } else {
        format!("{}{}", a(k / 26 - 1), a(k))
    }
}

/// A figure's deviations from its paper's setup (its manifest's `deviations`), as a table:
/// the key, our value, the paper's, where the paper says it, and why.
fn write_deviations(body: &mut String, deviations: &serde_json::Value) -> std::fmt::Result {
    let Some(rows) = deviations.as_array().filter(|r| !r.is_empty()) else {
        return Ok(());
    };
    writeln!(
        body,
        "**Deviations from the paper's setup** (experiments/deviations.toml):\n"
    )?;
    writeln!(body, "| key | ours | paper | source | why |")?;
    writeln!(body, "|---|---|---|---|---|")?;
    let cell = |v: &serde_json::Value| {
        v.as_str()
            .map_or_else(|| v.to_string(), str::to_string)
            .replace('|', "\\|")
    };
    for r in rows {
        writeln!(
            body,
            "| `{}` | {} | {} | {} | {} |",
            cell(&r["key"]),
            cell(&r["ours"]),
            cell(&r["paper"]),
            cell(&r["source"]),
            cell(&r["why"])
        )?;
    }
    writeln!(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_that_differ_only_in_their_seed_are_said_once() {
        let notes = [
            "data: a twin (2000 users, seed 1)",
            "the target is 90% of the way",
            "data: a twin (2000 users, seed 2)",
            "lda data: a corpus (seed 1)",
            "data: a twin (2000 users, seed 3)",
            "lda data: a corpus (seed 2)",
            "seed 7 alone",
        ];
        assert_eq!(
            merge_seed_notes(&notes),
            [
                "data: a twin (2000 users, seeds 1-3)",
                "the target is 90% of the way",
                "lda data: a corpus (seeds 1-2)",
                "seed 7 alone",
            ]
        );
    }

    #[test]
    fn a_text_several_rows_share_is_said_once_and_referred_to() {
        let quote = "\"In both cases ESSP converges faster or comparable to SSP\" (ESSP, Fig 3)";
        let other = "\"a passage only one row quotes, long enough to be lettered if shared\"";
        let mut shared = SharedTexts::default();
        for t in [quote, "short", quote, "short", other, quote] {
            shared.count(t);
        }
        let mut body = String::new();
        shared.write(&mut body).unwrap();
        assert_eq!(
            body,
            format!("Said once for the rows that share it:\n\n- **[a]** {quote}\n\n")
        );
        assert_eq!(shared.cell(quote), "see **[a]**");
        assert_eq!(shared.cell("short"), "short");
        assert_eq!(shared.cell(other), other);
        assert_eq!(
            [0, 25, 26, 27, 52].map(letter),
            ["a", "z", "aa", "ab", "ba"].map(String::from)
        );
        // Nothing shared: nothing above the table.
        let mut none = SharedTexts::default();
        none.count(other);
        let mut body = String::new();
        none.write(&mut body).unwrap();
        assert!(body.is_empty());
    }

    #[test]
    fn renders_and_reports_from_csv_only() {
        crate::chart::register_fonts().unwrap();
        let root = std::env::temp_dir().join(format!("syncbench-figures-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = root.join("asap-fig10");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("gaps.csv"),
            "nodes,root_expander,chain,malt\n2,1,0.5,1\n3,0.6,0.2,0.5\n4,0.5,0.1,0\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("claims.csv"),
            "claim_id,statement,paper_value,measured_value,verdict,seeds,passes\n\
             asap-fig10/a,expander above chain,every N,3 of 3,pass,3,3\n\
             asap-fig10/b,a | pipe,x,y,fail,3,1\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("sensitivity.csv"),
            "setting,headline,claim_id,verdict,measured_value\n\
             k=1,true,asap-fig10/a,pass,x\n\
             k=1,true,asap-fig10/b,fail,x\n\
             k=2,false,asap-fig10/a,fail,x\n\
             k=2,false,asap-fig10/b,fail,x\n",
        )
        .unwrap();
        let def = crate::figs::ALL
            .iter()
            .find(|f| f.id == "asap-fig10")
            .unwrap();
        crate::figs::draw(def, &dir).unwrap();
        for ext in ["svg", "png"] {
            let len = std::fs::metadata(dir.join(format!("asap-fig10.{ext}")))
                .unwrap()
                .len();
            assert!(len > 1000, "{ext} is {len} bytes");
        }
        let report = std::fs::read_to_string(write(&root, false).unwrap()).unwrap();
        assert!(
            report
                .contains("claims: 1 pass, 1 fail, 0 undecided, 0 not exercised, 0 n.a., by kind"),
            "{report}"
        );
        assert!(
            report.contains(
                "**The papers' claims: 1 pass, 1 fail, 0 undecided, 0 not exercised, 0 n.a.**"
            ),
            "{report}"
        );
        assert!(
            report.contains("| invariants | 0 | 0 | 0 | 0 | 0 |"),
            "{report}"
        );
        assert!(report.contains("![asap-fig10](asap-fig10/asap-fig10.png)"));
        assert!(report.contains("a \\| pipe") && report.contains("**FAIL**"));
        assert!(report.contains("**FAIL** (1/3 seeds)"), "{report}");
        // Sensitivity: a flips between the grid's settings; b fails at both, but its seeds
        // disagree, which the first seed's grid cannot see.
        assert!(
            report.contains("| `asap-fig10/a` | 1/2 | pass | 3/3 | **no** | k=1 |"),
            "{report}"
        );
        assert!(
            report.contains("| `asap-fig10/b` | 0/2 | fail | 1/3 | **no** (seeds split) |  |"),
            "{report}"
        );
        // The table's header starts its line after a blank one (not indented into a code block).
        assert!(
            report.contains("every seed agrees):\n\n| claim | passes at |"),
            "{report}"
        );
        assert!(
            report.contains("Not run"),
            "figures without results are listed as not run"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
