//! The layout check of a rendered figure, read back from its SVG: every text inside the canvas,
//! no two texts overlapping (their boxes measured with the embedded font's metrics at the size
//! the bitmap is drawn at), and every legend label in one colour wherever it appears in the
//! figure. `figures check-layout` runs it on every figure of a results folder (CI does, after
//! the reproduction); `figures render` prints what it finds as warnings.

use crate::theme::{self, PALETTE};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// A text of the SVG and the box it covers, in pixels.
#[derive(Debug, Clone)]
struct TextBox {
    text: String,
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl TextBox {
    fn overlaps(&self, o: &TextBox) -> bool {
        // A pixel of contact is not an overlap: neighbouring boxes share their edge.
        let w = self.x1.min(o.x1) - self.x0.max(o.x0);
        let h = self.y1.min(o.y1) - self.y0.max(o.y0);
        w > 1.0 && h > 1.0
    }
}

/// An element of the SVG as the check reads it: its tag, attributes and, for a text, its
/// content.
struct Element {
    tag: String,
    attrs: BTreeMap<String, String>,
    content: String,
}

impl Element {
    fn num(&self, key: &str) -> Option<f64> {
        self.attrs.get(key).and_then(|v| v.trim().parse().ok())
    }

    /// The element's colour: its stroke if it has one, else its fill.
    fn color(&self) -> Option<&str> {
        ["stroke", "fill"]
            .iter()
            .filter_map(|k| self.attrs.get(*k))
            .map(String::as_str)
            .find(|c| c.starts_with('#'))
    }

