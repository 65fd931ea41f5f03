//! mode-matrix: time to target relative to the baseline (BSP by default), modes x straggler
//! patterns: ranking.csv's median over the run's seeds (the experiment computes it, so the
//! heatmap and the ranking are one statistic), modes and patterns in matrix.csv's order.

use crate::chart::{Drawing, Panel};
use crate::table::Table;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// The heatmap's rows (modes), columns (patterns) and `values[row][col]`, and the run's seeds.
pub struct Grid {
    pub modes: Vec<String>,
    pub patterns: Vec<String>,
    pub values: Vec<Vec<Option<f64>>>,
    pub seeds: usize,
}

/// The grid of `ranking` (ranking.csv) in the order of `order` (the first seed's matrix.csv).
///
/// # Errors
/// A missing column or a number that does not parse.
pub fn grid(order: &Table, ranking: &Table) -> Result<Grid> {
    let (mut modes, mut patterns) = (Vec::<String>::new(), Vec::<String>::new());
    for i in 0..order.len() {
        let (m, p) = (order.str(i, "mode")?, order.str(i, "pattern")?);
        if !modes.iter().any(|x| x == m) {
            modes.push(m.to_string());
        }
        if !patterns.iter().any(|x| x == p) {
            patterns.push(p.to_string());
        }
    }
    let mut median = BTreeMap::new();
    let mut seeds = 0;
    for i in 0..ranking.len() {
        let v = if ranking.str(i, "vs_baseline_median")?.is_empty() {
            None
        } else {
            Some(ranking.num(i, "vs_baseline_median")?)
        };
        seeds = seeds.max(ranking.num(i, "seeds_run")? as usize);
        median.insert(
            (
                ranking.str(i, "mode")?.to_string(),
                ranking.str(i, "pattern")?.to_string(),
            ),
            v,
        );
    }
    let values = modes
        .iter()
        .map(|m| {
            patterns
                .iter()
                .map(|p| median.get(&(m.clone(), p.clone())).copied().flatten())
                .collect()
        })
        .collect();
    Ok(Grid {
        modes,
        patterns,
        values,
        seeds,
    })
}

pub fn render(dir: &Path) -> Result<Drawing> {
    let g = grid(
        &Table::read(&dir.join("matrix.csv"))?,
        &Table::read(&dir.join("ranking.csv"))?,
    )?;
    Ok(Drawing {
        panels: vec![Panel::Heatmap {
            title: format!(
                "Time to target / the baseline's (its row is 1), per straggler pattern; median over {} seed{}; - never reached",
                g.seeds,
                if g.seeds == 1 { "" } else { "s" }
            ),
            x_label: "straggler pattern".into(),
            y_label: "sync mode (family/mode)".into(),
            scale_label: "time to target / the baseline's (log scale)".into(),
            rows: g.modes,
            cols: g.patterns,
            values: g.values,
        }],
        cols: 1,
    })
}
