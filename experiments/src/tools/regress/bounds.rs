//! The bounds tier: guarantees a protocol makes, checked in every CSV that records them, under
//! every driver (the exact tier hashes only sim figures; a threads or cluster run that breaks
//! a bound must fail too). Three rules, by column:
//!
//! - a column named `violations` (or ending in `_violations`), e.g. hop-table1's gap-bound
//!   violations over its schedule search: every value must be 0;
//! - a staleness histogram (`staleness_bound`, `clock_differential`, `count`), e.g.
//!   essp-fig2-staleness: no read with a count may be staler than its bound, i.e. every
//!   differential with a positive count is >= -1 - bound (a worker at clock c reads every
//!   update up to clock c - s - 1; ESSP's paper, Section 3). Rows without a numeric bound (ASP)
//!   are not bounded;
//! - a parameter server's summary (`mode`, `max_staleness`), e.g. ps-modes, mode-matrix and
//!   dssp-fig3: a `bsp` run's largest staleness is 0, an `ssp<s>`, `ssp<s>-pull` or `essp<s>`
//!   run's at most s (in clocks, the unit those figures record for the parameter-server family;
//!   labels of other families, `async/...` and `peer/...`, count other units and are not
//!   bounded here).
//!
//! The verdict depends only on the results, not on the baseline.

use super::compare::{Finding, Outcome, Tier};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Every bounds finding under `results`: one per CSV that records a bound, `regressed` when
/// it is broken (naming the first offending row), `same` otherwise.
///
/// # Errors
/// An unreadable directory or a CSV that cannot be parsed.
pub fn check(results: &Path) -> Result<Vec<Finding>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(results)
        .with_context(|| format!("cannot read results directory {}", results.display()))?
    {
        let dir = entry?.path();
        if dir.join("manifest.json").is_file() {
            csvs(&dir, &mut files)?;
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        if let Some(finding) = check_file(results, &f)? {
            out.push(finding);
        }
    }
    Ok(out)
}

fn csvs(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let p = entry?.path();
        if p.is_dir() {
            csvs(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "csv") {
            out.push(p);
        }
    }
    Ok(())
}

fn check_file(results: &Path, path: &Path) -> Result<Option<Finding>> {
    let mut r =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let header = r
        .headers()
        .with_context(|| format!("{}: no header", path.display()))?
        .clone();
    let col = |name: &str| header.iter().position(|h| h == name);
    let violation_cols: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| *h == "violations" || h.ends_with("_violations"))
        .map(|(i, _)| i)
        .collect();
    let hist = match (
        col("staleness_bound"),
        col("clock_differential"),
        col("count"),
    ) {
        (Some(b), Some(d), Some(c)) => Some((b, d, c)),
        _ => None,
    };
    let ps = match (col("mode"), col("max_staleness")) {
        (Some(m), Some(x)) => Some((m, x)),
        _ => None,
    };
    if violation_cols.is_empty() && hist.is_none() && ps.is_none() {
        return Ok(None);
    }
    let name = path
        .strip_prefix(results)
        .unwrap_or(path)
        .to_string_lossy()
        .to_string();
    let (mut rows, mut broken, mut first) = (0usize, 0usize, String::new());
    for (line, rec) in r.records().enumerate() {
        let rec = rec.with_context(|| format!("{name}: row {}", line + 2))?;
        rows += 1;
        let num = |i: usize| -> Result<f64> {
            let v = rec.get(i).unwrap_or("");
            v.trim().parse::<f64>().with_context(|| {
                format!(
                    "{name}: row {}, column {}: '{v}' is not a number",
                    line + 2,
                    &header[i]
                )
            })
        };
        let mut why = None;
        for &i in &violation_cols {
            let v = num(i)?;
            if v != 0.0 {
                why = Some(format!("row {}: {} = {v}", line + 2, &header[i]));
            }
        }
        if let Some((b, d, c)) = hist {
            if let Ok(bound) = rec.get(b).unwrap_or("").trim().parse::<f64>() {
                let (diff, count) = (num(d)?, num(c)?);
                if count > 0.0 && diff < -1.0 - bound {
                    why = Some(format!(
                        "row {}: {count} reads at differential {diff}, bound {bound} allows >= {}",
                        line + 2,
                        -1.0 - bound
                    ));
                }
            }
        }
        if let Some((m, x)) = ps {
            if let Some(bound) = ps_bound(rec.get(m).unwrap_or("")) {
                let max = num(x)?;
                if max > bound {
                    why = Some(format!(
                        "row {}: {} reached staleness {max}, bound {bound}",
                        line + 2,
                        rec.get(m).unwrap_or("")
                    ));
                }
            }
        }
        if let Some(w) = why {
            broken += 1;
            if first.is_empty() {
                first = w;
            }
        }
    }
    let (now, outcome) = if broken == 0 {
        (format!("0 of {rows} rows"), Outcome::Same)
    } else {
        (format!("{broken} of {rows} rows"), Outcome::Regressed)
    };
    let mut f = Finding::plain(Tier::Bounds, name, "0 violations".into(), now, outcome);
    f.note = first;
    Ok(Some(f))
}

