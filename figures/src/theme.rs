//! One style for every figure: the palette and its assignment (one colour per series label
//! across every panel of a figure), font sizes, the order of numeric legends, tick labels
//! without float noise, and text fitted to a width with the embedded font's metrics.

use plotters::style::{FontDesc, IntoFont, RGBColor};
use std::collections::BTreeMap;

/// Title font size (pixels, plotters' size).
pub const TITLE_SIZE: f64 = 16.0;
/// Axis titles, tick labels, legend entries.
pub const LABEL_SIZE: f64 = 12.0;
/// The smallest size text is shrunk to before it is wrapped.
pub const MIN_SIZE: f64 = 9.0;

/// Tableau's twenty colours (matplotlib's tab20 reordered: the ten strong ones first, then
/// their light twins), so a panel of up to twenty series never repeats a colour.
pub const PALETTE: [RGBColor; 20] = [
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
    RGBColor(174, 199, 232),
    RGBColor(255, 187, 120),
    RGBColor(152, 223, 138),
    RGBColor(255, 152, 150),
    RGBColor(197, 176, 213),
    RGBColor(196, 156, 148),
    RGBColor(247, 182, 210),
    RGBColor(199, 199, 199),
    RGBColor(219, 219, 141),
    RGBColor(158, 218, 229),
];

/// The colour of every series label of a figure: series get palette entries in the order they
/// first appear over the figure's panels, so a series keeps its colour from panel to panel.
/// A label that ends in a size (`complete-4`, `root-expander-25`) is the same series as its
/// name without it (`complete`, in the bytes panel), unless two labels of one panel differ only
/// there, so a graph keeps its colour across panels of different sizes.
#[derive(Default)]
pub struct SeriesColors {
    by_series: BTreeMap<String, RGBColor>,
    series_of: BTreeMap<String, String>,
}

/// `label` without its trailing `-<number>` groups (`hierarchical-4-2-2` -> `hierarchical`).
fn without_size(label: &str) -> &str {
    let mut s = label;
    while let Some((head, tail)) = s.rsplit_once('-') {
        if head.is_empty() || tail.is_empty() || !tail.chars().all(|c| c.is_ascii_digit()) {
            break;
        }
        s = head;
    }
    s
}

impl SeriesColors {
    /// Assigns colours to one panel's `labels`, in order; a series seen before keeps its
    /// colour. A new series takes the next palette colour that no other series of this panel
    /// has, so a panel repeats a colour only past the palette's twenty.
    pub fn assign<'a>(&mut self, labels: impl IntoIterator<Item = &'a str>) {
        let labels: Vec<&str> = labels.into_iter().collect();
        let mut series: Vec<String> = Vec::new();
        for &label in &labels {
            let short = without_size(label);
            let clash = labels
                .iter()
                .filter(|&&other| without_size(other) == short)
                .count()
                > 1;
            let s = if clash { label } else { short };
            let s = self
                .series_of
                .entry(label.to_string())
                .or_insert_with(|| s.to_string())
                .clone();
            series.push(s);
        }
        for s in &series {
            if self.by_series.contains_key(s) {
                continue;
            }
            let taken: Vec<RGBColor> = series
                .iter()
                .filter_map(|o| self.by_series.get(o).copied())
                .collect();
            let start = self.by_series.len();
            let color = (0..PALETTE.len())
                .map(|k| PALETTE[(start + k) % PALETTE.len()])
                .find(|c| !taken.contains(c))
                .unwrap_or(PALETTE[start % PALETTE.len()]);
            self.by_series.insert(s.clone(), color);
        }
    }

    /// The colour of `label` (the first palette colour for a label never assigned).
    pub fn of(&self, label: &str) -> RGBColor {
        self.series_of
            .get(label)
            .and_then(|s| self.by_series.get(s))
            .copied()
            .unwrap_or(PALETTE[0])
    }
}

