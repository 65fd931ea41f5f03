//! Where a figure's configuration departs from its paper's setup, and why: the table in
//! `experiments/deviations.toml`, checked against the configuration each run used.
//!
//! Each entry names a configuration key, the value the shipped configuration has there (`ours`),
//! what the paper has, where the paper says it, and the reason. A run lists, in its manifest
//! and so in REPORT.md, the entries whose key its configuration has: with the shipped value,
//! the entry's reason; with another value (`--config`), that value and that it was set for this
//! run; with the paper's own value (`paper_value`), nothing. A unit test holds every entry to
//! its shipped configuration file, so an entry cannot outlive the value it explains.

use serde::{Deserialize, Serialize};

/// The committed table.
const TABLE: &str = include_str!("../../deviations.toml");

/// One departure from a paper's setup.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deviation {
    /// The figure ids it applies to.
    pub figures: Vec<String>,
    /// The shipped configuration file it describes, without `.toml` (under experiments/configs).
    pub config: String,
    /// The key, dotted, with `[i]` for array elements (e.g. `parts[2].common.data.train_rows`).
    pub key: String,
    /// The value the shipped configuration has at `key`.
    pub ours: toml::Value,
    /// What the paper has, in words.
    pub paper: String,
    /// The paper's value at `key` where it is one (a run with it deviates in nothing here).
    #[serde(default)]
    pub paper_value: Option<toml::Value>,
    /// Where the paper says it: paper, section, figure or table.
    pub source: String,
    /// Why the configuration departs from it, and what is known of the effect.
    pub why: String,
}

/// The table: every deviation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviationTable {
    /// The entries, in the file's order.
    #[serde(default)]
    pub deviation: Vec<Deviation>,
}

/// One deviation as a run's manifest records it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviationRow {
    /// The configuration key.
    pub key: String,
    /// This run's value there.
    pub ours: serde_json::Value,
    /// The paper's setup, in words.
    pub paper: String,
    /// Where the paper says it.
    pub source: String,
    /// Why: the entry's reason with the shipped value, else that the run set this value.
    pub why: String,
}

impl DeviationTable {
    /// Parses a table.
    ///
    /// # Errors
    /// TOML that does not have the table's shape.
    pub fn parse(text: &str) -> Result<Self, toml::de::Error> {
        toml::from_str(text)
    }

    /// The committed table (`experiments/deviations.toml`).
    ///
    /// # Panics
    /// Never for the committed file: a unit test parses it.
    pub fn committed() -> Self {
        Self::parse(TABLE).expect("experiments/deviations.toml is checked by a unit test")
    }

    /// The deviations of figure `figure` in a run whose resolved configuration is `config`.
    pub fn for_run(&self, figure: &str, config: &serde_json::Value) -> Vec<DeviationRow> {
        self.deviation
            .iter()
            .filter(|d| d.figures.iter().any(|f| f == figure))
            .filter_map(|d| {
                let value = lookup(config, &d.key)?;
                if d.paper_value.as_ref().is_some_and(|p| same(value, p)) {
                    return None;
                }
                let why = if same(value, &d.ours) {
                    d.why.clone()
                } else {
                    format!(
                        "set by this run's configuration (the shipped {} has {}: {})",
                        d.config, d.ours, d.why
                    )
                };
                Some(DeviationRow {
                    key: d.key.clone(),
                    ours: value.clone(),
                    paper: d.paper.clone(),
                    source: d.source.clone(),
                    why,
                })
            })
            .collect()
    }
}

/// The value at dotted `key` (`a.b[2].c`) in `value`, if there is one.
pub fn lookup<'v>(value: &'v serde_json::Value, key: &str) -> Option<&'v serde_json::Value> {
    let mut cur = value;
    for part in key.split('.') {
        let (name, indices) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        cur = cur.get(name)?;
        for idx in indices.split('[').filter(|s| !s.is_empty()) {
            let i: usize = idx.strip_suffix(']')?.parse().ok()?;
            cur = cur.get(i)?;
        }
    }
    Some(cur)
}

/// Whether a configuration's value equals a table's: numbers by value (TOML's `10` and a
/// float field's `10.0` are the same), the rest as JSON.
pub fn same(value: &serde_json::Value, table: &toml::Value) -> bool {
    let Ok(table) = serde_json::to_value(table) else {
        return false;
    };
    match (value.as_f64(), table.as_f64()) {
        (Some(a), Some(b)) => a == b,
        _ => *value == table,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn table() -> DeviationTable {
        DeviationTable::parse(
            r#"
[[deviation]]
figures = ["fig-a"]
config = "fig-a.quick"
key = "common.network.bandwidth_gbps"
ours = 10.0
paper = "1 Gbit/s"
paper_value = 1
source = "Paper §1"
why = "because"
"#,
        )
        .unwrap()
    }

    #[test]
    fn a_run_lists_its_figures_deviations_by_its_own_values() {
        let t = table();
        let cfg = |bw: f64| json!({"common": {"network": {"bandwidth_gbps": bw}}});
        let rows = t.for_run("fig-a", &cfg(10.0));
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].why, "because");
        // another figure, or a configuration without the key: nothing
        assert!(t.for_run("fig-b", &cfg(10.0)).is_empty());
        assert!(t.for_run("fig-a", &json!({"common": {}})).is_empty());
        // the paper's value: no deviation; another value: said to be this run's
        assert!(t.for_run("fig-a", &cfg(1.0)).is_empty());
        let other = t.for_run("fig-a", &cfg(40.0));
        assert!(other[0].why.starts_with("set by this run's configuration"));
        assert_eq!(other[0].ours, json!(40.0));
    }

    #[test]
    fn keys_reach_into_arrays() {
        let v = json!({"parts": [{"a": 1}, {"a": 2, "b": [5, 6]}]});
        assert_eq!(lookup(&v, "parts[1].a"), Some(&json!(2)));
        assert_eq!(lookup(&v, "parts[1].b[1]"), Some(&json!(6)));
        assert_eq!(lookup(&v, "parts[2].a"), None);
        assert_eq!(lookup(&v, "parts.a"), None);
    }

    /// Every committed entry names figures of the catalogue and a shipped configuration file
    /// that has `ours` at its key: an entry cannot outlive the value it explains.
    #[test]
    fn every_committed_entry_holds_for_its_shipped_configuration() {
        let t = DeviationTable::committed();
        assert!(!t.deviation.is_empty());
        let ids: Vec<String> = crate::harness::catalog::entries()
            .into_iter()
            .map(|e| e.figure)
            .collect();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
        for d in &t.deviation {
            for f in &d.figures {
                assert!(
                    ids.contains(f),
                    "{}: figure {f} is not in the catalogue",
                    d.key
                );
            }
            let path = dir.join(format!("{}.toml", d.config));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {}: {e}", d.key, path.display()));
            let cfg: toml::Value = toml::from_str(&text).unwrap();
            let cfg = serde_json::to_value(cfg).unwrap();
            let v = lookup(&cfg, &d.key)
                .unwrap_or_else(|| panic!("{}: no key {} in {}", d.config, d.key, path.display()));
            assert!(
                same(v, &d.ours),
                "{}: {} is {v} in the file, the table says {}",
                d.config,
                d.key,
                d.ours
            );
            assert!(!d.why.trim().is_empty() && !d.source.trim().is_empty());
        }
    }
}
