//! Line, bar and heatmap panels drawn with plotters into SVG and PNG, with an embedded font
//! (DejaVu Sans from the `dejavu` crate) so no system font packages are needed. Every figure
//! takes its style from [`crate::theme`]: one colour per series across its panels, titles and
//! category labels fitted to their room with the font's metrics, legends beside the data
//! (never over it), colour scales on heatmaps, and tick labels without float noise.

use crate::theme::{self, SeriesColors, LABEL_SIZE, TITLE_SIZE};
use anyhow::{anyhow, bail, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// Registers DejaVu Sans as "sans-serif" for the bitmap backend.
pub fn register_fonts() -> Result<()> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| anyhow!("embedded DejaVu Sans font is invalid"))?;
    plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold())
        .map_err(|_| anyhow!("embedded DejaVu Sans Bold font is invalid"))
}

/// One named series of points.
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Points.
    pub points: Vec<(f64, f64)>,
    /// Draw dashed-looking (points only) instead of a line.
    pub markers_only: bool,
    /// `(x, min, max)` over the run's seeds, drawn as a shaded band under the line (empty:
    /// one seed, or a series the other seeds lack). See [`crate::bands`].
    pub band: Vec<(f64, f64, f64)>,
}

/// A figure's panels and how many columns they are laid out in.
pub struct Drawing {
    /// The panels, in order.
    pub panels: Vec<Panel>,
    /// Columns of the grid.
    pub cols: usize,
}

/// One panel of a figure. Every axis has a title ([`render`] refuses one without).
pub enum Panel {
    /// Lines over a numeric x axis. An x axis whose values are all whole numbers over a short
    /// range (a clock differential, a count) gets whole-number ticks and a marker per point.
    Lines {
        /// Panel title.
        title: String,
        /// X axis title, with its unit.
        x_label: String,
        /// Y axis title, with its unit.
        y_label: String,
        /// Data.
        series: Vec<Series>,
    },
    /// Grouped bars over categories. A bar of value 0 is labelled "0" and a missing one (NaN)
    /// "n/a", so the two do not look alike.
    Bars {
        /// Panel title.
        title: String,
        /// X axis title: what the categories are.
        x_label: String,
        /// Y axis title, with its unit.
        y_label: String,
        /// Category names.
        categories: Vec<String>,
        /// (group label, one value per category).
        groups: Vec<(String, Vec<f64>)>,
    },
    /// A table of ratios coloured on a log scale around 1 (green below, red above), each cell
    /// labelled with its value; a missing value is a grey cell marked `-`. A colour scale
    /// beside it says what the colours mean.
    Heatmap {
        /// Panel title.
        title: String,
        /// X axis title: what the columns are.
        x_label: String,
        /// Y axis title: what the rows are.
        y_label: String,
        /// What a cell's value is (the colour scale's title).
        scale_label: String,
        /// Row names, top to bottom.
        rows: Vec<String>,
        /// Column names, left to right.
        cols: Vec<String>,
        /// `values[row][col]`.
        values: Vec<Vec<Option<f64>>>,
    },
}

impl Panel {
    fn title(&self) -> &str {
        match self {
            Panel::Lines { title, .. }
            | Panel::Bars { title, .. }
            | Panel::Heatmap { title, .. } => title,
        }
    }

    /// The axis titles, x then y.
    fn axis_titles(&self) -> (&str, &str) {
        match self {
            Panel::Lines {
                x_label, y_label, ..
            }
            | Panel::Bars {
                x_label, y_label, ..
            }
            | Panel::Heatmap {
                x_label, y_label, ..
            } => (x_label, y_label),
        }
    }

