//! What a results directory says, reduced to what regression tracking compares: the bytes of
//! every CSV the simulator wrote (hashed per figure and seed) and the verdict of every claim.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Figures that run under the sim driver but write host measurements (wall time, events per
/// second, memory) into their CSVs: their bytes differ run to run, so they are not hashed.
pub const TIMED_SIM_FIGURES: &[&str] = &["bench-scale"];

/// A results directory, as the exact and claims tiers see it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// SHA-256 of every CSV of a sim-only figure, by `figure/path` (the path under the
    /// figure's directory, `seeds/<n>/` included).
    pub exact: BTreeMap<String, String>,
    /// Every claim's verdict ("pass", "fail", "n.a."), by claim id.
    pub claims: BTreeMap<String, String>,
    /// Figures whose CSVs are not byte-reproducible (threads or cluster driver, host timing):
    /// their claims count, their bytes do not.
    pub not_hashed: Vec<String>,
    /// The code revisions the figures' manifests name (one, unless the directory mixes runs).
    #[serde(default)]
    pub revisions: Vec<String>,
    /// Every figure and the driver its manifest names: a figure that disappears, or moves to
    /// another driver (and so out of the exact tier), is a finding of its own.
    #[serde(default)]
    pub figures: BTreeMap<String, String>,
    /// The scales the manifests name ("quick", "paper"): results of another scale are not
    /// comparable at all.
    #[serde(default)]
    pub scales: Vec<String>,
}

impl Snapshot {
    /// Reads every figure directory (one holding a `manifest.json`) under `results`.
    ///
    /// # Errors
    /// An unreadable directory, manifest or `claims.csv`, or no figure at all (a results
    /// directory that holds nothing to compare is an error, never an empty pass).
    pub fn collect(results: &Path) -> Result<Snapshot> {
        let mut snap = Snapshot::default();
        let mut dirs: Vec<_> = std::fs::read_dir(results)
            .with_context(|| format!("cannot read results directory {}", results.display()))?
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<Vec<_>>>()
            .with_context(|| format!("cannot read results directory {}", results.display()))?
            .into_iter()
            .filter(|p| p.join("manifest.json").is_file())
            .collect();
        dirs.sort();
        if dirs.is_empty() {
            anyhow::bail!(
                "{}: no figure directories (none holds a manifest.json); run `make reproduce-all` first",
                results.display()
            );
        }
        for dir in dirs {
            let figure = dir
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            let manifest: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(dir.join("manifest.json"))
                    .with_context(|| format!("{}/manifest.json", dir.display()))?,
            )
            .with_context(|| format!("{}/manifest.json is not JSON", dir.display()))?;
            // "sim", or "none (...)" for figures computed without a driver (linear algebra).
            let driver = manifest
                .get("driver")
                .and_then(|d| d.as_str())
                .unwrap_or("");
            let deterministic = driver == "sim" || driver.starts_with("none");
            for (key, list) in [
                ("git_revision", &mut snap.revisions),
                ("scale", &mut snap.scales),
            ] {
                if let Some(v) = manifest.get(key).and_then(|r| r.as_str()) {
                    if !list.iter().any(|x| x == v) {
                        list.push(v.to_string());
                    }
                }
            }
            snap.figures.insert(figure.clone(), driver.to_string());
            if deterministic && !TIMED_SIM_FIGURES.contains(&figure.as_str()) {
                hash_csvs(&dir, &dir, &figure, &mut snap.exact)?;
            } else {
                snap.not_hashed.push(figure.clone());
            }
            let claims = dir.join("claims.csv");
            if claims.is_file() {
                read_claims(&claims, &mut snap.claims)?;
            }
        }
        snap.revisions.sort();
        snap.scales.sort();
        Ok(snap)
    }

    /// Why these results should not become a baseline as they are (mixed or uncommitted
    /// revisions), if they should not.
    pub fn doubts(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.revisions.len() > 1 {
            v.push(format!(
                "the figures come from {} revisions ({}): accept a single run's results",
                self.revisions.len(),
                self.revisions.join(", ")
            ));
        }
        if self.revisions.iter().any(|r| r.ends_with("-dirty")) {
            v.push("some figures ran from a working tree with uncommitted changes".into());
        }
        v
    }

    /// The revisions as one label ("unknown" when no manifest names one).
    pub fn revision(&self) -> String {
        if self.revisions.is_empty() {
            "unknown".into()
        } else {
            self.revisions.join("+")
        }
    }
}

/// Hashes every `.csv` under `dir` (recursively) into `out` as `figure/relative path`.
fn hash_csvs(
    root: &Path,
    dir: &Path,
    figure: &str,
    out: &mut BTreeMap<String, String>,
) -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            hash_csvs(root, &p, figure, out)?;
        } else if p.extension().is_some_and(|e| e == "csv") {
            let rel = p.strip_prefix(root).unwrap_or(&p).to_string_lossy();
            let digest = bench_core::data::digest_file(&p)
                .with_context(|| format!("cannot hash {}", p.display()))?;
            out.insert(format!("{figure}/{rel}"), digest.sha256);
        }
    }
    Ok(())
}

/// Adds the `claim_id -> verdict` pairs of one `claims.csv`.
fn read_claims(path: &Path, out: &mut BTreeMap<String, String>) -> Result<()> {
    let mut r =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let headers = r.headers()?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("{}: no column '{name}'", path.display()))
    };
    let (id, verdict) = (col("claim_id")?, col("verdict")?);
    for (i, rec) in r.records().enumerate() {
        let rec = rec.with_context(|| format!("{}: row {}", path.display(), i + 2))?;
        out.insert(rec[id].to_string(), rec[verdict].to_string());
    }
    Ok(())
}
