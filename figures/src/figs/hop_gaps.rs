//! hop-table1: the largest iteration gap found by schedule search beside Table 1's bound.

use crate::chart::{render, Panel};
use crate::table::Table;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// Settings of one graph with the observed gap and the bound of each.
type GraphBars = (Vec<String>, Vec<f64>, Vec<f64>);

pub fn table1(dir: &Path) -> Result<()> {
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
            y_label: "iterations".into(),
            categories,
            groups: vec![
                ("observed".into(), observed),
                ("Table 1 bound".into(), bound),
            ],
        })
        .collect();
    // One panel per row: the setting labels need the width.
    render(dir, "hop-table1", &panels, 1)
}

/// hop-fig12: loss vs time per graph with and without slowdown, and the slowdown ratios.
pub fn fig12(dir: &Path) -> Result<()> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for i in 0..t.len() {
        let label = format!(
            "{}{}",
            t.str(i, "graph")?,
            if t.str(i, "slowdown")? == "true" {
                " slowed"
            } else {
                ""
            }
        );
        series
            .entry(label)
            .or_default()
            .push((t.num(i, "time")?, t.num(i, "loss")?));
    }
    let s = Table::read(&dir.join("summary.csv"))?;
    let (mut categories, mut ratios) = (Vec::new(), Vec::new());
    for i in 0..s.len() {
        if s.str(i, "slowdown")? == "true" {
            categories.push(s.str(i, "graph")?.to_string());
            ratios.push(s.num(i, "slowdown_ratio")?);
        }
    }
    let panels = vec![
        Panel::Lines {
            title: "Peer 0's held-out log loss vs time".into(),
            x_label: "time (s)".into(),
            y_label: "log loss".into(),
            series: series
                .into_iter()
                .map(|(label, points)| crate::chart::Series {
                    label,
                    points,
                    markers_only: false,
                })
                .collect(),
        },
        Panel::Bars {
            title: "Time per iteration with / without random slowdown".into(),
            y_label: "slowdown ratio".into(),
            categories,
            groups: vec![("ratio".into(), ratios)],
        },
    ];
    render(dir, "hop-fig12", &panels, 2)
}

/// hop-fig14-16 / hop-fig17: loss vs time per setting on each graph, and time per iteration.
pub fn compare(dir: &Path, id: &str) -> Result<()> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let mut by_graph: BTreeMap<String, BTreeMap<String, Vec<(f64, f64)>>> = BTreeMap::new();
    for i in 0..t.len() {
        by_graph
            .entry(t.str(i, "graph")?.to_string())
            .or_default()
            .entry(t.str(i, "setting")?.to_string())
            .or_default()
            .push((t.num(i, "time")?, t.num(i, "loss")?));
    }
    let mut panels: Vec<Panel> = by_graph
        .into_iter()
        .map(|(graph, series)| Panel::Lines {
            title: format!("{graph}: peer 0's log loss vs time (random slowdown)"),
            x_label: "time (s)".into(),
            y_label: "log loss".into(),
            series: series
                .into_iter()
                .map(|(label, points)| crate::chart::Series {
                    label,
                    points,
                    markers_only: false,
                })
                .collect(),
        })
        .collect();
    let s = Table::read(&dir.join("summary.csv"))?;
    let mut cats: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for i in 0..s.len() {
        let g = s.str(i, "graph")?.to_string();
        if !cats.contains(&g) {
            cats.push(g);
        }
    }
    for i in 0..s.len() {
        let ci = cats
            .iter()
            .position(|c| c == s.str(i, "graph").unwrap_or(""))
            .unwrap_or(0);
        let v = groups
            .entry(s.str(i, "setting")?.to_string())
            .or_insert_with(|| vec![f64::NAN; cats.len()]);
        v[ci] = s.num(i, "seconds_per_iteration")? * 1e3;
    }
    panels.push(Panel::Bars {
        title: "Time per iteration".into(),
        y_label: "ms".into(),
        categories: cats,
        groups: groups.into_iter().collect(),
    });
    let cols = panels.len().clamp(1, 3);
    render(dir, id, &panels, cols)
}

pub fn fig14_16(dir: &Path) -> Result<()> {
    compare(dir, "hop-fig14-16")
}

pub fn fig17(dir: &Path) -> Result<()> {
    compare(dir, "hop-fig17")
}

pub fn fig18_19(dir: &Path) -> Result<()> {
    compare(dir, "hop-fig18-19")
}