    /// The legend's labels, in the order they are drawn ([`theme::legend_order`]).
    fn legend_labels(&self) -> Vec<&str> {
        let labels: Vec<&str> = match self {
            Panel::Lines { series, .. } => series.iter().map(|s| s.label.as_str()).collect(),
            Panel::Bars { groups, .. } => groups.iter().map(|g| g.0.as_str()).collect(),
            Panel::Heatmap { .. } => Vec::new(),
        };
        theme::legend_order(&labels)
            .into_iter()
            .map(|i| labels[i])
            .collect()
    }
}

/// Width (pixels) of a legend entry's label before it is shrunk or wrapped.
const LEGEND_TEXT_MAX: u32 = 190;
/// The swatch and the gaps around it, left of a legend label.
const LEGEND_SWATCH: u32 = 34;
/// Width of a heatmap's colour scale, its labels and title.
const SCALE_WIDTH: u32 = 120;
/// Height of one line of text at `size`, with its leading.
fn line_height(size: f64) -> u32 {
    theme::text_size("Ag", size).1 + 3
}

/// A legend entry's label as drawn: its size and lines.
fn legend_text(label: &str) -> (f64, Vec<String>) {
    theme::fit(label, LABEL_SIZE, LEGEND_TEXT_MAX)
}

/// The width of `panel`'s legend, beside its plot (0: no legend).
fn legend_width(panel: &Panel) -> u32 {
    let widest = panel
        .legend_labels()
        .iter()
        .flat_map(|l| {
            let (size, lines) = legend_text(l);
            lines
                .into_iter()
                .map(move |line| theme::text_size(&line, size).0)
        })
        .max();
    widest.map_or(0, |w| w + LEGEND_SWATCH + 16)
}

/// Cell colour of ratio `v`: white at 1, saturating at 1/4 (green) and 4 (red).
fn heat_color(v: f64) -> RGBColor {
    let t = (v.log2() / 2.0).clamp(-1.0, 1.0);
    let mix = |a: u8, b: u8, f: f64| (f64::from(a) + (f64::from(b) - f64::from(a)) * f) as u8;
    if t < 0.0 {
        let f = -t;
        RGBColor(mix(255, 26, f), mix(255, 150, f), mix(255, 65, f))
    } else {
        RGBColor(mix(255, 215, t), mix(255, 48, t), mix(255, 39, t))
    }
}

/// Pixel size of one grid cell of a figure of `panels`: 560 x 400 for the plot, wider by the
/// widest legend, and taller and wider where a heatmap needs room for its rows, columns and
/// colour scale.
fn cell_size(panels: &[Panel]) -> (u32, u32) {
    let (mut w, mut h) = (560u32, 400u32);
    let legend = panels.iter().map(legend_width).max().unwrap_or(0);
    w += legend;
    for p in panels {
        if let Panel::Heatmap { rows, cols, .. } = p {
            let row_labels = rows
                .iter()
                .map(|r| theme::text_size(r, LABEL_SIZE).0)
                .max()
                .unwrap_or(0);
            h = h.max(24 * rows.len() as u32 + 170);
            w = w.max(row_labels + 60 + 95 * cols.len() as u32 + SCALE_WIDTH);
        }
    }
    (w, h)
}

/// The bounds of a line panel's data: x padded 5% right, y from 0 where the data are close to
/// it, else 5% below their least, and 5% above their most.
fn bounds(series: &[Series]) -> (f64, f64, f64, f64) {
    let pts = series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|p| p.0.is_finite() && p.1.is_finite());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        return (0.0, 1.0, 0.0, 1.0);
    }
    let pad = |a: f64, b: f64| {
        if (b - a).abs() < 1e-12 {
            (a - 0.5, b + 0.5)
        } else {
            (a, b + (b - a) * 0.05)
        }
    };
    let (x0, x1) = pad(x0, x1);
    let (y0, y1) = pad(y0.min(0.0).max(y0 - (y1 - y0) * 0.05), y1);
    (x0, x1, y0, y1)
}

