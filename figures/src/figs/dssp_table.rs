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
