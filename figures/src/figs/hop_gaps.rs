//! hop-table1: the largest iteration gap found by schedule search beside Table 1's bound.

use crate::chart::{Drawing, Panel};
use crate::group::{category_bars, line_panels, nested_series};
use crate::table::Table;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// Settings of one graph with the observed gap and the bound of each.
type GraphBars = (Vec<String>, Vec<f64>, Vec<f64>);

pub fn table1(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("gaps.csv"))?;
    let mut by_graph: BTreeMap<String, GraphBars> = BTreeMap::new();
    for i in 0..t.len() {
        let e = by_graph.entry(t.str(i, "graph")?.to_string()).or_default();
        e.0.push(t.str(i, "setting")?.to_string());
        e.1.push(t.num(i, "max_observed_gap")?);
        // "unbounded" has no bar.
        e.2.push(t.str(i, "bound")?.parse().unwrap_or(f64::NAN));
    }
    let panels: Vec<Panel> = by_graph
        .into_iter()
        .map(|(graph, (categories, observed, bound))| Panel::Bars {
            title: format!("{graph}: largest Iter(i) - Iter(j) vs Table 1 bound"),
            x_label: "setting".into(),
            y_label: "iterations".into(),
            categories,
            groups: vec![
                ("observed".into(), observed),
                ("Table 1 bound".into(), bound),
            ],
        })
        .collect();
    // One panel per row: the setting labels need the width.
    Ok(Drawing { panels, cols: 1 })
}

/// hop-fig12: loss vs time per graph with and without slowdown, and the slowdown ratios.
pub fn fig12(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let nested = nested_series(&t, |i| {
        let slowed = if t.str(i, "slowdown")? == "true" {
            " slowed"
        } else {
            ""
        };
        Ok(Some((
            String::new(),
            format!("{}{slowed}", t.str(i, "graph")?),
            (t.num(i, "time")?, t.num(i, "loss")?),
        )))
    })?;
    let keys: Vec<String> = nested.keys().cloned().collect();
    let mut panels = line_panels(
        nested,
        |_| "Evaluated peer's held-out log loss vs time".into(),
        "time (s)",
        "log loss",
    );
    crate::reference::add_lines(dir, &keys, &mut panels)?;
    let s = Table::read(&dir.join("summary.csv"))?;
    let (mut categories, mut ratios) = (Vec::new(), Vec::new());
    for i in 0..s.len() {
        if s.str(i, "slowdown")? == "true" {
            categories.push(s.str(i, "graph")?.to_string());
            ratios.push(s.num(i, "slowdown_ratio")?);
        }
    }
    panels.push(Panel::Bars {
        title: "Time per iteration with / without random slowdown".into(),
        x_label: "graph".into(),
        y_label: "slowdown ratio".into(),
        categories,
        groups: vec![("ratio".into(), ratios)],
    });
    Ok(Drawing { panels, cols: 2 })
}

/// hop-fig14-16 / hop-fig17 / hop-fig18-19: loss vs time per setting on each graph, and time
/// per iteration.
pub fn compare(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let nested = nested_series(&t, |i| {
        Ok(Some((
            t.str(i, "graph")?.to_string(),
            t.str(i, "setting")?.to_string(),
            (t.num(i, "time")?, t.num(i, "loss")?),
        )))
    })?;
    let keys: Vec<String> = nested.keys().cloned().collect();
    let mut panels = line_panels(
        nested,
        |graph| format!("{graph}: evaluated peer's log loss vs time"),
        "time (s)",
        "log loss",
    );
    crate::reference::add_lines(dir, &keys, &mut panels)?;
    let s = Table::read(&dir.join("summary.csv"))?;
    let (categories, groups) = category_bars(&s, |i| {
        Ok(Some((
            s.str(i, "graph")?.to_string(),
            s.str(i, "setting")?.to_string(),
            s.num(i, "seconds_per_iteration")? * 1e3,
        )))
    })?;
    panels.push(Panel::Bars {
        title: "Time per iteration".into(),
        x_label: "graph".into(),
        y_label: "ms".into(),
        categories,
        groups,
    });
    let cols = panels.len().clamp(1, 3);
    Ok(Drawing { panels, cols })
}

pub fn fig14_16(dir: &Path) -> Result<Drawing> {
    compare(dir)
}

pub fn fig17(dir: &Path) -> Result<Drawing> {
    compare(dir)
}

pub fn fig18_19(dir: &Path) -> Result<Drawing> {
    compare(dir)
}

/// hop-fig13: loss vs time, decentralized vs parameter server.
pub fn fig13(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let nested = nested_series(&t, |i| {
        Ok(Some((
            String::new(),
            t.str(i, "system")?.to_string(),
            (t.num(i, "time")?, t.num(i, "loss")?),
        )))
    })?;
    let keys: Vec<String> = nested.keys().cloned().collect();
    let mut panels = line_panels(
        nested,
        |_| "Held-out log loss vs time: decentralized vs parameter server (BSP)".into(),
        "time (s)",
        "log loss",
    );
    crate::reference::add_lines(dir, &keys, &mut panels)?;
    Ok(Drawing { panels, cols: 1 })
}

/// hop-fig20-21: loss vs time and vs iteration per graph, and time per iteration with each
/// graph's spectral gap beside the paper's.
pub fn fig20_21(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let mut panels = Vec::new();
    for (x, label) in [("time", "time (s)"), ("iteration", "iteration")] {
        let nested = nested_series(&t, |i| {
            Ok(Some((
                x.to_string(),
                t.str(i, "graph")?.to_string(),
                (t.num(i, x)?, t.num(i, "loss")?),
            )))
        })?;
        panels.extend(line_panels(
            nested,
            |_| format!("Held-out log loss vs {x}, 8 workers on 3 machines"),
            label,
            "log loss",
        ));
    }
    // The reference rows (one per driver, of one optimum) serve both loss panels.
    crate::reference::add_lines(dir, &["time".into(), "iteration".into()], &mut panels)?;
    let g = Table::read(&dir.join("gaps.csv"))?;
    let (categories, groups) = category_bars(&g, |i| {
        Ok(Some((
            g.str(i, "graph")?.to_string(),
            "ours (1 - lambda_2)".to_string(),
            g.num(i, "gap_paper_convention")?,
        )))
    })?;
    let mut groups = groups;
    groups.push((
        "paper".to_string(),
        (0..g.len())
            .map(|i| g.str(i, "paper_gap").map(|s| s.parse().unwrap_or(f64::NAN)))
            .collect::<Result<Vec<f64>>>()?,
    ));
    panels.push(Panel::Bars {
        title: "Spectral gap".into(),
        x_label: "graph".into(),
        y_label: "gap".into(),
        categories,
        groups,
    });
    let s = Table::read(&dir.join("summary.csv"))?;
    let (categories, groups) = category_bars(&s, |i| {
        Ok(Some((
            s.str(i, "graph")?.to_string(),
            "time per iteration".to_string(),
            s.num(i, "seconds_per_iteration")? * 1e3,
        )))
    })?;
    panels.push(Panel::Bars {
        title: "Time per iteration (two-level network)".into(),
        x_label: "graph".into(),
        y_label: "ms".into(),
        categories,
        groups,
    });
    Ok(Drawing { panels, cols: 2 })
}