/// Whether every x value of `series` is a whole number and they span at most 40: such an
/// axis is drawn with whole-number ticks (a clock differential has no tick at -1.9).
fn whole_number_x(series: &[Series]) -> bool {
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|x| x.is_finite())
        .collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    !xs.is_empty() && hi - lo <= 40.0 && xs.iter().all(|x| (x - x.round()).abs() < 1e-9)
}

/// Room (pixels) left of the plot for the y tick labels and the y axis title.
fn y_label_room(lo: f64, hi: f64) -> u32 {
    let widest = theme::ticks(lo, hi, 10)
        .iter()
        .map(|&v| theme::text_size(&theme::tick_label(v), LABEL_SIZE).0)
        .max()
        .unwrap_or(0);
    widest + 12 + line_height(LABEL_SIZE) + 6
}

type Err<DB> = DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>;

fn drawing_failed<DB: DrawingBackend>(e: Err<DB>) -> anyhow::Error
where
    DB::ErrorType: 'static,
{
    anyhow!("drawing failed: {e:?}")
}

/// Draws `text` on `area` at `(x, y)` (pixels within it) in `size`, anchored by `h`, `v`.
fn label<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    (x, y): (i32, i32),
    size: f64,
    (h, v): (HPos, VPos),
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let style = TextStyle::from(theme::font(size))
        .color(&BLACK)
        .pos(Pos::new(h, v));
    area.draw(&Text::new(text.to_string(), (x, y), style))
        .map_err(drawing_failed::<DB>)
}

/// Draws the panel's title, fitted to its width, at the top of `area`; returns the area below.
fn draw_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
) -> Result<DrawingArea<DB, Shift>>
where
    DB::ErrorType: 'static,
{
    let (w, _) = area.dim_in_pixel();
    let (size, lines) = theme::fit(title, TITLE_SIZE, w.saturating_sub(24));
    let lh = line_height(size);
    let mut y = 6;
    for line in &lines {
        label(
            area,
            line,
            (w as i32 / 2, y),
            size,
            (HPos::Center, VPos::Top),
        )?;
        y += lh as i32;
    }
    Ok(area.split_vertically(y + 6).1)
}

/// What a legend entry's swatch is: a line, a point marker or a filled box.
#[derive(Clone, Copy)]
enum Swatch {
    Line,
    Marker,
    Box,
}

/// Draws a legend of `entries` top-down in `area` (beside the plot): each entry its swatch in
/// the series' colour, then its label.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(&str, Swatch, RGBColor)],
    top: i32,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let mut y = top;
    for &(text, swatch, color) in entries {
        let (size, lines) = legend_text(text);
        let lh = line_height(size) as i32;
        let mid = y + lh / 2;
        let shape: DynElement<DB, (i32, i32)> = match swatch {
            Swatch::Line => {
                PathElement::new(vec![(8, mid), (30, mid)], color.stroke_width(2)).into_dyn()
            }
            Swatch::Marker => Circle::new((19, mid), 4, color.filled()).into_dyn(),
            Swatch::Box => {
                Rectangle::new([(12, mid - 6), (26, mid + 6)], color.filled()).into_dyn()
            }
        };
        area.draw(&shape).map_err(drawing_failed::<DB>)?;
        for line in &lines {
            label(
                area,
                line,
                (LEGEND_SWATCH as i32 + 4, y + lh / 2),
                size,
                (HPos::Left, VPos::Center),
            )?;
            y += lh;
        }
        y += 4;
    }
    Ok(())
}

/// Splits `area` into the plot and, when `panel` has a legend, the legend beside it.
fn split_legend<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    panel: &Panel,
) -> (DrawingArea<DB, Shift>, Option<DrawingArea<DB, Shift>>) {
    let lw = legend_width(panel);
    if lw == 0 {
        return (area, None);
    }
    let (w, _) = area.dim_in_pixel();
    let (plot, legend) = area.split_horizontally(w.saturating_sub(lw) as i32);
    (plot, Some(legend))
}

