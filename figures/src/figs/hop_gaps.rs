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
