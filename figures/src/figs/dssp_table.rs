//! dssp-table1: test accuracy (of the CPU proxy or the CNN) vs (profiled) time for every mode,
//! 2 mixed-GPU workers.

use crate::chart::{Drawing, Panel};
use crate::group::{category_bars, line_panels, nested_series};
use crate::table::Table;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

pub fn render_fig(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let mut by_mode: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for i in 0..t.len() {
        by_mode
            .entry(t.str(i, "mode")?.to_string())
            .or_default()
            .push((t.num(i, "time")?, t.num(i, "accuracy")?));
    }
    let (what, y_label) = crate::learning::accuracy_words(dir);
    let panel = Panel::Lines {
        title: format!("{what} vs time, 2 workers (GTX 1080 Ti + GTX 1060 profile)"),
        x_label: "profiled time (s)".into(),
        y_label: y_label.into(),
        series: crate::group::lines(by_mode),
    };
    Ok(Drawing {
        panels: vec![panel],
        cols: 1,
    })
}

/// dssp-fig3: accuracy vs time under each profile, and iteration throughput per mode.
pub fn render_fig3(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let nested = nested_series(&t, |i| {
        let mode = t.str(i, "mode")?;
        // one representative SSP beside BSP, ASP and DSSP keeps the panels legible
        if mode.starts_with("ssp") && !matches!(mode, "ssp3" | "ssp15" | "ssp3-pull" | "ssp15-pull")
        {
            return Ok(None);
        }
        Ok(Some((
            t.str(i, "profile")?.to_string(),
            mode.to_string(),
            (t.num(i, "time")?, t.num(i, "accuracy")?),
        )))
    })?;
    let (what, y_label) = crate::learning::accuracy_words(dir);
    let mut panels = line_panels(
        nested,
        |profile| format!("{what} vs time ({profile})"),
        "profiled time (s)",
        y_label,
    );
    let s = Table::read(&dir.join("summary.csv"))?;
    // Categories are modes, groups are profiles.
    let (categories, groups) = category_bars(&s, |i| {
        Ok(Some((
            s.str(i, "mode")?.to_string(),
            s.str(i, "profile")?.to_string(),
            s.num(i, "iterations_per_s")?,
        )))
    })?;
    panels.push(Panel::Bars {
        title: "Iteration throughput per worker".into(),
        x_label: "mode".into(),
        y_label: "iterations / s".into(),
        categories,
        groups,
    });
    Ok(Drawing { panels, cols: 3 })
}
