//! ASYNC figures: error vs time under controlled-delay and production-cluster stragglers, and
//! the workers' mean waits.

use crate::chart::{Drawing, Panel};
use crate::group::{category_bars, line_panels, nested_series};
use crate::table::Table;
use anyhow::Result;
use std::path::Path;

/// log10 of an error, floored so that an error at (or, by rounding, just below) the optimum
/// stays on the chart.
fn log_error(e: f64) -> f64 {
    e.max(1e-12).log10()
}

/// One panel per dataset with a line per (variant, delay) of `curves.csv`.
fn error_panels(t: &Table, with_delay: bool) -> Result<Vec<Panel>> {
    let nested = nested_series(t, |i| {
        let mut label = t.str(i, "variant")?.to_string();
        if with_delay {
            label = format!("{label} {:.0}%", t.num(i, "delay")? * 100.0);
        }
        Ok(Some((
            t.str(i, "dataset")?.to_string(),
            label,
            (t.num(i, "time")?, log_error(t.num(i, "error")?)),
        )))
    })?;
    Ok(line_panels(
        nested,
        |ds| format!("{ds} (synthetic twin)"),
        "time (s)",
        "log10(objective - optimum)",
    ))
}

/// async-fig3 / async-fig5: error vs time per dataset, sync and async at every delay.
pub fn cds_convergence(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let panels = error_panels(&t, true)?;
    let cols = panels.len().clamp(1, 3);
    Ok(Drawing { panels, cols })
}

/// async-fig4 / async-fig6: mean wait per iteration against the delay, per dataset.
pub fn cds_waits(dir: &Path) -> Result<Drawing> {
    let s = Table::read(&dir.join("summary.csv"))?;
    let mut datasets: Vec<String> = Vec::new();
    for i in 0..s.len() {
        let d = s.str(i, "dataset")?.to_string();
        if !datasets.contains(&d) {
            datasets.push(d);
        }
    }
    datasets.sort();
    let mut panels = Vec::new();
    for ds in datasets {
        let (categories, groups) = category_bars(&s, |i| {
            if s.str(i, "dataset")? != ds {
                return Ok(None);
            }
            Ok(Some((
                format!("{:.0}%", s.num(i, "delay")? * 100.0),
                s.str(i, "variant")?.to_string(),
                s.num(i, "mean_wait_ms")?,
            )))
        })?;
        panels.push(Panel::Bars {
            title: format!("{ds}: mean wait per iteration vs delay"),
            x_label: "the delayed worker's delay".into(),
            y_label: "wait (ms)".into(),
            categories,
            groups,
        });
    }
    let cols = panels.len().clamp(1, 3);
    Ok(Drawing { panels, cols })
}

pub fn fig3(dir: &Path) -> Result<Drawing> {
    cds_convergence(dir)
}

pub fn fig4(dir: &Path) -> Result<Drawing> {
    cds_waits(dir)
}

pub fn fig5(dir: &Path) -> Result<Drawing> {
    cds_convergence(dir)
}

pub fn fig6(dir: &Path) -> Result<Drawing> {
    cds_waits(dir)
}

/// async-fig7 / async-fig8: error vs time on 32 workers with production-cluster stragglers.
fn pcs(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let panels = error_panels(&t, false)?;
    let cols = panels.len().clamp(1, 3);
    Ok(Drawing { panels, cols })
}

pub fn fig7(dir: &Path) -> Result<Drawing> {
    pcs(dir)
}

pub fn fig8(dir: &Path) -> Result<Drawing> {
    pcs(dir)
}

/// async-table3: mean wait per iteration of each method, per dataset.
pub fn table3(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("table.csv"))?;
    let cols = ["sgd", "asgd", "saga", "asaga"];
    let mut categories = Vec::new();
    let mut groups: Vec<(String, Vec<f64>)> =
        cols.iter().map(|c| (c.to_string(), vec![])).collect();
    for i in 0..t.len() {
        categories.push(t.str(i, "dataset")?.to_string());
        for (k, c) in cols.iter().enumerate() {
            groups[k].1.push(t.num(i, &format!("{c}_wait_ms"))?);
        }
    }
    let panel = Panel::Bars {
        title: "Mean wait per iteration, 32 workers, production-cluster stragglers".into(),
        x_label: "dataset".into(),
        y_label: "wait (ms)".into(),
        categories,
        groups,
    };
    Ok(Drawing {
        panels: vec![panel],
        cols: 1,
    })
}