/// Category labels under slots of `slot` pixels: one size for all and the lines of each.
/// The largest size down to 10 at which every label fits its slot on one line; else the
/// largest at which each fits in two lines broken at its breaks ([`theme::wrap`]); else
/// wrapped at the smallest size.
fn category_text(categories: &[String], slot: u32) -> (f64, Vec<Vec<String>>) {
    let room = slot.saturating_sub(6).max(1);
    let one_line = |size: f64| {
        categories
            .iter()
            .all(|c| theme::text_size(c, size).0 <= room)
    };
    for size in [LABEL_SIZE, LABEL_SIZE - 1.0, LABEL_SIZE - 2.0] {
        if one_line(size) {
            return (size, categories.iter().map(|c| vec![c.clone()]).collect());
        }
    }
    let wrapped = |size: f64| -> Vec<Vec<String>> {
        categories
            .iter()
            .map(|c| theme::wrap(c, size, room))
            .collect()
    };
    let mut size = LABEL_SIZE;
    while size > theme::MIN_SIZE {
        let lines = wrapped(size);
        let fits = lines
            .iter()
            .all(|l| l.len() <= 2 && l.iter().all(|part| theme::text_size(part, size).0 <= room));
        if fits {
            return (size, lines);
        }
        size -= 1.0;
    }
    (theme::MIN_SIZE, wrapped(theme::MIN_SIZE))
}

/// The room under a plot for category labels of `lines` lines at `size` and the axis title.
fn category_room(size: f64, lines: usize) -> u32 {
    8 + lines.max(1) as u32 * line_height(size) + line_height(LABEL_SIZE) + 6
}

/// Draws category labels centred at the pixel columns `centres` (of the panel `area`), from
/// `top` down.
fn draw_categories<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    labels: &[Vec<String>],
    size: f64,
    centres: &[i32],
    top: i32,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let lh = line_height(size) as i32;
    for (lines, &x) in labels.iter().zip(centres) {
        for (i, line) in lines.iter().enumerate() {
            label(
                area,
                line,
                (x, top + i as i32 * lh),
                size,
                (HPos::Center, VPos::Top),
            )?;
        }
    }
    Ok(())
}

