//! ps-modes: loss vs time per driver, wait-time and staleness histograms.

use crate::chart::{Drawing, Panel, Series};
use crate::table::Table;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;

pub fn render_dir(dir: &Path) -> Result<Vec<Panel>> {
    let summary = Table::read(&dir.join("summary.csv"))?;
    let mut by_driver: BTreeMap<String, Vec<Series>> = BTreeMap::new();
    for i in 0..summary.len() {
        let driver = summary.str(i, "driver")?.to_string();
        let mode = summary.str(i, "mode")?.to_string();
        let p = Table::read(&dir.join(format!("{driver}-{mode}")).join("progress.csv"))?;
        let pts = (0..p.len())
            .map(|j| Ok((p.num(j, "time")?, p.num(j, "loss")?)))
            .collect::<Result<Vec<_>>>()?;
        by_driver.entry(driver).or_default().push(Series {
            label: mode,
            points: pts,
            markers_only: false,
            band: Vec::new(),
        });
    }
    let keys: Vec<String> = by_driver.keys().cloned().collect();
    let mut panels: Vec<Panel> = by_driver
        .into_iter()
        .map(|(driver, series)| Panel::Lines {
            title: format!("Loss vs time ({driver} driver)"),
            x_label: "time (s)".into(),
            y_label: "hinge loss + L2".into(),
            series,
        })
        .collect();
    crate::reference::add_lines(dir, &keys, &mut panels)?;
    let waits = Table::read(&dir.join("wait_hist.csv"))?;
    let mut wait_series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for i in 0..waits.len() {
        let key = format!("{} {}", waits.str(i, "driver")?, waits.str(i, "mode")?);
        let mid = (waits.num(i, "lower_us")? + waits.num(i, "upper_us")?) / 2.0 / 1000.0;
        wait_series
            .entry(key)
            .or_default()
            .push((mid, waits.num(i, "count")?));
    }
    panels.push(Panel::Lines {
        title: "Wait time per iteration (histogram)".into(),
        x_label: "wait (ms)".into(),
        y_label: "iterations".into(),
        series: crate::group::lines(wait_series),
    });
    let st = Table::read(&dir.join("staleness_hist.csv"))?;
    let mut st_series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for i in 0..st.len() {
        let key = format!("{} {}", st.str(i, "driver")?, st.str(i, "mode")?);
        st_series
            .entry(key)
            .or_default()
            .push((st.num(i, "staleness")?, st.num(i, "count")?));
    }
    panels.push(Panel::Lines {
        title: "Staleness of the model read (histogram)".into(),
        x_label: "staleness (clocks)".into(),
        y_label: "reads".into(),
        series: st_series
            .into_iter()
            .map(|(label, points)| Series {
                label,
                points,
                markers_only: true,
                band: Vec::new(),
            })
            .collect(),
    });
    Ok(panels)
}

pub fn render(dir: &Path) -> Result<Drawing> {
    Ok(Drawing {
        panels: render_dir(dir)?,
        cols: 2,
    })
}
