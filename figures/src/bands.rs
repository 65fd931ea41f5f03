//! Min-max bands over seeds: a figure of a several-seed run draws the first seed's curves
//! (the CSVs at the top of its results directory) with, under each line, the band from the
//! smallest to the largest value any seed had at that x.
//!
//! The other seeds' drawings come from the same figure code run on `seeds/<seed>/`; a line
//! series is matched by panel position and label, and each seed's curve is interpolated
//! linearly at the first seed's x values (seeds of a time axis sample different times). Where
//! an x lies outside a seed's curve, that seed does not count there.

use crate::chart::{Drawing, Panel, Series};

/// `seed`'s y at `x` by linear interpolation of its points (sorted by x), or None outside them.
fn at(points: &[(f64, f64)], x: f64) -> Option<f64> {
    let finite: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .collect();
    let i = finite.partition_point(|p| p.0 < x);
    match (i.checked_sub(1).map(|j| finite[j]), finite.get(i)) {
        (_, Some(&(bx, by))) if bx == x => Some(by),
        (Some((ax, ay)), Some(&(bx, by))) => Some(ay + (by - ay) * (x - ax) / (bx - ax)),
        _ => None,
    }
}

/// Sets every line series' band of `first` from itself and the matching series of `others`.
pub fn attach(first: &mut Drawing, others: &[Drawing]) {
    if others.is_empty() {
        return;
    }
    for (k, panel) in first.panels.iter_mut().enumerate() {
        let Panel::Lines { series, .. } = panel else {
            continue;
        };
        for s in series.iter_mut().filter(|s| !s.markers_only) {
            let mates: Vec<&Series> = others
                .iter()
                .filter_map(|d| match d.panels.get(k) {
                    Some(Panel::Lines { series, .. }) => series.iter().find(|o| o.label == s.label),
                    _ => None,
                })
                .collect();
            if mates.is_empty() {
                continue;
            }
            s.band = s
                .points
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .map(|&(x, y)| {
                    let (lo, hi) = mates
                        .iter()
                        .filter_map(|m| at(&m.points, x))
                        .fold((y, y), |(lo, hi), v| (lo.min(v), hi.max(v)));
                    (x, lo, hi)
                })
                .collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(points: Vec<(f64, f64)>) -> Drawing {
        Drawing {
            panels: vec![Panel::Lines {
                title: "t".into(),
                x_label: "x".into(),
                y_label: "y".into(),
                series: vec![Series {
                    label: "a".into(),
                    points,
                    markers_only: false,
                    band: Vec::new(),
                }],
            }],
            cols: 1,
        }
    }

    #[test]
    fn the_band_spans_every_seed_at_the_first_seeds_x() {
        let mut first = lines(vec![(0.0, 1.0), (1.0, 0.5), (2.0, 0.2)]);
        let others = [
            lines(vec![(0.0, 1.2), (2.0, 0.4)]),
            lines(vec![(0.5, 0.3), (1.5, 0.1)]),
        ];
        attach(&mut first, &others);
        let Panel::Lines { series, .. } = &first.panels[0] else {
            unreachable!()
        };
        // x = 0: seeds 1 and 2 (1.0, 1.2); the third starts at 0.5. x = 1: 0.5, 0.8, 0.2.
        // x = 2: 0.2, 0.4; the third ends at 1.5.
        assert_eq!(
            series[0].band,
            vec![(0.0, 1.0, 1.2), (1.0, 0.2, 0.8), (2.0, 0.2, 0.4)]
        );
    }

    #[test]
    fn one_seed_draws_no_band() {
        let mut first = lines(vec![(0.0, 1.0)]);
        attach(&mut first, &[]);
        let Panel::Lines { series, .. } = &first.panels[0] else {
            unreachable!()
        };
        assert!(series[0].band.is_empty());
    }
}
