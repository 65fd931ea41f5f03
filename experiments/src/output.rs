//! One figure's result directory: CSVs, claims and manifest, committed atomically.

use anyhow::{Context, Result};
use bench_core::claims::{Claim, Verdict};
use bench_core::metrics::{git_revision, hostname, Manifest, RunDir};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// Results of one figure under construction at `<out>/<figure-id>/`.
pub struct ExperimentOutput {
    figure: String,
    /// None on a cluster rank other than 0, which writes nothing.
    dir: Option<RunDir>,
    claims: Vec<Claim>,
    started: Instant,
}

impl ExperimentOutput {
    /// Starts `<out>/<figure>/` (written under a temporary name until [`Self::finish`]).
    ///
    /// # Errors
    /// When the results directory cannot be created.
    pub fn new(out: &std::path::Path, figure: &str) -> Result<Self> {
        if !crate::cluster_cli::joined() {
            if let Some(how) = crate::cluster_cli::started_as_rank() {
                anyhow::bail!("this process was started as {how}, but {figure} does not run under the cluster driver here: every rank would write the same files; start it once, without a launcher");
            }
        }
        let dir = if crate::cluster_cli::is_writer() {
            Some(
                RunDir::create(out.join(figure))
                    .with_context(|| format!("cannot create results for {figure}"))?,
            )
        } else {
            None
        };
        Ok(ExperimentOutput {
            figure: figure.to_string(),
            dir,
            claims: Vec::new(),
            started: Instant::now(),
        })
    }

    /// Writes a CSV file of the figure.
    ///
    /// # Errors
    /// On I/O or serialisation failure.
    pub fn csv<T: Serialize>(&self, name: &str, rows: &[T]) -> Result<()> {
        match &self.dir {
            Some(d) => Ok(d.write_csv(name, rows)?),
            None => Ok(()),
        }
    }

    /// Writes a JSON file of the figure.
    ///
    /// # Errors
    /// On I/O failure.
    pub fn json<T: Serialize>(&self, name: &str, value: &T) -> Result<()> {
        match &self.dir {
            Some(d) => Ok(d.write_json(name, value)?),
            None => Ok(()),
        }
    }

    /// The figure id these results are written under.
    pub fn figure(&self) -> &str {
        &self.figure
    }

    /// Adds a claim.
    pub fn claim(&mut self, c: Claim) {
        self.claims.push(c);
    }

    /// Writes claims.csv and manifest.json (the notes followed by `data`'s provenance), then
    /// moves the directory into place.
    ///
    /// # Errors
    /// On I/O failure (nothing is left at the final path then).
    pub fn finish<C: Serialize>(
        self,
        config: &C,
        seed: u64,
        scale: &str,
        driver: &str,
        data: &crate::data_source::DataSource,
        mut notes: Vec<String>,
    ) -> Result<PathBuf> {
        notes.extend(data.provenance());
        notes.extend(crate::cluster_cli::notes());
        let Some(dir) = self.dir else {
            // A cluster rank other than 0: rank 0 writes the same results.
            return Ok(PathBuf::new());
        };
        dir.write_csv("claims.csv", &self.claims)?;
        let manifest = Manifest {
            experiment: self.figure.clone(),
            config: serde_json::to_value(config)?,
            seed,
            scale: scale.to_string(),
            driver: driver.to_string(),
            git_revision: git_revision(),
            host: hostname(),
            versions: serde_json::json!({
                "syncbench": env!("CARGO_PKG_VERSION"),
                "bench-core": env!("CARGO_PKG_VERSION"),
                "rustc": env!("SYNCBENCH_RUSTC"),
                "dependencies": env!("SYNCBENCH_DEPS").split(',').collect::<Vec<_>>(),
            }),
            command: std::env::args().collect(),
            wall_seconds: self.started.elapsed().as_secs_f64(),
            notes,
        };
        dir.write_json("manifest.json", &manifest)?;
        bench_core::driver::cluster::fault_point::reach("write");
        let failed = self
            .claims
            .iter()
            .filter(|c| c.verdict == Verdict::Fail)
            .count();
        let passed = self
            .claims
            .iter()
            .filter(|c| c.verdict == Verdict::Pass)
            .count();
        let path = dir.commit()?;
        eprintln!(
            "{}: {} claims passed, {} failed -> {}",
            self.figure,
            passed,
            failed,
            path.display()
        );
        Ok(path)
    }
}

/// A progress bar on stderr, hidden when stderr is not a terminal.
pub fn progress(len: u64, what: &str) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new(len);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{msg:>24} [{bar:30}] {pos}/{len} {elapsed}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}
