//! bench-scale: the simulator's wall time, cost per worker-clock and peak memory against the
//! worker count, one series per case (log-log: both axes are log10).

use crate::chart::{Drawing, Panel};
use crate::group::lines;
use crate::table::Table;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

pub fn render(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("scale.csv"))?;
    // (case label, panel) -> points
    let mut by: [BTreeMap<String, Vec<(f64, f64)>>; 3] = Default::default();
    for i in 0..t.len() {
        let label = format!("{} ({} clocks)", t.str(i, "case")?, t.num(i, "clocks")?);
        let x = t.num(i, "workers")?.log10();
        let ys = [
            t.num(i, "wall_s")?.log10(),
            t.num(i, "us_per_worker_clock")?,
            t.num(i, "peak_mib")?,
        ];
        for (k, y) in ys.into_iter().enumerate() {
            if y.is_finite() {
                by[k].entry(label.clone()).or_default().push((x, y));
            }
        }
        // The memory floor per worker-clock (parameter-server SVM rows; absent in CSVs from
        // before it was measured): how far each point is from streaming one model per update.
        if t.has("floor_s") {
            let work = t.num(i, "workers")? * t.num(i, "clocks")?;
            let y = t.num(i, "floor_s")? * 1e6 / work;
            if y.is_finite() {
                by[1]
                    .entry(format!("{label}: memory floor"))
                    .or_default()
                    .push((x, y));
            }
        }
    }
    let [wall, per, peak] = by;
    let x_label = "log10 workers".to_string();
    Ok(Drawing {
        panels: vec![
            Panel::Lines {
                title: "Simulation wall time (slope 1: linear in the workers)".into(),
                x_label: x_label.clone(),
                y_label: "log10 wall time (s)".into(),
                series: lines(wall),
            },
            Panel::Lines {
                title: "Wall time per worker-clock (and its memory floor)".into(),
                x_label: x_label.clone(),
                y_label: "microseconds".into(),
                series: lines(per),
            },
            Panel::Lines {
                title: "Peak memory of the point's process".into(),
                x_label,
                y_label: "MiB".into(),
                series: lines(peak),
            },
        ],
        cols: 3,
    })
}
