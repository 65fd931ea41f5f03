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
    /// Extra arguments that make only this figure (empty when the binary makes just it).
    pub args: Vec<String>,
}

/// The catalogue's entries in report order.
///
/// # Panics
/// On a line without a binary column: the file is compiled in and checked by the tests.
pub fn entries() -> Vec<CatalogEntry> {
    parse(CATALOG).expect("figures.tsv is well formed (checked by tests)")
}

/// Parses catalogue text: `#` comments and blank lines skipped, then `figure<TAB>binary[<TAB>args]`.
///
/// # Errors
/// A line with fewer than two columns or a repeated figure id, naming the line.
pub fn parse(text: &str) -> Result<Vec<CatalogEntry>, String> {
    let mut out: Vec<CatalogEntry> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 2 || cols[0].is_empty() || cols[1].is_empty() {
            return Err(format!(
                "figures.tsv:{}: expected `figure<TAB>binary[<TAB>arguments]`, got {line:?}",
                i + 1
            ));
        }
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
                .map(|a| a.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_columns_and_refuses_bad_lines() {
        let e = parse("# c\n\na\tb\t--figure a\nc\td\n").unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].args, ["--figure", "a"]);
        assert!(e[1].args.is_empty());
        assert!(parse("a b\n").unwrap_err().contains("figures.tsv:1"));
        assert!(parse("a\tb\na\tc\n").unwrap_err().contains("listed twice"));
    }

    #[test]
    fn the_shipped_catalogue_parses() {
        assert!(parse(CATALOG).unwrap().len() >= 20);
    }
}