    /// The element's horizontal extent and vertical centre, for a legend swatch.
    fn extent(&self) -> Option<(f64, f64, f64)> {
        match self.tag.as_str() {
            "rect" => {
                let (x, y) = (self.num("x")?, self.num("y")?);
                let (w, h) = (self.num("width")?, self.num("height")?);
                Some((x, x + w, y + h / 2.0))
            }
            "circle" => {
                let (x, y, r) = (self.num("cx")?, self.num("cy")?, self.num("r")?);
                Some((x - r, x + r, y))
            }
            "polyline" => {
                let pts: Vec<(f64, f64)> = self
                    .attrs
                    .get("points")?
                    .split_whitespace()
                    .filter_map(|p| {
                        let (a, b) = p.split_once(',')?;
                        Some((a.parse().ok()?, b.parse().ok()?))
                    })
                    .collect();
                let (lo, hi) = pts
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
                let y = pts.first()?.1;
                (pts.len() == 2 && pts.iter().all(|p| p.1 == y)).then_some((lo, hi, y))
            }
            _ => None,
        }
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The elements of `svg` in document order (plotters writes one tag per line, attribute
/// values escaped, so a `>` ends a tag).
fn elements(svg: &str) -> Vec<Element> {
    let mut out = Vec::new();
    for chunk in svg.split('<').skip(1) {
        if chunk.starts_with('/') || chunk.starts_with('?') || chunk.starts_with('!') {
            continue;
        }
        let Some((tag_text, rest)) = chunk.split_once('>') else {
            continue;
        };
        let tag_text = tag_text.trim_end_matches('/');
        let (tag, mut attr_text) = tag_text
            .split_once(char::is_whitespace)
            .unwrap_or((tag_text, ""));
        let mut attrs = BTreeMap::new();
        while let Some((key, after)) = attr_text.split_once("=\"") {
            let Some((value, next)) = after.split_once('"') else {
                break;
            };
            attrs.insert(key.trim().to_string(), unescape(value));
            attr_text = next;
        }
        out.push(Element {
            tag: tag.to_string(),
            attrs,
            content: unescape(rest.trim()),
        });
    }
    out
}

/// The box of a `<text>` element: plotters writes the font size divided by 1.24, its anchor
/// as text-anchor and dy, and a turn as `rotate(a, x, y)`.
fn text_box(e: &Element) -> Option<TextBox> {
    let (x, y) = (e.num("x")?, e.num("y")?);
    let size = e.num("font-size")? * 1.24;
    let (w, h) = theme::text_size(&e.content, size);
    let (w, h) = (f64::from(w), f64::from(h));
    let (a, b) = match e.attrs.get("text-anchor").map(String::as_str) {
        Some("middle") => (-w / 2.0, w / 2.0),
        Some("end") => (-w, 0.0),
        _ => (0.0, w),
    };
    let (c, d) = match e.attrs.get("dy").map(String::as_str) {
        Some("0.76em") => (0.0, h),
        Some("-0.5ex") => (-h, 0.0),
        _ => (-h / 2.0, h / 2.0),
    };
    let turn = e
        .attrs
        .get("transform")
        .and_then(|t| t.strip_prefix("rotate("))
        .and_then(|t| t.split(',').next())
        .and_then(|a| a.trim().parse::<f64>().ok());
    let (x0, x1, y0, y1) = match turn {
        // (dx, dy) turned 270 degrees is (dy, -dx); turned 90, (-dy, dx).
        Some(t) if (t - 270.0).abs() < 1e-9 => (x + c, x + d, y - b, y - a),
        Some(t) if (t - 90.0).abs() < 1e-9 => (x - d, x - c, y + a, y + b),
        Some(t) if (t - 180.0).abs() < 1e-9 => (x - b, x - a, y - d, y - c),
        _ => (x + a, x + b, y + c, y + d),
    };
    Some(TextBox {
        text: e.content.clone(),
        x0,
        y0,
        x1,
        y1,
    })
}

/// The layout defects of one SVG figure, each said in a line.
///
/// # Errors
/// When the SVG has no size (not one plotters wrote).
pub fn check_svg(svg: &str) -> Result<Vec<String>> {
    let els = elements(svg);
    let root = els
        .iter()
        .find(|e| e.tag == "svg")
        .context("no <svg> element")?;
    let (w, h) = (
        root.num("width")
            .context("the <svg> element has no width")?,
        root.num("height")
            .context("the <svg> element has no height")?,
    );
    let palette: Vec<String> = PALETTE
        .iter()
        .map(|c| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2))
        .collect();
    let mut defects = Vec::new();
    let mut boxes: Vec<TextBox> = Vec::new();
    let mut legend: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // The legend being read: its swatches' left edge and its entries (label, colour). Its
    // entries follow one another (a wrapped label's further lines between them); any other
    // text ends it.
    let mut panel_legend: Option<(f64, Vec<(String, String)>)> = None;
    let mut previous: Option<&Element> = None;
    for e in &els {
        if e.tag != "text" {
            previous = Some(e);
            continue;
        }
        if e.content.is_empty() {
            continue;
        }
        if let Some(b) = text_box(e) {
            if b.x0 < -0.5 || b.y0 < -0.5 || b.x1 > w + 0.5 || b.y1 > h + 0.5 {
                defects.push(format!(
                    "text '{}' reaches outside the {w} x {h} canvas (box {:.0},{:.0} to {:.0},{:.0})",
                    b.text, b.x0, b.y0, b.x1, b.y1
                ));
            }
            // A legend label: left-anchored, centred on the row of the palette-coloured
            // swatch drawn just before it, a few pixels to its left.
            if let (Some(p), Some(tx), Some(ty)) = (previous, e.num("x"), e.num("y")) {
                let left = e.attrs.get("text-anchor").is_some_and(|a| a == "start");
                if let (Some((lo, hi, cy)), Some(color)) = (p.extent(), p.color()) {
                    if left
                        && palette.iter().any(|c| c == color)
                        && (cy - ty).abs() <= 3.0
                        && hi <= tx
                        && tx - lo <= 40.0
                    {
                        let seen = legend.entry(e.content.clone()).or_default();
                        if !seen.iter().any(|c| c == color) {
                            seen.push(color.to_string());
                        }
                        let entry = (e.content.clone(), color.to_string());
                        match &mut panel_legend {
                            Some((x, entries)) if (*x - lo).abs() < 0.5 => {
                                if let Some((other, _)) =
                                    entries.iter().find(|(l, c)| *c == entry.1 && *l != entry.0)
                                {
                                    defects.push(format!(
                                        "series '{other}' and '{}' share the colour {} in one legend",
                                        entry.0, entry.1
                                    ));
                                }
                                entries.push(entry);
                            }
                            _ => panel_legend = Some((lo, vec![entry])),
                        }
                        previous = Some(e);
                        boxes.push(b);
                        continue;
                    }
                }
            }
            // A wrapped legend label's further line keeps the legend open; any other text
            // closes it.
            let continues = panel_legend.is_some()
                && previous.is_some_and(|p| p.tag == "text")
                && e.attrs.get("text-anchor").is_some_and(|a| a == "start");
            if !continues {
                panel_legend = None;
            }
            boxes.push(b);
        }
        previous = Some(e);
    }
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            if a.overlaps(b) {
                defects.push(format!(
                    "texts '{}' and '{}' overlap (at {:.0},{:.0} and {:.0},{:.0})",
                    a.text, b.text, a.x0, a.y0, b.x0, b.y0
                ));
            }
        }
    }
    for (label, colors) in legend {
        if colors.len() > 1 {
            defects.push(format!(
                "series '{label}' is drawn in {} colours across the panels ({})",
                colors.len(),
                colors.join(", ")
            ));
        }
    }
    Ok(defects)
}

/// The layout defects of the figure at `svg`.
///
/// # Errors
/// When the file cannot be read or is not an SVG plotters wrote.
pub fn check_file(svg: &Path) -> Result<Vec<String>> {
    let text =
        std::fs::read_to_string(svg).with_context(|| format!("cannot read {}", svg.display()))?;
    check_svg(&text).with_context(|| format!("{} is not a figure's SVG", svg.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svg(body: &str) -> String {
        format!(
            "<svg width=\"400\" height=\"300\" viewBox=\"0 0 400 300\" xmlns=\"http://www.w3.org/2000/svg\">\n{body}</svg>\n"
        )
    }

    fn text(x: i32, y: i32, anchor: &str, content: &str) -> String {
        format!(
            "<text x=\"{x}\" y=\"{y}\" dy=\"0.5ex\" text-anchor=\"{anchor}\" font-family=\"sans-serif\" font-size=\"9.67741935483871\" opacity=\"1\" fill=\"#000000\">\n{content}\n</text>\n"
        )
    }

    fn swatch(x: i32, y: i32, color: &str) -> String {
        format!(
            "<polyline fill=\"none\" opacity=\"1\" stroke=\"{color}\" stroke-width=\"2\" points=\"{x},{y} {},{y} \"/>\n",
            x + 22
        )
    }

    #[test]
    fn a_clean_layout_has_no_defects() {
        crate::chart::register_fonts().unwrap();
        let body = [
            text(200, 20, "middle", "a title"),
            swatch(300, 60, "#1F77B4"),
            text(338, 60, "start", "bsp"),
            swatch(300, 80, "#FF7F0E"),
            text(338, 80, "start", "asp"),
            text(50, 280, "middle", "0"),
            text(100, 280, "middle", "10"),
        ]
        .concat();
        assert_eq!(check_svg(&svg(&body)).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn overlapping_texts_are_found_and_named() {
        crate::chart::register_fonts().unwrap();
        let body = [
            text(100, 280, "middle", "standard+tokens2"),
            text(140, 280, "middle", "staleness2+tokens2"),
        ]
        .concat();
        let d = check_svg(&svg(&body)).unwrap();
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].contains("'standard+tokens2' and 'staleness2+tokens2' overlap"),
            "{d:?}"
        );
    }

    #[test]
    fn a_text_past_the_canvas_is_found() {
        crate::chart::register_fonts().unwrap();
        // A centred title wider than the canvas loses both ends.
        let long = "a title far too long for a canvas of four hundred pixels, which loses its first and last words";
        let d = check_svg(&svg(&text(200, 20, "middle", long))).unwrap();
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].contains("reaches outside the 400 x 300 canvas"),
            "{d:?}"
        );
        // Turned 270 degrees at the left edge, a y axis title reaches above the top.
        let turned = "<text x=\"10\" y=\"20\" dy=\"0.76em\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"9.67741935483871\" opacity=\"1\" fill=\"#000000\" transform=\"rotate(270, 10, 20)\">\nheld-out hinge loss\n</text>\n";
        let d = check_svg(&svg(turned)).unwrap();
        assert_eq!(d.len(), 1, "{d:?}");
    }

    #[test]
    fn a_series_in_two_colours_is_found() {
        crate::chart::register_fonts().unwrap();
        let body = [
            swatch(300, 60, "#1F77B4"),
            text(338, 60, "start", "bsp"),
            swatch(300, 200, "#FF7F0E"),
            text(338, 200, "start", "bsp"),
        ]
        .concat();
        let d = check_svg(&svg(&body)).unwrap();
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(
            d[0].contains(
                "series 'bsp' is drawn in 2 colours across the panels (#1F77B4, #FF7F0E)"
            ),
            "{d:?}"
        );
        // A text after a coloured element that is no legend swatch (a bar's zero label,
        // centred under it) is not read as a legend entry.
        let body = [
            "<rect x=\"50\" y=\"100\" width=\"30\" height=\"150\" opacity=\"1\" fill=\"#FF7F0E\" stroke=\"none\"/>\n".to_string(),
            text(65, 270, "middle", "bsp"),
            swatch(300, 60, "#1F77B4"),
            text(338, 60, "start", "bsp"),
        ]
        .concat();
        assert_eq!(check_svg(&svg(&body)).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn two_series_of_one_legend_in_one_colour_are_found() {
        crate::chart::register_fonts().unwrap();
        let body = [
            swatch(200, 60, "#1F77B4"),
            text(238, 60, "start", "bsp (step 0.1)"),
            swatch(200, 80, "#FF7F0E"),
            text(238, 80, "start", "asp"),
            swatch(200, 100, "#1F77B4"),
            text(238, 100, "start", "reference optimum"),
        ]
        .concat();
        let d = check_svg(&svg(&body)).unwrap();
        assert_eq!(
            d,
            ["series 'bsp (step 0.1)' and 'reference optimum' share the colour #1F77B4 in one legend"]
        );
        // The same colour in two legends (two panels) is two series' own business.
        let body = [
            swatch(200, 60, "#1F77B4"),
            text(238, 60, "start", "bsp"),
            text(200, 150, "middle", "a tick"),
            swatch(200, 200, "#1F77B4"),
            text(238, 200, "start", "lda bsp"),
        ]
        .concat();
        assert_eq!(check_svg(&svg(&body)).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn what_is_no_figure_is_refused() {
        assert!(check_svg("<html></html>").is_err());
    }
}
