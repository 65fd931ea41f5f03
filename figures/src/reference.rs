//! Reference-optimum lines: where an experiment solved its objective to high precision
//! (`reference.csv`: one row per part, with the optimum's held-out loss and the near-optimum
//! target), a loss panel shows both as flat lines beside the curves, so a reader sees how far
//! each run got towards the optimum and not only how the runs compare.
//!
//! Each such panel also gets a suboptimality twin after the figure's own panels: every run's
//! held-out loss minus the reference's, on a log10 axis, so the approach to the optimum is
//! visible where the linear panel flattens. A point at or below the reference (a held-out loss
//! can dip under the optimum's: the optimum minimises the training objective) has no
//! logarithm and is left out; the panel's title says so.

use crate::chart::{Panel, Series};
use crate::table::Table;
use anyhow::Result;
use std::path::Path;

/// Adds the reference lines of `dir/reference.csv` (if present) to `panels`, the panel of key
/// `keys[i]` getting the row whose `part` is that key (or the only row, when there is one and
/// it names no panel's key), and appends a suboptimality twin of each such panel.
///
/// # Errors
/// When `reference.csv` exists but cannot be read.
pub fn add_lines(dir: &Path, keys: &[String], panels: &mut Vec<Panel>) -> Result<()> {
    add_named_lines(dir, keys, panels, |_| {
        ["reference optimum (w*)", "near-optimum target"]
    })
}

