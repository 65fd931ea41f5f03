//! mode-matrix: time to target relative to the baseline (BSP by default), modes x straggler
//! patterns, the median over every seed of the run whose baseline reached the target.

use crate::chart::{Drawing, Panel};
use crate::table::Table;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `matrix.csv` of the run in `dir` and of every other seed under `dir/seeds/`.
fn seed_tables(dir: &Path) -> Result<Vec<Table>> {
    let mut paths = vec![dir.join("matrix.csv")];
    if let Ok(entries) = std::fs::read_dir(dir.join("seeds")) {
        let mut more: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path().join("matrix.csv")))
            .filter(|p| p.is_file())
            .collect();
        more.sort();
        paths.extend(more);
    }
    paths.iter().map(|p| Table::read(p)).collect()
}

/// Median of `v` (mean of the middle two, or the lower one when the upper is infinite: half
/// the seeds reached the target); None when empty.
fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else if v[n / 2].is_finite() {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    } else {
        v[n / 2 - 1]
    })
}

/// The heatmap's rows (modes), columns (patterns) and `values[row][col]`.
pub struct Grid {
    pub modes: Vec<String>,
    pub patterns: Vec<String>,
    pub values: Vec<Vec<Option<f64>>>,
}

/// Per (mode, pattern), each seed's time to target over the baseline's, a mode that never
/// reached the target counting as infinitely slow (seeds whose baseline never reached it are
/// left out); the median over seeds, None where it is not finite.
pub fn medians(tables: &[Table]) -> Result<Grid> {
    let (mut modes, mut patterns) = (Vec::<String>::new(), Vec::<String>::new());
    let mut ratios: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for t in tables {
        // The baseline reached the target in a pattern iff some row of it has a ratio (its
        // own row, 1, at least).
        let mut reached = std::collections::BTreeSet::new();
        for i in 0..t.len() {
            if !t.str(i, "vs_baseline")?.is_empty() {
                reached.insert(t.str(i, "pattern")?.to_string());
            }
        }
        for i in 0..t.len() {
            let (mode, pattern) = (
                t.str(i, "mode")?.to_string(),
                t.str(i, "pattern")?.to_string(),
            );
            if !modes.contains(&mode) {
                modes.push(mode.clone());
            }
            if !patterns.contains(&pattern) {
                patterns.push(pattern.clone());
            }
            let r = t.str(i, "vs_baseline")?;
            let v = if !r.is_empty() {
                t.num(i, "vs_baseline")?
            } else if t.str(i, "time_to_target_s")?.is_empty() && reached.contains(&pattern) {
                f64::INFINITY
            } else {
                continue;
            };
            ratios.entry((mode, pattern)).or_default().push(v);
        }
    }
    let values = modes
        .iter()
        .map(|m| {
            patterns
                .iter()
                .map(|p| {
                    ratios
                        .get(&(m.clone(), p.clone()))
                        .and_then(|v| median(v.clone()))
                        .filter(|v| v.is_finite())
                })
                .collect()
        })
        .collect();
    Ok(Grid {
        modes,
        patterns,
        values,
    })
}

pub fn render(dir: &Path) -> Result<Drawing> {
    let tables = seed_tables(dir)?;
    let g = medians(&tables)?;
    Ok(Drawing {
        panels: vec![Panel::Heatmap {
            title: format!(
                "Time to target / the baseline's (its row is 1), per straggler pattern; median over {} seed{}; - never reached",
                tables.len(),
                if tables.len() == 1 { "" } else { "s" }
            ),
            rows: g.modes,
            cols: g.patterns,
            values: g.values,
        }],
        cols: 1,
    })
}
