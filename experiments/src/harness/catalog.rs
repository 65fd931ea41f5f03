//! The figure catalogue (`experiments/figures.tsv`): which experiment binary makes which figure,
//! with the arguments that make only that figure. The Makefile reads the same file, so the
//! figure -> binary -> make target table lives in one place.

/// Experiment binaries that are benchmarks, not paper figures: outside the catalogue and
/// `make reproduce-all` (each has its own make target, e.g. `make bench-scale`).
pub const BENCHMARKS: &[&str] = &["bench-scale"];

/// The catalogue's text, compiled in.
pub const CATALOG: &str = include_str!("../../figures.tsv");

/// One figure of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogEntry {
    /// Figure id: `results/<id>/`, `make fig-<id>`, the renderer's id.
    pub figure: String,
    /// Experiment binary that writes it (`experiments/src/bin/<binary>.rs`).
    pub binary: String,
    /// Extra arguments that make only this figure (empty when the binary makes just it; `-`
    /// in the file).
    pub args: Vec<String>,
    /// Whether, built with the cnn feature, the figure runs on its binary's CNN configuration
    /// (`configs/<binary>.cnn.<scale>.toml`) rather than the built-in proxy (`cnn` in the
    /// fourth column): a paper about CNNs.
    pub on_cnn: bool,
}

impl CatalogEntry {
    /// Whether this figure is a CNN half (`<figure>-cnn`, made with `--cnn`): a figure of its
    /// own beside its binary's other figure.
    pub fn is_cnn_half(&self) -> bool {
        self.args.iter().any(|a| a == "--cnn")
    }
}

/// The catalogue's entries in report order.
///
/// # Panics
/// On a line without a binary column: the file is compiled in and checked by the tests.
pub fn entries() -> Vec<CatalogEntry> {
    parse(CATALOG).expect("figures.tsv is well formed (checked by tests)")
}

/// Parses catalogue text: `#` comments and blank lines skipped, then
/// `figure<TAB>binary[<TAB>args|-[<TAB>cnn]]`.
///
/// # Errors
/// A line with fewer than two columns, a fourth column other than `cnn`, or a repeated
/// figure id, naming the line.
pub fn parse(text: &str) -> Result<Vec<CatalogEntry>, String> {
    let mut out: Vec<CatalogEntry> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 2 || cols.len() > 4 || cols[0].is_empty() || cols[1].is_empty() {
            return Err(format!(
                "figures.tsv:{}: expected `figure<TAB>binary[<TAB>arguments or -[<TAB>cnn]]`, got {line:?}",
                i + 1
            ));
        }
        let on_cnn = match cols.get(3) {
            None => false,
            Some(&"cnn") => true,
            Some(other) => {
                return Err(format!(
                    "figures.tsv:{}: the fourth column is `cnn` or absent, got {other:?}",
                    i + 1
                ))
            }
        };
        if out.iter().any(|e| e.figure == cols[0]) {
            return Err(format!(
                "figures.tsv:{}: figure {} listed twice",
                i + 1,
                cols[0]
            ));
        }
        out.push(CatalogEntry {
            figure: cols[0].to_string(),
            binary: cols[1].to_string(),
            args: cols
                .get(2)
                .filter(|a| a.trim() != "-")
                .map(|a| a.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default(),
            on_cnn,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_columns_and_refuses_bad_lines() {
        let e = parse("# c\n\na\tb\t--figure a\nc\td\ne\tf\t-\tcnn\ng\tf\t--cnn\n").unwrap();
        assert_eq!(e.len(), 4);
        assert_eq!(e[0].args, ["--figure", "a"]);
        assert!(e[1].args.is_empty() && !e[1].on_cnn && !e[1].is_cnn_half());
        assert!(e[2].args.is_empty() && e[2].on_cnn);
        assert!(e[3].is_cnn_half());
        assert!(parse("a\tb\t-\tgpu\n")
            .unwrap_err()
            .contains("fourth column"));
        assert!(parse("a b\n").unwrap_err().contains("figures.tsv:1"));
        assert!(parse("a\tb\na\tc\n").unwrap_err().contains("listed twice"));
    }

    #[test]
    fn the_shipped_catalogue_parses() {
        assert!(parse(CATALOG).unwrap().len() >= 20);
    }
}
