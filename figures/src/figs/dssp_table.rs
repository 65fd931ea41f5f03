//! dssp-table1: proxy test accuracy vs (profiled) time for every mode, 2 mixed-GPU workers.

use crate::chart::{render, Panel, Series};
use crate::table::Table;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

pub fn render_fig(dir: &Path) -> Result<()> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let mut by_mode: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for i in 0..t.len() {
        by_mode
            .entry(t.str(i, "mode")?.to_string())
            .or_default()
            .push((t.num(i, "time")?, t.num(i, "accuracy")?));
    }
    let panel = Panel::Lines {
        title: "Proxy accuracy vs time, 2 workers (GTX 1080 Ti + GTX 1060 profile)".into(),
        x_label: "profiled time (s)".into(),
        y_label: "test accuracy (proxy)".into(),
        series: by_mode
            .into_iter()
            .map(|(label, points)| Series {
                label,
                points,
                markers_only: false,
            })
            .collect(),
    };
    render(dir, "dssp-table1", &[panel], 1)
}

/// dssp-fig3: accuracy vs time under each profile, and iteration throughput per mode.
pub fn render_fig3(dir: &Path) -> Result<()> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let mut by_profile: BTreeMap<String, BTreeMap<String, Vec<(f64, f64)>>> = BTreeMap::new();
    for i in 0..t.len() {
        let mode = t.str(i, "mode")?;
        // one representative SSP beside BSP, ASP and DSSP keeps the panels legible
        if mode.starts_with("ssp") && !matches!(mode, "ssp3" | "ssp15") {
            continue;
        }
        by_profile
            .entry(t.str(i, "profile")?.to_string())
            .or_default()
            .entry(mode.to_string())
            .or_default()
            .push((t.num(i, "time")?, t.num(i, "accuracy")?));
    }
    let mut panels: Vec<Panel> = by_profile
        .into_iter()
        .map(|(profile, modes)| Panel::Lines {
            title: format!("Proxy accuracy vs time ({profile})"),
            x_label: "profiled time (s)".into(),
            y_label: "test accuracy (proxy)".into(),
            series: modes
                .into_iter()
                .map(|(label, points)| Series {
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
        let mode = s.str(i, "mode")?.to_string();
        if !cats.contains(&mode) {
            cats.push(mode);
        }
    }
    for i in 0..s.len() {
        let g = groups
            .entry(s.str(i, "profile")?.to_string())
            .or_insert_with(|| vec![f64::NAN; cats.len()]);
        let ci = cats
            .iter()
            .position(|c| c == s.str(i, "mode").unwrap_or(""))
            .unwrap_or(0);
        g[ci] = s.num(i, "iterations_per_s")?;
    }
    panels.push(Panel::Bars {
        title: "Iteration throughput per worker".into(),
        y_label: "iterations / s".into(),
        categories: cats,
        groups: groups.into_iter().collect(),
    });
    render(dir, "dssp-fig3", &panels, 3)
}