/// The plot's pixel width left for the data, in an area `w` wide with `y_room` for the y
/// labels (plotters' margin of 10 on both sides).
fn data_width(w: u32, y_room: u32) -> u32 {
    w.saturating_sub(y_room + 20).max(1)
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    colors: &SeriesColors,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let err = drawing_failed::<DB>;
    let body = draw_title(area, panel.title())?;
    let (plot, legend) = split_legend(body, panel);
    let origin = area.get_base_pixel();
    let legend_top = 10;
    match panel {
        Panel::Lines {
            x_label,
            y_label,
            series,
            ..
        } => {
            let (x0, x1, y0, y1) = bounds(series);
            let whole = whole_number_x(series);
            let y_room = y_label_room(y0, y1);
            let mut chart = ChartBuilder::on(&plot)
                .margin(10)
                .x_label_area_size(category_room(LABEL_SIZE, 1))
                .y_label_area_size(y_room)
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(err)?;
            let x_ticks = if whole {
                ((x1 - x0).ceil() as usize + 1).min(21)
            } else {
                10
            };
            chart
                .configure_mesh()
                .x_desc(x_label.as_str())
                .y_desc(y_label.as_str())
                .x_labels(x_ticks)
                .x_label_formatter(&|x| {
                    if whole && (x - x.round()).abs() > 1e-9 {
                        String::new()
                    } else {
                        theme::axis_tick(*x, x1 - x0)
                    }
                })
                .y_label_formatter(&|y| theme::axis_tick(*y, y1 - y0))
                .label_style(theme::font(LABEL_SIZE))
                .axis_desc_style(theme::font(LABEL_SIZE))
                .light_line_style(TRANSPARENT)
                .draw()
                .map_err(err)?;
            let order =
                theme::legend_order(&series.iter().map(|s| s.label.as_str()).collect::<Vec<_>>());
            let mut entries = Vec::new();
            for s in order.iter().map(|&i| &series[i]) {
                let color = colors.of(&s.label);
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .copied()
                    .filter(|p| p.0.is_finite() && p.1.is_finite())
                    .collect();
                let band: Vec<(f64, f64, f64)> = s
                    .band
                    .iter()
                    .copied()
                    .filter(|b| b.0.is_finite() && b.1.is_finite() && b.2.is_finite())
                    .collect();
                if band.len() > 1 {
                    let outline: Vec<(f64, f64)> = band
                        .iter()
                        .map(|b| (b.0, b.2.clamp(y0, y1)))
                        .chain(band.iter().rev().map(|b| (b.0, b.1.clamp(y0, y1))))
                        .collect();
                    chart
                        .draw_series(std::iter::once(Polygon::new(outline, color.mix(0.18))))
                        .map_err(err)?;
                }
                if s.markers_only {
                    chart
                        .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                        .map_err(err)?;
                    entries.push((s.label.as_str(), Swatch::Marker, color));
                } else {
                    if whole {
                        chart
                            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                            .map_err(err)?;
                    }
                    chart
                        .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                        .map_err(err)?;
                    entries.push((s.label.as_str(), Swatch::Line, color));
                }
            }
            if let Some(legend) = &legend {
                draw_legend(legend, &entries, legend_top)?;
            }
        }
        Panel::Bars {
            x_label,
            y_label,
            categories,
            groups,
            ..
        } => {
            let y1 = groups
                .iter()
                .flat_map(|g| g.1.iter())
                .copied()
                .filter(|v| v.is_finite())
                .fold(0.0f64, f64::max)
                * 1.1
                + 1e-9;
            let n = categories.len().max(1);
            let y_room = y_label_room(0.0, y1);
            let slot = data_width(plot.dim_in_pixel().0, y_room) / n as u32;
            let (cat_size, cat_lines) = category_text(categories, slot);
            let lines = cat_lines.iter().map(Vec::len).max().unwrap_or(1);
            let mut chart = ChartBuilder::on(&plot)
                .margin(10)
                .x_label_area_size(category_room(cat_size, lines))
                .y_label_area_size(y_room)
                .build_cartesian_2d(0.0..n as f64, 0.0..y1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(0)
                .x_desc(x_label.as_str())
                .y_desc(y_label.as_str())
                .y_label_formatter(&|y| theme::axis_tick(*y, y1))
                .label_style(theme::font(LABEL_SIZE))
                .axis_desc_style(theme::font(LABEL_SIZE))
                .light_line_style(TRANSPARENT)
                .draw()
                .map_err(err)?;
            let order =
                theme::legend_order(&groups.iter().map(|g| g.0.as_str()).collect::<Vec<_>>());
            let g = groups.len().max(1) as f64;
            let w = 0.8 / g;
            let mut entries = Vec::new();
            let mut marks: Vec<(f64, String)> = Vec::new();
            for (gi, (label_text, values)) in order.iter().map(|&i| &groups[i]).enumerate() {
                let color = colors.of(label_text);
                chart
                    .draw_series(
                        values
                            .iter()
                            .enumerate()
                            .filter(|(_, v)| v.is_finite() && **v > 0.0)
                            .map(|(ci, &v)| {
                                let x = ci as f64 + 0.1 + gi as f64 * w;
                                Rectangle::new([(x, 0.0), (x + w * 0.95, v)], color.filled())
                            }),
                    )
                    .map_err(err)?;
                for (ci, v) in values.iter().enumerate() {
                    let centre = ci as f64 + 0.1 + gi as f64 * w + w * 0.475;
                    if v.is_nan() {
                        marks.push((centre, "n/a".to_string()));
                    } else if *v <= 0.0 {
                        marks.push((centre, "0".to_string()));
                    } else if *v < y1 / 100.0 {
                        // Under 1% of the axis a bar is a hairline: its value says it is there.
                        marks.push((centre, theme::significant(*v, 2)));
                    }
                }
                entries.push((label_text.as_str(), Swatch::Box, color));
            }
            // A zero bar says "0", a missing one "n/a" and a hairline its value, just above the
            // axis: upright where the bar's width leaves room, else turned.
            let bar_px = (slot as f64 * w * 0.95) as u32;
            for (x, text) in marks {
                let (px, py) = chart.backend_coord(&(x, 0.0));
                let at = (px - origin.0, py - origin.1 - 3);
                if theme::text_size(&text, theme::MIN_SIZE).0 + 2 <= bar_px.max(1) {
                    label(
                        area,
                        &text,
                        at,
                        theme::MIN_SIZE,
                        (HPos::Center, VPos::Bottom),
                    )?;
                } else {
                    upright_label(area, &text, at)?;
                }
            }
            let centres: Vec<i32> = (0..categories.len())
                .map(|ci| chart.backend_coord(&(ci as f64 + 0.5, 0.0)).0 - origin.0)
                .collect();
            let axis_y = chart.backend_coord(&(0.0, 0.0)).1 - origin.1;
            draw_categories(area, &cat_lines, cat_size, &centres, axis_y + 6)?;
            if let Some(legend) = &legend {
                draw_legend(legend, &entries, legend_top)?;
            }
        }
        Panel::Heatmap {
            x_label,
            y_label,
            scale_label,
            rows,
            cols,
            values,
            ..
        } => {
            let (nr, nc) = (rows.len().max(1), cols.len().max(1));
            let (w, _) = plot.dim_in_pixel();
            let (heat, scale) = plot.split_horizontally(w.saturating_sub(SCALE_WIDTH) as i32);
            let y_room = rows
                .iter()
                .map(|r| theme::text_size(r, LABEL_SIZE).0)
                .max()
                .unwrap_or(0)
                + 12
                + line_height(LABEL_SIZE)
                + 6;
            let slot = data_width(heat.dim_in_pixel().0, y_room) / nc as u32;
            let (col_size, col_lines) = category_text(cols, slot);
            let lines = col_lines.iter().map(Vec::len).max().unwrap_or(1);
            let mut chart = ChartBuilder::on(&heat)
                .margin(10)
                .x_label_area_size(category_room(col_size, lines))
                .y_label_area_size(y_room)
                .build_cartesian_2d(0.0..nc as f64, 0.0..nr as f64)
                .map_err(err)?;
            let rn = rows.clone();
            chart
                .configure_mesh()
                .disable_mesh()
                .x_labels(0)
                .y_labels(nr * 2 + 1)
                .x_desc(x_label.as_str())
                .y_desc(y_label.as_str())
                .y_label_formatter(&move |y| {
                    let i = y.floor() as usize;
                    // row 0 is drawn at the top
                    if (y - i as f64 - 0.5).abs() < 0.26 && i < rn.len() {
                        rn[rn.len() - 1 - i].clone()
                    } else {
                        String::new()
                    }
                })
                .label_style(theme::font(LABEL_SIZE))
                .axis_desc_style(theme::font(LABEL_SIZE))
                .light_line_style(TRANSPARENT)
                .draw()
                .map_err(err)?;
            for (r, row) in values.iter().enumerate() {
                let y = (nr - 1 - r) as f64;
                for (c, v) in row.iter().enumerate() {
                    let x = c as f64;
                    let fill = v
                        .filter(|v| v.is_finite() && *v > 0.0)
                        .map_or(RGBColor(200, 200, 200), heat_color);
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x, y), (x + 1.0, y + 1.0)],
                            fill.filled(),
                        )))
                        .map_err(err)?;
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x, y), (x + 1.0, y + 1.0)],
                            WHITE.stroke_width(1),
                        )))
                        .map_err(err)?;
                    let text = match v {
                        Some(v) if v.is_finite() => format!("{v:.2}"),
                        _ => "-".to_string(),
                    };
                    chart
                        .draw_series(std::iter::once(Text::new(
                            text,
                            (x + 0.5, y + 0.5),
                            TextStyle::from(theme::font(LABEL_SIZE))
                                .color(&BLACK)
                                .pos(Pos::new(HPos::Center, VPos::Center)),
                        )))
                        .map_err(err)?;
                }
            }
            let centres: Vec<i32> = (0..cols.len())
                .map(|ci| chart.backend_coord(&(ci as f64 + 0.5, 0.0)).0 - origin.0)
                .collect();
            let axis_y = chart.backend_coord(&(0.0, 0.0)).1 - origin.1;
            draw_categories(area, &col_lines, col_size, &centres, axis_y + 6)?;
            let top = chart.backend_coord(&(0.0, nr as f64)).1 - scale.get_base_pixel().1;
            draw_scale(&scale, scale_label, top.max(0))?;
        }
    }
    Ok(())
}