/// The staleness bound of a parameter-server mode label: `bsp` 0, `ssp<s>`, `ssp<s>-pull` and
/// `essp<s>` s (optionally prefixed `ps/`); `None` for every other label (unbounded, or another
/// family's unit).
fn ps_bound(label: &str) -> Option<f64> {
    let l = label.strip_prefix("ps/").unwrap_or(label);
    let l = l
        .strip_suffix("-pull")
        .filter(|rest| rest.starts_with("ssp"))
        .unwrap_or(l);
    if l == "bsp" {
        return Some(0.0);
    }
    let digits = l.strip_prefix("essp").or_else(|| l.strip_prefix("ssp"))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_server_labels_name_their_bounds() {
        assert_eq!(ps_bound("bsp"), Some(0.0));
        assert_eq!(ps_bound("ps/ssp3"), Some(3.0));
        assert_eq!(ps_bound("essp12"), Some(12.0));
        assert_eq!(ps_bound("ssp15-pull"), Some(15.0));
        for other in [
            "asp",
            "async/ssp3",
            "ps/bsp-backup1",
            "ps/dssp3-12",
            "ssp",
            "asp-pull",
            "ssp-pull",
            "peer/ring-based/standard",
        ] {
            assert_eq!(ps_bound(other), None, "{other}");
        }
    }

    #[test]
    fn violations_and_reads_beyond_the_bound_are_caught_by_row() {
        let dir = std::env::temp_dir().join(format!("bounds-{}", std::process::id()));
        let fig = dir.join("fig");
        std::fs::create_dir_all(fig.join("seeds/2")).unwrap();
        std::fs::write(fig.join("manifest.json"), "{}").unwrap();
        std::fs::write(fig.join("table.csv"), "mode,violations\nhop,0\nhop2,0\n").unwrap();
        std::fs::write(
            fig.join("seeds/2/hist.csv"),
            "mode,staleness_bound,clock_differential,count\nssp,1,-2,5\nssp,1,-3,0\nasp,none,-9,4\n",
        )
        .unwrap();
        std::fs::write(fig.join("other.csv"), "a,b\n1,2\n").unwrap();
        std::fs::write(
            fig.join("summary.csv"),
            "driver,mode,max_staleness\nsim,bsp,0\nsim,ps/ssp3,3\nsim,asp,75\nnone,async/ssp3,16\n",
        )
        .unwrap();
        // a directory without a manifest is not a figure
        std::fs::create_dir_all(dir.join("junk")).unwrap();
        std::fs::write(dir.join("junk/x.csv"), "violations\n3\n").unwrap();
        let f = check(&dir).unwrap();
        assert_eq!(f.len(), 3, "{f:?}");
        assert!(f.iter().all(|x| x.outcome == Outcome::Same), "{f:?}");

        std::fs::write(fig.join("table.csv"), "mode,violations\nhop,0\nhop2,2\n").unwrap();
        std::fs::write(
            fig.join("seeds/2/hist.csv"),
            "mode,staleness_bound,clock_differential,count\nssp,1,-3,1\n",
        )
        .unwrap();
        let f = check(&dir).unwrap();
        let bad = |f: &[Finding]| f.iter().filter(|x| x.outcome == Outcome::Regressed).count();
        assert_eq!(bad(&f), 2, "the table and the histogram: {f:?}");
        let t = f.iter().find(|x| x.metric == "fig/table.csv").unwrap();
        assert!(t.note.contains("row 3: violations = 2"), "{}", t.note);
        let h = f
            .iter()
            .find(|x| x.metric == "fig/seeds/2/hist.csv")
            .unwrap();
        assert!(h.note.contains("differential -3"), "{}", h.note);
        std::fs::write(
            fig.join("summary.csv"),
            "driver,mode,max_staleness\nsim,bsp,0\nthreads,ssp3,4\n",
        )
        .unwrap();
        let f = check(&dir).unwrap();
        let p = f.iter().find(|x| x.metric == "fig/summary.csv").unwrap();
        assert_eq!(p.outcome, Outcome::Regressed, "{p:?}");
        assert!(
            p.note.contains("row 3: ssp3 reached staleness 4, bound 3"),
            "{}",
            p.note
        );

        std::fs::write(fig.join("table.csv"), "mode,violations\nhop,x\n").unwrap();
        let e = format!("{:#}", check(&dir).unwrap_err());
        assert!(e.contains("table.csv: row 2, column violations"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
