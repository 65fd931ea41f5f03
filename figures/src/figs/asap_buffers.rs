//! asap-fig7 and asap-fig9: receive-buffer reduces under NOTIFY-ACK, BSP and ASYNC.

use crate::chart::{Drawing, Panel};
use crate::group::{category_bars, line_panels, nested_series};
use crate::table::Table;
use anyhow::Result;
use std::collections::BTreeSet;
use std::path::Path;

/// asap-fig7: per driver, the share of reduces by number of consistent inputs, per mode.
pub fn fig7(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("histogram.csv"))?;
    let drivers: BTreeSet<String> = (0..t.len())
        .map(|i| t.str(i, "driver").map(str::to_string))
        .collect::<Result<_>>()?;
    let mut panels = Vec::new();
    for d in drivers {
        let (categories, groups) = category_bars(&t, |i| {
            if t.str(i, "driver")? != d {
                return Ok(None);
            }
            Ok(Some((
                t.str(i, "inputs_consistent")?.to_string(),
                t.str(i, "mode")?.to_string(),
                100.0 * t.num(i, "share")?,
            )))
        })?;
        panels.push(Panel::Bars {
            title: format!("{d}: reduces by consistent inputs"),
            x_label: "consistent inputs of a reduce (of 7)".into(),
            y_label: "% of reduces".into(),
            categories,
            groups,
        });
    }
    Ok(Drawing { panels, cols: 2 })
}

/// asap-fig8: training accuracy vs time per mode and driver, and images per second.
pub fn fig8(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let nested = nested_series(&t, |i| {
        Ok(Some((
            t.str(i, "driver")?.to_string(),
            t.str(i, "mode")?.to_string(),
            (t.num(i, "time")?, t.num(i, "accuracy")?),
        )))
    })?;
    let mut panels = line_panels(
        nested,
        |driver| format!("{driver}: VGG training accuracy vs time, all-reduce"),
        "time (s)",
        "training accuracy",
    );
    let s = Table::read(&dir.join("summary.csv"))?;
    let (categories, groups) = category_bars(&s, |i| {
        Ok(Some((
            s.str(i, "mode")?.to_string(),
            s.str(i, "driver")?.to_string(),
            s.num(i, "images_per_s")?,
        )))
    })?;
    panels.push(Panel::Bars {
        title: "Throughput".into(),
        x_label: "mode".into(),
        y_label: "images / s".into(),
        categories,
        groups,
    });
    Ok(Drawing { panels, cols: 2 })
}

/// asap-fig9: loss vs time per mode.
pub fn fig9(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("curves.csv"))?;
    let nested = nested_series(&t, |i| {
        Ok(Some((
            t.str(i, "driver")?.to_string(),
            t.str(i, "mode")?.to_string(),
            (t.num(i, "time")?, t.num(i, "loss")?),
        )))
    })?;
    let keys: Vec<String> = nested.keys().cloned().collect();
    let mut panels = line_panels(
        nested,
        |driver| format!("{driver}: hinge loss vs time, root expander"),
        "time (s)",
        "held-out hinge loss",
    );
    crate::reference::add_lines(dir, &keys, &mut panels)?;
    let cols = panels.len().clamp(1, 2);
    Ok(Drawing { panels, cols })
}