/// A zero, missing or hairline bar's label where the bar is too narrow for it upright: drawn
/// turned (reading upwards) above the axis.
fn upright_label<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    (x, y): (i32, i32),
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let style = TextStyle::from(theme::font(theme::MIN_SIZE).transform(FontTransform::Rotate270))
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    area.draw(&Text::new(text.to_string(), (x, y), style))
        .map_err(drawing_failed::<DB>)
}

/// The heatmap's colour scale in `area`: its title, then a bar from 1/4 (green, bottom) to 4
/// (red, top) through 1 (white) on a log scale, labelled at each power of two, from the pixel
/// row `top` (of `area`) down, and a grey swatch for "no value".
fn draw_scale<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    top: i32,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let err = drawing_failed::<DB>;
    let (w, h) = area.dim_in_pixel();
    let size = LABEL_SIZE - 1.0;
    let lines = theme::wrap(title, size, w.saturating_sub(12));
    let lh = line_height(size) as i32;
    let mut y = top;
    for line in &lines {
        label(area, line, (6, y), size, (HPos::Left, VPos::Top))?;
        y += lh;
    }
    let bar_top = y + 10;
    let bar_bottom = (h as i32 - 60).max(bar_top + 60);
    let steps = 64;
    let span = (bar_bottom - bar_top) as f64;
    for i in 0..steps {
        // log2 ratio from 2 at the top to -2 at the bottom
        let t0 = i as f64 / steps as f64;
        let t1 = (i + 1) as f64 / steps as f64;
        let v = 2f64.powf(2.0 - 4.0 * (t0 + t1) / 2.0);
        let (ya, yb) = (
            bar_top + (t0 * span) as i32,
            bar_top + (t1 * span).ceil() as i32,
        );
        area.draw(&Rectangle::new(
            [(10, ya), (28, yb)],
            heat_color(v).filled(),
        ))
        .map_err(err)?;
    }
    area.draw(&Rectangle::new(
        [(10, bar_top), (28, bar_bottom)],
        BLACK.stroke_width(1),
    ))
    .map_err(err)?;
    for (k, text) in [(2, "4"), (1, "2"), (0, "1"), (-1, "1/2"), (-2, "1/4")] {
        let t = (2 - k) as f64 / 4.0;
        let ty = bar_top + (t * span) as i32;
        area.draw(&PathElement::new(vec![(28, ty), (32, ty)], BLACK))
            .map_err(err)?;
        label(area, text, (36, ty), LABEL_SIZE, (HPos::Left, VPos::Center))?;
    }
    let grey = bar_bottom + 16;
    area.draw(&Rectangle::new(
        [(10, grey), (28, grey + 14)],
        RGBColor(200, 200, 200).filled(),
    ))
    .map_err(err)?;
    label(
        area,
        "no value",
        (36, grey + 7),
        LABEL_SIZE,
        (HPos::Left, VPos::Center),
    )
}

