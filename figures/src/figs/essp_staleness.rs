//! essp-fig2-staleness: clock-differential histograms, SSP vs ESSP per staleness bound.

use crate::chart::{Drawing, Panel, Series};
use crate::group::lines;
use crate::table::Table;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// Series of one staleness bound: mode family -> (differential, fraction) points.
type BoundSeries = BTreeMap<String, Vec<(f64, f64)>>;

pub fn render_fig(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("differential_hist.csv"))?;
    // bound -> mode label -> points (differential, fraction)
    let mut by_bound: BTreeMap<String, BoundSeries> = BTreeMap::new();
    let mut bsp: Vec<(f64, f64)> = Vec::new();
    for i in 0..t.len() {
        if t.str(i, "driver")? != "sim" {
            // the sim driver's profile is drawn; other drivers stay in the CSV
            continue;
        }
        let mode = t.str(i, "mode")?.to_string();
        let pt = (t.num(i, "clock_differential")?, t.num(i, "fraction")?);
        if mode == "bsp" {
            bsp.push(pt);
            continue;
        }
        let bound = t.str(i, "staleness_bound")?.to_string();
        let family = if mode.starts_with("essp") {
            "ESSP"
        } else {
            "SSP"
        };
        by_bound
            .entry(bound)
            .or_default()
            .entry(family.to_string())
            .or_default()
            .push(pt);
    }
    let mut bounds: Vec<(i64, BoundSeries)> = by_bound
        .into_iter()
        .map(|(b, m)| (b.parse().unwrap_or(0), m))
        .collect();
    bounds.sort_by_key(|b| b.0);
    let mut panels = Vec::new();
    for (b, modes) in bounds {
        let mut series: Vec<Series> = modes
            .into_iter()
            .map(|(label, points)| Series {
                // The family alone: the panel's title gives s, and a family keeps its colour
                // from panel to panel.
                label,
                points,
                markers_only: false,
                band: Vec::new(),
            })
            .collect();
        series.push(Series {
            label: "BSP".into(),
            points: bsp.clone(),
            markers_only: true,
            band: Vec::new(),
        });
        panels.push(Panel::Lines {
            title: format!("Staleness profile, s = {b}"),
            x_label: "clock differential (parameter age - local clock)".into(),
            y_label: "fraction of row reads".into(),
            series,
        });
    }
    let cols = panels.len().clamp(1, 3);
    Ok(Drawing { panels, cols })
}

/// One bar panel's modes, computation and blocked milliseconds.
type Bars = (Vec<String>, Vec<f64>, Vec<f64>);

/// essp-fig2-breakdown: compute and blocked milliseconds per clock for each mode, one panel
/// per workload (sim driver).
pub fn render_breakdown(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("breakdown.csv"))?;
    let mut by_workload: BTreeMap<String, Bars> = BTreeMap::new();
    for i in 0..t.len() {
        if t.str(i, "driver")? != "sim" {
            continue;
        }
        let e = by_workload
            .entry(t.str(i, "workload")?.to_string())
            .or_default();
        e.0.push(t.str(i, "mode")?.to_string());
        e.1.push(t.num(i, "compute_s_per_clock")? * 1e3);
        e.2.push(t.num(i, "blocked_s_per_clock")? * 1e3);
    }
    if by_workload.is_empty() {
        // No sim rows (a threads or cluster run): one empty panel, as for any figure.
        by_workload.insert("mf".into(), Default::default());
    }
    let panels: Vec<Panel> = by_workload
        .into_iter()
        .map(|(w, (cats, compute, blocked))| Panel::Bars {
            title: format!(
                "Time per clock: computation vs blocked ({}, sim)",
                w.to_uppercase()
            ),
            x_label: "mode".into(),
            y_label: "ms per clock".into(),
            categories: cats,
            groups: vec![("computation".into(), compute), ("blocked".into(), blocked)],
        })
        .collect();
    let cols = panels.len();
    Ok(Drawing { panels, cols })
}

/// essp-fig3: squared loss vs clock and vs time, one line per mode and step (sim driver).
pub fn render_convergence(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let mut by_clock: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut by_time: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for i in 0..t.len() {
        if t.str(i, "driver")? != "sim" {
            continue;
        }
        let key = format!("{} (step {})", t.str(i, "mode")?, t.str(i, "step")?);
        let loss = t.num(i, "squared_loss")?;
        // diverged runs would flatten every other curve: clip the drawing at 2x the start
        let loss = if loss.is_finite() { loss.min(2.0) } else { 2.0 };
        by_clock
            .entry(key.clone())
            .or_default()
            .push((t.num(i, "clock")?, loss));
        by_time
            .entry(key)
            .or_default()
            .push((t.num(i, "time")?, loss));
    }
    let mut panels = vec![
        Panel::Lines {
            title: "MF squared loss vs clock (clipped at 2)".into(),
            x_label: "clock".into(),
            y_label: "held-out squared loss".into(),
            series: lines(by_clock),
        },
        Panel::Lines {
            title: "MF squared loss vs time (clipped at 2)".into(),
            x_label: "virtual time (s)".into(),
            y_label: "held-out squared loss".into(),
            series: lines(by_time),
        },
    ];
    let lda = dir.join("lda_curves.csv");
    if lda.exists() {
        let t = Table::read(&lda)?;
        let mut by_clock: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        let mut by_time: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for i in 0..t.len() {
            if t.str(i, "driver")? != "sim" {
                continue;
            }
            let key = t.str(i, "mode")?.to_string();
            let nll = t.num(i, "neg_log_likelihood_per_token")?;
            by_clock
                .entry(key.clone())
                .or_default()
                .push((t.num(i, "clock")?, nll));
            by_time
                .entry(key)
                .or_default()
                .push((t.num(i, "time")?, nll));
        }
        panels.push(Panel::Lines {
            title: "LDA negative word log-likelihood per token vs clock".into(),
            x_label: "clock".into(),
            y_label: "-log-likelihood / token".into(),
            series: lines(by_clock),
        });
        panels.push(Panel::Lines {
            title: "LDA negative word log-likelihood per token vs time".into(),
            x_label: "virtual time (s)".into(),
            y_label: "-log-likelihood / token".into(),
            series: lines(by_time),
        });
    }
    let keys = ["mf", "mf", "lda", "lda"].map(String::from);
    crate::reference::add_named_lines(dir, &keys, &mut panels, |part| {
        if part == "lda" {
            ["sequential sampler's level", "near-reference target"]
        } else {
            ["reference optimum (ALS)", "near-optimum target"]
        }
    })?;
    Ok(Drawing { panels, cols: 2 })
}