/// The order legend entries are drawn in: labels that differ only in their numbers ("30%",
/// "100%"; "ssp3-pull", "ssp15-pull") in numeric order among the places they hold, every other
/// label where it is given (the order says something: BSP, ASP, SSP).
pub fn legend_order(labels: &[&str]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..labels.len()).collect();
    let keys: Vec<(String, Vec<f64>)> = labels.iter().map(|l| numeric_key(l)).collect();
    let mut shapes: Vec<&str> = keys.iter().map(|k| k.0.as_str()).collect();
    shapes.sort_unstable();
    shapes.dedup();
    for shape in shapes {
        let places: Vec<usize> = (0..labels.len())
            .filter(|&i| keys[i].0 == shape && !keys[i].1.is_empty())
            .collect();
        let mut members = places.clone();
        members.sort_by(|&a, &b| {
            keys[a]
                .1
                .iter()
                .zip(&keys[b].1)
                .map(|(x, y)| x.total_cmp(y))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        for (place, member) in places.into_iter().zip(members) {
            order[place] = member;
        }
    }
    order
}

/// A label's shape (its text with every number replaced by `#`) and its numbers.
fn numeric_key(label: &str) -> (String, Vec<f64>) {
    let (mut shape, mut numbers, mut digits) = (String::new(), Vec::new(), String::new());
    let flush = |digits: &mut String, shape: &mut String, numbers: &mut Vec<f64>| {
        if !digits.is_empty() {
            numbers.push(digits.parse().unwrap_or(f64::NAN));
            shape.push('#');
            digits.clear();
        }
    };
    for c in label.chars() {
        if c.is_ascii_digit() || (c == '.' && !digits.is_empty()) {
            digits.push(c);
        } else {
            flush(&mut digits, &mut shape, &mut numbers);
            shape.push(c);
        }
    }
    flush(&mut digits, &mut shape, &mut numbers);
    (shape, numbers)
}

/// A tick label for `v`: at most six decimals with trailing zeros dropped, so counts print
/// as "4", not "4.0", and 0.1 + 0.2 as "0.3"; magnitudes below 1e-4 in scientific form.
pub fn tick_label(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    if v != 0.0 && v.abs() < 1e-4 {
        return format!("{v:.1e}");
    }
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    // "-0" reads as zero.
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// A tick label on an axis spanning `span`: [`tick_label`], with a value within a billionth of
/// the span of zero read as zero (plotters' ticks carry float error: -2.2e-16 for 0).
pub fn axis_tick(v: f64, span: f64) -> String {
    if v.abs() <= span.abs() * 1e-9 {
        return "0".to_string();
    }
    tick_label(v)
}

/// `v` to `digits` significant digits, without trailing zeros (0.0016 for 0.00157).
pub fn significant(v: f64, digits: i32) -> String {
    if !v.is_finite() || v == 0.0 {
        return tick_label(v);
    }
    let decimals = (digits - 1 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    tick_label(format!("{v:.decimals$}").parse().unwrap_or(v))
}

/// Ticks 1, 2 or 5 times a power of ten apart over `lo..=hi`, at most `max` of them: the
/// labels plotters' numeric axes draw, within a factor of their spacing, for sizing the room
/// they need.
pub fn ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    if !lo.is_finite() || !hi.is_finite() || hi <= lo || max == 0 {
        return vec![lo];
    }
    let raw = (hi - lo) / max as f64;
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// The font of `size` pixels.
pub fn font(size: f64) -> FontDesc<'static> {
    ("sans-serif", size).into_font()
}

/// The width and height of `text` at `size`, from the embedded font's metrics (0 when the
/// font cannot lay it out).
pub fn text_size(text: &str, size: f64) -> (u32, u32) {
    font(size).box_size(text).unwrap_or((0, 0))
}

/// `text` as lines at most `width` pixels wide at `size`: broken after spaces first, then
/// after `+`, `-`, `/`, `_` or `,`; a word wider than `width` alone stays on its line.
pub fn wrap(text: &str, size: f64, width: u32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for piece in pieces(text) {
        let candidate = format!("{line}{piece}");
        if !line.is_empty() && text_size(candidate.trim_end(), size).0 > width {
            lines.push(line.trim_end().to_string());
            line = piece.trim_start().to_string();
        } else {
            line = candidate;
        }
    }
    if !line.trim().is_empty() || lines.is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}

/// `text` cut after each space and each of `+-/_,` (the cut characters stay with the piece
/// before): the places a label may be broken.
fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        cur.push(c);
        if matches!(c, ' ' | '+' | '-' | '/' | '_' | ',') {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `text` fitted to `width`: the largest size from `size` down to [`MIN_SIZE`] at which it fits
/// on one line, or else wrapped at [`MIN_SIZE`] (as few lines as it can).
pub fn fit(text: &str, size: f64, width: u32) -> (f64, Vec<String>) {
    let mut s = size;
    while s >= MIN_SIZE {
        if text_size(text, s).0 <= width {
            return (s, vec![text.to_string()]);
        }
        s -= 1.0;
    }
    (MIN_SIZE, wrap(text, MIN_SIZE, width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_labels_are_ordered_by_their_numbers_and_others_kept() {
        let pct = ["100%", "30%", "0%", "60%"];
        let o = legend_order(&pct);
        assert_eq!(
            o.iter().map(|&i| pct[i]).collect::<Vec<_>>(),
            ["0%", "30%", "60%", "100%"]
        );
        let ssp = ["ssp15", "ssp3", "ssp6"];
        let o = legend_order(&ssp);
        assert_eq!(
            o.iter().map(|&i| ssp[i]).collect::<Vec<_>>(),
            ["ssp3", "ssp6", "ssp15"]
        );
        // Different shapes: the order given is kept; labels of one shape sorted among the
        // places they hold.
        assert_eq!(legend_order(&["BSP", "ASP", "SSP(3)"]), [0, 1, 2]);
        let modes = ["asp-pull", "bsp", "ssp15-pull", "ssp3-pull", "dssp3-12"];
        let o = legend_order(&modes);
        assert_eq!(
            o.iter().map(|&i| modes[i]).collect::<Vec<_>>(),
            ["asp-pull", "bsp", "ssp3-pull", "ssp15-pull", "dssp3-12"]
        );
        assert_eq!(legend_order(&["b", "a"]), [0, 1]);
    }

    #[test]
    fn tick_labels_have_no_float_noise_and_no_needless_decimals() {
        assert_eq!(tick_label(4.0), "4");
        assert_eq!(tick_label(0.1 + 0.2), "0.3");
        assert_eq!(tick_label(-1.5), "-1.5");
        assert_eq!(tick_label(-0.0000001), "-1.0e-7");
        assert_eq!(tick_label(-0.0), "0");
        assert_eq!(tick_label(250.0), "250");
        assert_eq!(tick_label(0.000125), "0.000125");
        assert_eq!(significant(0.00157, 2), "0.0016");
        assert_eq!(axis_tick(-2.2e-16, 1.3), "0");
        assert_eq!(axis_tick(1e-7, 1e-6), "1.0e-7");
        assert_eq!(significant(123.4, 2), "123");
        assert_eq!(ticks(0.0, 10.0, 10).len(), 11);
        assert_eq!(ticks(-1.9, 1.9, 10).first().copied(), Some(-1.5));
    }

    #[test]
    fn series_keep_their_colour_across_panels() {
        let mut c = SeriesColors::default();
        c.assign(["bsp", "asp"]);
        c.assign(["asp", "ssp", "bsp"]);
        assert_eq!(c.of("bsp"), PALETTE[0]);
        assert_eq!(c.of("asp"), PALETTE[1]);
        assert_eq!(c.of("ssp"), PALETTE[2]);
        // A graph at two sizes and in a panel of kinds: one colour.
        let mut c = SeriesColors::default();
        c.assign(["complete-4", "root-expander-4"]);
        c.assign(["complete-25", "chain-25"]);
        c.assign(["chain", "complete", "root-expander"]);
        assert_eq!(c.of("complete-4"), c.of("complete-25"));
        assert_eq!(c.of("complete"), c.of("complete-4"));
        assert_eq!(c.of("root-expander"), c.of("root-expander-4"));
        assert_ne!(c.of("chain-25"), c.of("complete-25"));
        // Two labels of one panel that differ only in their sizes keep colours of their own.
        let mut c = SeriesColors::default();
        c.assign(["hierarchical-4-2-2", "hierarchical-3-3-2", "ring-based-8"]);
        assert_ne!(c.of("hierarchical-4-2-2"), c.of("hierarchical-3-3-2"));
        assert_eq!(without_size("hierarchical-4-2-2"), "hierarchical");
        assert_eq!(without_size("ssp3"), "ssp3");
        assert_eq!(without_size("-1"), "-1");
        // Past the palette over the figure, a panel still gets colours of its own.
        let mut c = SeriesColors::default();
        let first: Vec<String> = (0..18).map(|i| format!("a{i}x")).collect();
        c.assign(first.iter().map(String::as_str));
        let second: Vec<String> = (0..6).map(|i| format!("b{i}y")).collect();
        c.assign(["a0x"].into_iter().chain(second.iter().map(String::as_str)));
        let colors: std::collections::BTreeSet<(u8, u8, u8)> = ["a0x"]
            .into_iter()
            .chain(second.iter().map(String::as_str))
            .map(|l| {
                let c = c.of(l);
                (c.0, c.1, c.2)
            })
            .collect();
        assert_eq!(colors.len(), 7);
    }

    #[test]
    fn text_is_wrapped_at_its_breaks_to_the_width() {
        crate::chart::register_fonts().unwrap();
        let w = text_size("staleness2+", LABEL_SIZE).0 + 2;
        let lines = wrap("staleness2+tokens2", LABEL_SIZE, w);
        assert_eq!(lines, ["staleness2+", "tokens2"]);
        for l in &lines {
            assert!(text_size(l, LABEL_SIZE).0 <= w, "{l}");
        }
        let (size, lines) = fit("short", LABEL_SIZE, 400);
        assert_eq!((size, lines.len()), (LABEL_SIZE, 1));
        let (size, lines) = fit("a rather long title that cannot fit", LABEL_SIZE, 60);
        assert_eq!(size, MIN_SIZE);
        assert!(lines.len() > 2, "{lines:?}");
    }
}