fn draw_all<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    panels: &[Panel],
    cols: usize,
    colors: &SeriesColors,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| anyhow!("{e:?}"))?;
    let rows = panels.len().div_ceil(cols);
    let areas = root.split_evenly((rows, cols));
    for (a, p) in areas.iter().zip(panels) {
        draw_panel(a, p, colors)?;
    }
    root.present()
        .map_err(|e| anyhow!("cannot write figure: {e:?}"))?;
    Ok(())
}

/// Renders `panels` in a grid of `cols` columns to `<dir>/<id>.svg` and `<dir>/<id>.png`.
///
/// # Errors
/// A panel without an axis title (figure `id` and the panel named), or an image that cannot
/// be drawn or written.
pub fn render(dir: &Path, id: &str, panels: &[Panel], cols: usize) -> Result<()> {
    for p in panels {
        let (x, y) = p.axis_titles();
        for (axis, t) in [("x", x), ("y", y)] {
            if t.trim().is_empty() {
                bail!(
                    "figure {id}: panel '{}' has no {axis} axis title",
                    p.title()
                );
            }
        }
    }
    let cols = cols.max(1);
    let mut colors = SeriesColors::default();
    for p in panels {
        colors.assign(p.legend_labels());
    }
    let (cw, ch) = cell_size(panels);
    let size = (cw * cols as u32, ch * panels.len().div_ceil(cols) as u32);
    let svg = dir.join(format!("{id}.svg"));
    let png = dir.join(format!("{id}.png"));
    draw_all(
        SVGBackend::new(&svg, size).into_drawing_area(),
        panels,
        cols,
        &colors,
    )?;
    let (w, h) = size;
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    draw_all(
        BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area(),
        panels,
        cols,
        &colors,
    )?;
    write_png(&png, w, h, &rgb)
}

