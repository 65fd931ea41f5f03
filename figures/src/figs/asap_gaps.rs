//! asap-fig3 (bars, measured beside paper) and asap-fig10 (gap vs N).

use crate::chart::{Drawing, Panel, Series};
use crate::group::{category_bars, line_panels, nested_series};
use crate::table::Table;
use anyhow::Result;
use std::path::Path;

pub fn fig3(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("gaps.csv"))?;
    let mut nodes: Vec<usize> = Vec::new();
    let mut graphs: Vec<String> = Vec::new();
    for i in 0..t.len() {
        let n = t.num(i, "nodes")? as usize;
        if !nodes.contains(&n) {
            nodes.push(n);
        }
        let g = t.str(i, "graph")?.to_string();
        if !graphs.contains(&g) {
            graphs.push(g);
        }
    }
    let mut panels = Vec::new();
    for &n in &nodes {
        let mut measured = vec![f64::NAN; graphs.len()];
        let mut paper = vec![f64::NAN; graphs.len()];
        for i in 0..t.len() {
            if t.num(i, "nodes")? as usize != n {
                continue;
            }
            let gi = graphs
                .iter()
                .position(|g| g == t.str(i, "graph").unwrap_or(""))
                .unwrap_or(0);
            measured[gi] = t.num(i, "spectral_gap_sv")?;
            paper[gi] = t.str(i, "paper_value")?.parse().unwrap_or(f64::NAN);
        }
        panels.push(Panel::Bars {
            title: format!("N = {n}: spectral gap 1 - sigma2(P)"),
            x_label: "graph".into(),
            y_label: "spectral gap".into(),
            categories: graphs.clone(),
            groups: vec![("measured".into(), measured), ("paper".into(), paper)],
        });
    }
    let cols = panels.len().max(1);
    Ok(Drawing { panels, cols })
}

pub fn fig10(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("gaps.csv"))?;
    let mut series = Vec::new();
    for (col, label) in [
        ("root_expander", "root expander (deg 2)"),
        ("chain", "chain (deg 1)"),
        ("malt", "MALT Halton (deg 2)"),
    ] {
        let mut pts = Vec::new();
        for i in 0..t.len() {
            pts.push((t.num(i, "nodes")?, t.num(i, col)?));
        }
        series.push(Series {
            label: label.into(),
            points: pts,
            markers_only: col == "malt",
            band: Vec::new(),
        });
    }
    let panel = Panel::Lines {
        title: "Spectral gap vs number of nodes".into(),
        x_label: "nodes N".into(),
        y_label: "1 - sigma2(P)".into(),
        series,
    };
    Ok(Drawing {
        panels: vec![panel],
        cols: 1,
    })
}

/// asap-fig6: loss vs epochs per graph in each part, and MB sent per node.
pub fn fig6(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let nested = nested_series(&t, |i| {
        Ok(Some((
            t.str(i, "part")?.to_string(),
            t.str(i, "graph")?.to_string(),
            (t.num(i, "epoch")?, t.num(i, "loss")?),
        )))
    })?;
    let keys: Vec<String> = nested.keys().cloned().collect();
    let mut panels = line_panels(
        nested,
        |part| format!("{part}: hinge loss vs epochs"),
        "epochs",
        "held-out hinge loss",
    );
    crate::reference::add_lines(dir, &keys, &mut panels)?;
    // One category per part, one group per graph kind ("root-expander-4" -> "root-expander").
    let s = Table::read(&dir.join("summary.csv"))?;
    let (categories, groups) = category_bars(&s, |i| {
        let g = s.str(i, "graph")?;
        let kind = g
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .trim_end_matches('-');
        Ok(Some((
            s.str(i, "part")?.to_string(),
            kind.to_string(),
            s.num(i, "mb_per_node")?,
        )))
    })?;
    panels.push(Panel::Bars {
        title: "MB sent per node".into(),
        x_label: "dataset".into(),
        y_label: "MB".into(),
        categories,
        groups,
    });
    Ok(Drawing { panels, cols: 2 })
}
