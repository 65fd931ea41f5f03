//! Reference-optimum lines: where an experiment solved its objective to high precision
//! (`reference.csv`: one row per part, with the optimum's held-out loss and the near-optimum
//! target), a loss panel shows both as flat lines beside the curves, so a reader sees how far
//! each run got towards the optimum and not only how the runs compare.

use crate::chart::{Panel, Series};
use crate::table::Table;
use anyhow::Result;
use std::path::Path;

/// Adds the reference lines of `dir/reference.csv` (if present) to `panels`, the panel of key
/// `keys[i]` getting the row whose `part` is that key (or the only row, when there is one).
///
/// # Errors
/// When `reference.csv` exists but cannot be read.
pub fn add_lines(dir: &Path, keys: &[String], panels: &mut [Panel]) -> Result<()> {
    let path = dir.join("reference.csv");
    if !path.exists() {
        return Ok(());
    }
    let t = Table::read(&path)?;
    for (key, panel) in keys.iter().zip(panels.iter_mut()) {
        let row = (0..t.len())
            .find(|&i| t.str(i, "part").is_ok_and(|p| p == key))
            .or((t.len() == 1).then_some(0));
        let Some(i) = row else { continue };
        let Panel::Lines { series, .. } = panel else {
            continue;
        };
        let xs = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .filter(|x| x.is_finite());
        let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
        if x0 > x1 {
            continue;
        }
        for (label, y) in [
            ("reference optimum (w*)", t.num(i, "test_loss")?),
            ("near-optimum target", t.num(i, "target_loss")?),
        ] {
            series.push(Series {
                label: label.into(),
                points: vec![(x0, y), (x1, y)],
                markers_only: false,
                band: Vec::new(),
            });
        }
    }
    Ok(())
}