/// As [`add_lines`], the two lines of part `p` named `names(p)` (reference, target): a
/// reference that is not an optimum (a sampler's settled level) says so in the legend.
///
/// # Errors
/// When `reference.csv` exists but cannot be read.
pub fn add_named_lines(
    dir: &Path,
    keys: &[String],
    panels: &mut Vec<Panel>,
    names: impl Fn(&str) -> [&'static str; 2],
) -> Result<()> {
    let path = dir.join("reference.csv");
    if !path.exists() {
        return Ok(());
    }
    let t = Table::read(&path)?;
    let lines =
        |i: usize| -> Result<(f64, f64)> { Ok((t.num(i, "test_loss")?, t.num(i, "target_loss")?)) };
    let agree = t.len() > 0 && {
        let first = lines(0)?;
        (1..t.len()).all(|i| lines(i).is_ok_and(|l| l == first))
    };
    let mut twins = Vec::new();
    for (key, panel) in keys.iter().zip(panels.iter_mut()) {
        // The first row serves every panel when no row names a panel and all rows draw the
        // same lines (one-part figures, or one row per driver of one optimum: hop-fig20-21);
        // a row named for another panel never stands in for a missing one.
        let lone = agree
            && !(0..t.len()).any(|i| t.str(i, "part").is_ok_and(|p| keys.iter().any(|k| k == p)));
        let row = (0..t.len())
            .find(|&i| t.str(i, "part").is_ok_and(|p| p == key))
            .or(lone.then_some(0));
        let Some(i) = row else { continue };
        let Panel::Lines {
            x_label, series, ..
        } = panel
        else {
            continue;
        };
        twins.push(suboptimality(
            if key.is_empty() { None } else { Some(key) },
            x_label,
            series,
            t.num(i, "test_loss")?,
        ));
        let xs = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .filter(|x| x.is_finite());
        let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
        if x0 > x1 {
            continue;
        }
        let [reference, target] = names(t.str(i, "part")?);
        for (label, y) in [
            (reference, t.num(i, "test_loss")?),
            (target, t.num(i, "target_loss")?),
        ] {
            series.push(Series {
                label: label.into(),
                points: vec![(x0, y), (x1, y)],
                markers_only: false,
                band: Vec::new(),
            });
        }
    }
    panels.extend(twins);
    Ok(())
}

/// The suboptimality twin of a loss panel (`name`: its key, none for a figure's only panel;
/// `x_label`; its runs' `series`) read against the reference's held-out loss `reference`.
fn suboptimality(name: Option<&str>, x_label: &str, series: &[Series], reference: f64) -> Panel {
    let gap = |y: f64| {
        let d = y - reference;
        (d > 0.0 && d.is_finite()).then(|| d.log10())
    };
    let series = series
        .iter()
        .map(|s| Series {
            label: s.label.clone(),
            points: s
                .points
                .iter()
                .filter_map(|&(x, y)| gap(y).map(|g| (x, g)))
                .collect(),
            markers_only: s.markers_only,
            band: s
                .band
                .iter()
                .filter_map(|&(x, lo, hi)| Some((x, gap(lo)?, gap(hi)?)))
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    Panel::Lines {
        title: match name {
            Some(name) => format!("{name}: suboptimality (log10) vs {x_label}"),
            None => format!("Suboptimality (log10) vs {x_label}"),
        },
        x_label: x_label.to_string(),
        y_label: "log10(loss - reference's), where > 0".into(),
        series,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loss_panel_gets_lines_and_a_log_suboptimality_twin() {
        let dir = std::env::temp_dir().join(format!("reference-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("reference.csv"),
            "part,objective,test_loss,test_accuracy,certificate,passes,initial_loss,target_loss\n\
             a,0.1,0.5,NaN,0,10,1.5,0.6\n",
        )
        .unwrap();
        let mut panels = vec![Panel::Lines {
            title: "loss".into(),
            x_label: "time".into(),
            y_label: "loss".into(),
            series: vec![Series {
                label: "bsp".into(),
                points: vec![(0.0, 1.5), (1.0, 0.6), (2.0, 0.51), (3.0, 0.49)],
                markers_only: false,
                band: Vec::new(),
            }],
        }];
        add_lines(&dir, &["a".to_string()], &mut panels).unwrap();
        assert_eq!(panels.len(), 2);
        let Panel::Lines { series, .. } = &panels[0] else {
            panic!()
        };
        assert_eq!(series.len(), 3, "the run, the optimum and the target");
        let Panel::Lines { series, title, .. } = &panels[1] else {
            panic!()
        };
        assert_eq!(title, "a: suboptimality (log10) vs time");
        // Only the run: the flat lines are not runs. 0.49 dips under 0.5 and is left out.
        assert_eq!(series.len(), 1);
        let ys: Vec<f64> = series[0].points.iter().map(|p| p.1).collect();
        assert_eq!(ys.len(), 3);
        assert!(
            (ys[0] - 0.0).abs() < 1e-12 && (ys[2] + 2.0).abs() < 1e-9,
            "{ys:?}"
        );
        // A lone row named for one panel does not stand in for the other panel's reference.
        let run = || Panel::Lines {
            title: "loss".into(),
            x_label: "time".into(),
            y_label: "loss".into(),
            series: vec![Series {
                label: "bsp".into(),
                points: vec![(0.0, 1.5), (1.0, 0.6)],
                markers_only: false,
                band: Vec::new(),
            }],
        };
        let mut two = vec![run(), run()];
        add_lines(&dir, &["b".to_string(), "a".to_string()], &mut two).unwrap();
        let count = |p: &Panel| match p {
            Panel::Lines { series, .. } => series.len(),
            _ => 0,
        };
        assert_eq!(two.len(), 3, "one twin, for panel a only");
        assert_eq!((count(&two[0]), count(&two[1])), (1, 3));
        // Rows per driver of one optimum serve panels split by something else.
        std::fs::write(
            dir.join("reference.csv"),
            "part,objective,test_loss,test_accuracy,certificate,passes,initial_loss,target_loss\n\
             sim,0.1,0.5,NaN,0,10,1.5,0.6\n\
             threads,0.1,0.5,NaN,0,10,1.5,0.6\n",
        )
        .unwrap();
        let mut by_x = vec![run(), run()];
        add_lines(
            &dir,
            &["time".to_string(), "iteration".to_string()],
            &mut by_x,
        )
        .unwrap();
        assert_eq!(by_x.len(), 4);
        assert_eq!((count(&by_x[0]), count(&by_x[1])), (3, 3));
        // A figure's only panel (no key) names the twin without the loss panel's title.
        let mut lone = vec![run()];
        add_lines(&dir, &[String::new()], &mut lone).unwrap();
        let Panel::Lines { title, .. } = &lone[1] else {
            panic!()
        };
        assert_eq!(title, "Suboptimality (log10) vs time");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
