//! Reading result CSVs into rows of named columns.

use anyhow::{anyhow, Context, Result};
use std::collections::HashMap;
use std::path::Path;

/// A CSV file as header-indexed string rows.
pub struct Table {
    columns: HashMap<String, usize>,
    rows: Vec<Vec<String>>,
    path: String,
}

impl Table {
    /// Reads `path`.
    pub fn read(path: &Path) -> Result<Self> {
        let mut r = csv::Reader::from_path(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let columns = r
            .headers()?
            .iter()
            .enumerate()
            .map(|(i, h)| (h.to_string(), i))
            .collect();
        let rows = r
            .records()
            .map(|rec| rec.map(|x| x.iter().map(str::to_string).collect()))
            .collect::<Result<Vec<Vec<String>>, _>>()
            .with_context(|| format!("malformed CSV {}", path.display()))?;
        Ok(Table {
            columns,
            rows,
            path: path.display().to_string(),
        })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    fn col(&self, name: &str) -> Result<usize> {
        self.columns
            .get(name)
            .copied()
            .ok_or_else(|| anyhow!("{} has no column '{name}'", self.path))
    }

    /// Whether the table has column `name`.
    pub fn has(&self, name: &str) -> bool {
        self.col(name).is_ok()
    }

    /// The text of column `name` in row `i`.
    ///
    /// # Errors
    /// When the column does not exist.
    pub fn str(&self, i: usize, name: &str) -> Result<&str> {
        Ok(&self.rows[i][self.col(name)?])
    }

    /// Number in column `name` of row `i`.
    pub fn num(&self, i: usize, name: &str) -> Result<f64> {
        let s = self.str(i, name)?;
        s.parse().with_context(|| {
            format!(
                "{} row {}: '{s}' in column {name} is not a number",
                self.path,
                i + 2
            )
        })
    }
}
