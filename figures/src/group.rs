//! Grouping CSV rows into chart data: line series per panel, and grouped bars per category.
//! Every figure that splits a table by one or two columns goes through here.

use crate::chart::{Panel, Series};
use crate::table::Table;
use anyhow::Result;
use std::collections::BTreeMap;

/// Panel key -> series label -> points, both keys sorted.
pub type Nested = BTreeMap<String, BTreeMap<String, Vec<(f64, f64)>>>;

/// Groups the rows of `t` by `row(i)`, which returns `(panel, series, (x, y))` or None to skip
/// the row.
///
/// # Errors
/// Whatever `row` returns (a missing column or a non-numeric cell).
pub fn nested_series(
    t: &Table,
    mut row: impl FnMut(usize) -> Result<Option<(String, String, (f64, f64))>>,
) -> Result<Nested> {
    let mut out = Nested::new();
    for i in 0..t.len() {
        if let Some((panel, series, point)) = row(i)? {
            out.entry(panel)
                .or_default()
                .entry(series)
                .or_default()
                .push(point);
        }
    }
    Ok(out)
}

/// One line panel per key of `nested`, titled `title(key)`.
pub fn line_panels(
    nested: Nested,
    title: impl Fn(&str) -> String,
    x_label: &str,
    y_label: &str,
) -> Vec<Panel> {
    nested
        .into_iter()
        .map(|(key, series)| Panel::Lines {
            title: title(&key),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series: lines(series),
        })
        .collect()
}

/// One line series per label of `by_label`, in label order.
pub fn lines(by_label: BTreeMap<String, Vec<(f64, f64)>>) -> Vec<Series> {
    by_label
        .into_iter()
        .map(|(label, points)| Series {
            label,
            points,
            markers_only: false,
            band: Vec::new(),
        })
        .collect()
}

/// Category names, and per group its label and one value per category.
pub type Bars = (Vec<String>, Vec<(String, Vec<f64>)>);

/// Categories (in first-appearance order) and, per group (sorted), one value per category
/// (NaN where a group has none), from the `(category, group, value)` of every row `row`
/// does not skip (None).
///
/// # Errors
/// Whatever `row` returns.
pub fn category_bars(
    t: &Table,
    mut row: impl FnMut(usize) -> Result<Option<(String, String, f64)>>,
) -> Result<Bars> {
    let mut rows = Vec::with_capacity(t.len());
    let mut categories: Vec<String> = Vec::new();
    for i in 0..t.len() {
        let Some(r) = row(i)? else { continue };
        if !categories.contains(&r.0) {
            categories.push(r.0.clone());
        }
        rows.push(r);
    }
    let mut groups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (c, g, v) in rows {
        let ci = categories.iter().position(|x| *x == c).unwrap_or(0);
        groups
            .entry(g)
            .or_insert_with(|| vec![f64::NAN; categories.len()])[ci] = v;
    }
    Ok((categories, groups.into_iter().collect()))
}
