//! Line, bar and heatmap panels drawn with plotters into SVG and PNG, with an embedded font
//! (DejaVu Sans from the `dejavu` crate) so no system font packages are needed.

use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
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

/// One panel of a figure.
pub enum Panel {
    /// Lines over a numeric x axis.
    Lines {
        /// Panel title.
        title: String,
        /// X axis label.
        x_label: String,
        /// Y axis label.
        y_label: String,
        /// Data.
        series: Vec<Series>,
    },
    /// Grouped bars over categories.
    Bars {
        /// Panel title.
        title: String,
        /// Y axis label.
        y_label: String,
        /// Category names.
        categories: Vec<String>,
        /// (group label, one value per category).
        groups: Vec<(String, Vec<f64>)>,
    },
    /// A table of ratios coloured on a log scale around 1 (green below, red above), each cell
    /// labelled with its value; a missing value is a grey cell marked `-`.
    Heatmap {
        /// Panel title.
        title: String,
        /// Row names, top to bottom.
        rows: Vec<String>,
        /// Column names, left to right.
        cols: Vec<String>,
        /// `values[row][col]`.
        values: Vec<Vec<Option<f64>>>,
    },
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

/// Pixel size of a figure of `panels` in `cols` columns: 560 x 400 per cell, taller and wider
/// where a heatmap needs room for its rows and labels.
fn figure_size(panels: &[Panel], cols: usize) -> (u32, u32) {
    let grid_rows = panels.len().div_ceil(cols.max(1)) as u32;
    let (mut w, mut h) = (560u32, 400u32);
    for p in panels {
        if let Panel::Heatmap { rows, cols, .. } = p {
            h = h.max(24 * rows.len() as u32 + 140);
            w = w.max(330 + 95 * cols.len() as u32);
        }
    }
    (w * cols as u32, h * grid_rows)
}

const PALETTE: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
    RGBColor(255, 187, 120),
];

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

fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, panel: &Panel) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("drawing failed: {e:?}");
    match panel {
        Panel::Lines {
            title,
            x_label,
            y_label,
            series,
        } => {
            let (x0, x1, y0, y1) = bounds(series);
            let mut chart = ChartBuilder::on(area)
                .caption(title, ("sans-serif", 18))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc(x_label.as_str())
                .y_desc(y_label.as_str())
                .label_style(("sans-serif", 12))
                .draw()
                .map_err(err)?;
            for (i, s) in series.iter().enumerate() {
                let color = PALETTE[i % PALETTE.len()];
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
                        .map_err(err)?
                        .label(s.label.as_str())
                        .legend(move |(x, y)| Circle::new((x + 10, y), 3, color.filled()));
                } else {
                    chart
                        .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                        .map_err(err)?
                        .label(s.label.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                        });
                }
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .label_font(("sans-serif", 12))
                .draw()
                .map_err(err)?;
        }
        Panel::Bars {
            title,
            y_label,
            categories,
            groups,
        } => {
            let y1 = groups
                .iter()
                .flat_map(|g| g.1.iter())
                .copied()
                .filter(|v| v.is_finite())
                .fold(0.0f64, f64::max)
                * 1.1
                + 1e-9;
            let n = categories.len() as f64;
            let mut chart = ChartBuilder::on(area)
                .caption(title, ("sans-serif", 18))
                .margin(10)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d(0.0..n, 0.0..y1)
                .map_err(err)?;
            let cats = categories.clone();
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(categories.len() * 2 + 1)
                .x_label_formatter(&move |x| {
                    let i = x.floor() as usize;
                    if (x - i as f64 - 0.5).abs() < 0.26 && i < cats.len() {
                        cats[i].clone()
                    } else {
                        String::new()
                    }
                })
                .y_desc(y_label.as_str())
                .label_style(("sans-serif", 12))
                .draw()
                .map_err(err)?;
            let g = groups.len().max(1) as f64;
            let w = 0.8 / g;
            for (gi, (label, values)) in groups.iter().enumerate() {
                let color = PALETTE[gi % PALETTE.len()];
                chart
                    .draw_series(
                        values
                            .iter()
                            .enumerate()
                            .filter(|(_, v)| v.is_finite())
                            .map(|(ci, &v)| {
                                let x = ci as f64 + 0.1 + gi as f64 * w;
                                Rectangle::new(
                                    [(x, 0.0), (x + w * 0.95, v.max(0.0))],
                                    color.filled(),
                                )
                            }),
                    )
                    .map_err(err)?
                    .label(label.as_str())
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
                    });
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .label_font(("sans-serif", 12))
                .draw()
                .map_err(err)?;
        }
        Panel::Heatmap {
            title,
            rows,
            cols,
            values,
        } => {
            let (nr, nc) = (rows.len().max(1), cols.len().max(1));
            let mut chart = ChartBuilder::on(area)
                .caption(title, ("sans-serif", 18))
                .margin(10)
                .x_label_area_size(30)
                .y_label_area_size(300)
                .build_cartesian_2d(0.0..nc as f64, 0.0..nr as f64)
                .map_err(err)?;
            let (cn, rn) = (cols.clone(), rows.clone());
            chart
                .configure_mesh()
                .disable_mesh()
                .x_labels(nc * 2 + 1)
                .y_labels(nr * 2 + 1)
                .x_label_formatter(&move |x| {
                    let i = x.floor() as usize;
                    if (x - i as f64 - 0.5).abs() < 0.26 && i < cn.len() {
                        cn[i].clone()
                    } else {
                        String::new()
                    }
                })
                .y_label_formatter(&move |y| {
                    let i = y.floor() as usize;
                    // row 0 is drawn at the top
                    if (y - i as f64 - 0.5).abs() < 0.26 && i < rn.len() {
                        rn[rn.len() - 1 - i].clone()
                    } else {
                        String::new()
                    }
                })
                .label_style(("sans-serif", 12))
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
                            ("sans-serif", 12).into_font().color(&BLACK).pos(
                                plotters::style::text_anchor::Pos::new(
                                    plotters::style::text_anchor::HPos::Center,
                                    plotters::style::text_anchor::VPos::Center,
                                ),
                            ),
                        )))
                        .map_err(err)?;
                }
            }
        }
    }
    Ok(())
}

fn draw_all<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    panels: &[Panel],
    cols: usize,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| anyhow!("{e:?}"))?;
    let rows = panels.len().div_ceil(cols);
    let areas = root.split_evenly((rows, cols));
    for (a, p) in areas.iter().zip(panels) {
        draw_panel(a, p)?;
    }
    root.present()
        .map_err(|e| anyhow!("cannot write figure: {e:?}"))?;
    Ok(())
}

/// Renders `panels` in a grid of `cols` columns to `<dir>/<id>.svg` and `<dir>/<id>.png`.
pub fn render(dir: &Path, id: &str, panels: &[Panel], cols: usize) -> Result<()> {
    let size = figure_size(panels, cols);
    let svg = dir.join(format!("{id}.svg"));
    let png = dir.join(format!("{id}.png"));
    draw_all(
        SVGBackend::new(&svg, size).into_drawing_area(),
        panels,
        cols,
    )?;
    let (w, h) = size;
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    draw_all(
        BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area(),
        panels,
        cols,
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
