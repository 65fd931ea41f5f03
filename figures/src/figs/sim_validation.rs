//! sim-validation: the simulator's relative error against the threads driver, per mode and
//! quantity, replaying the measured trace and from the configuration alone.

use crate::chart::{Drawing, Panel};
use crate::table::Table;
use anyhow::Result;
use std::path::Path;

pub fn render(dir: &Path) -> Result<Drawing> {
    let t = Table::read(&dir.join("validation.csv"))?;
    let mut quantities: Vec<String> = Vec::new();
    let mut modes: Vec<String> = Vec::new();
    for i in 0..t.len() {
        let (q, m) = (
            t.str(i, "quantity")?.to_string(),
            t.str(i, "mode")?.to_string(),
        );
        if !quantities.contains(&q) {
            quantities.push(q);
        }
        if !modes.contains(&m) {
            modes.push(m);
        }
    }
    // |relative error| in percent; a missing error (never reached, or measured 0) draws no bar
    let value = |i: usize, col: &str| -> Result<f64> {
        Ok(if t.str(i, col)?.is_empty() {
            f64::NAN
        } else {
            t.num(i, col)?.abs() * 100.0
        })
    };
    let mut panels = Vec::new();
    for q in &quantities {
        let (mut replay, mut config) = (vec![f64::NAN; modes.len()], vec![f64::NAN; modes.len()]);
        for i in 0..t.len() {
            if t.str(i, "quantity")? != q {
                continue;
            }
            let k = modes
                .iter()
                .position(|m| m == t.str(i, "mode").unwrap_or_default())
                .unwrap_or(0);
            replay[k] = value(i, "replay_error")?;
            config[k] = value(i, "config_error")?;
        }
        panels.push(Panel::Bars {
            title: format!("{q}: |simulator - threads| / threads (no bar: not comparable)"),
            x_label: "mode".into(),
            y_label: "relative error (%)".into(),
            categories: modes.clone(),
            groups: vec![
                ("trace replayed".into(), replay),
                ("configuration only".into(), config),
            ],
        });
    }
    Ok(Drawing { panels, cols: 2 })
}