/// Encodes an RGB buffer of `w` x `h` pixels as a PNG file at `path`.
fn write_png(path: &Path, w: u32, h: u32, rgb: &[u8]) -> Result<()> {
    let file = std::fs::File::create(path)
        .map_err(|e| anyhow!("cannot write figure {}: {e}", path.display()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()
        .and_then(|mut wr| wr.write_image_data(rgb))
        .map_err(|e| anyhow!("cannot write figure {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars(x_label: &str, y_label: &str) -> Panel {
        Panel::Bars {
            title: "t".into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            categories: vec!["a".into()],
            groups: vec![("g".into(), vec![1.0])],
        }
    }

    #[test]
    fn a_panel_without_an_axis_title_is_refused_by_name() {
        register_fonts().unwrap();
        let dir = std::env::temp_dir().join(format!("figures-chart-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = render(&dir, "fig", &[bars("", "ms")], 1).unwrap_err();
        assert_eq!(e.to_string(), "figure fig: panel 't' has no x axis title");
        let e = render(&dir, "fig", &[bars("mode", " ")], 1).unwrap_err();
        assert_eq!(e.to_string(), "figure fig: panel 't' has no y axis title");
        assert!(!dir.join("fig.svg").exists());
        render(&dir, "fig", &[bars("mode", "ms")], 1).unwrap();
        assert!(dir.join("fig.svg").exists() && dir.join("fig.png").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn whole_number_axes_are_told_apart() {
        let s = |pts: Vec<(f64, f64)>| Series {
            label: "s".into(),
            points: pts,
            markers_only: false,
            band: Vec::new(),
        };
        assert!(whole_number_x(&[s(vec![(-2.0, 0.5), (-1.0, 0.5)])]));
        assert!(!whole_number_x(&[s(vec![(0.0, 0.5), (0.5, 0.5)])]));
        // A long run's iterations are whole numbers too, but too many for a tick each.
        assert!(!whole_number_x(&[s(vec![(0.0, 0.5), (200.0, 0.5)])]));
    }
}
