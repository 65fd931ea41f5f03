//! One figure's result directory: CSVs, claims and manifest, committed atomically. A run of
//! several seeds writes the first seed's CSVs at the top (what the figures draw), every other
//! seed's under `seeds/<seed>/`, each seed's claims under `seeds/<seed>/claims.csv`, and their
//! aggregate ([`across_seeds`]) as `claims.csv`.

use anyhow::{Context, Result};
use bench_core::claims::{across_seeds, Claim, Verdict};
use bench_core::metrics::{git_revision, hostname, Manifest, RunDir};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Results of one figure under construction at `<out>/<figure-id>/`.
pub struct ExperimentOutput {
    /// The figure the binary writes (what [`Self::figure`] answers and `Run::out_for` matches).
    figure: String,
    /// The id its results are written under: `figure`, or `<figure>-<variant>` for a variant
    /// such as the CNN version (the directory, the manifest's experiment, the claim ids).
    written_as: String,
    /// None on a cluster rank other than 0, which writes nothing. Shared with the seeds' parts
    /// ([`Self::seed_part`]) while they run.
    dir: Option<Arc<RunDir>>,
    claims: Vec<Claim>,
    /// Claims of the seeds finished so far (several-seed runs).
    seeds_done: Vec<(u64, Vec<Claim>)>,
    /// Where this seed's files go inside the directory (`seeds/<seed>/` after the first seed).
    prefix: String,
    started: Instant,
    /// The same moment on the calendar, for the manifest's `started_utc`.
    started_at: std::time::SystemTime,
}

impl ExperimentOutput {
    /// Starts `<out>/<figure>/`, or `<out>/<figure>-<variant>/` for a variant (written under a
    /// temporary name until [`Self::finish`]).
    ///
    /// # Errors
    /// When the results directory cannot be created.
    pub fn new(out: &std::path::Path, figure: &str, variant: Option<&str>) -> Result<Self> {
        let written_as = match variant {
            Some(v) => format!("{figure}-{v}"),
            None => figure.to_string(),
        };
        if !crate::harness::cluster::joined() {
            if let Some(how) = crate::harness::cluster::started_as_rank() {
                anyhow::bail!("this process was started as {how}, but {figure} does not run under the cluster driver here: every rank would write the same files; start it once, without a launcher");
            }
        }
        let dir = if crate::harness::cluster::is_writer() {
            Some(Arc::new(
                RunDir::create(out.join(&written_as))
                    .with_context(|| format!("cannot create results for {written_as}"))?,
            ))
        } else {
            None
        };
        Ok(ExperimentOutput {
            figure: figure.to_string(),
            written_as,
            dir,
            claims: Vec::new(),
            seeds_done: Vec::new(),
            prefix: String::new(),
            started: Instant::now(),
            started_at: std::time::SystemTime::now(),
        })
    }

    /// Writes a CSV file of the figure.
    ///
    /// # Errors
    /// On I/O or serialisation failure.
    pub fn csv<T: Serialize>(&self, name: &str, rows: &[T]) -> Result<()> {
        match &self.dir {
            Some(d) => Ok(d.write_csv(&format!("{}{name}", self.prefix), rows)?),
            None => Ok(()),
        }
    }

    /// Writes a JSON file of the figure.
    ///
    /// # Errors
    /// On I/O failure.
    pub fn json<T: Serialize>(&self, name: &str, value: &T) -> Result<()> {
        match &self.dir {
            Some(d) => Ok(d.write_json(&format!("{}{name}", self.prefix), value)?),
            None => Ok(()),
        }
    }

    /// The figure id these results are written under.
    pub fn figure(&self) -> &str {
        &self.figure
    }

    /// Adds a claim. A variant's claims are renamed from `<figure>/...` to the id written
    /// (`<figure>-cnn/...`), so that they never share an id with the figure's own.
    pub fn claim(&mut self, mut c: Claim) {
        c.claim_id = self.written_id(&c.claim_id);
        self.claims.push(c);
    }

    /// The id claim `id` is written under: `<figure>-cnn/...` for a variant's `<figure>/...`
    /// (the files that name claims, sensitivity.csv among them, use it too).
    pub fn written_id(&self, id: &str) -> String {
        if self.written_as != self.figure {
            if let Some(rest) = id.strip_prefix(&format!("{}/", self.figure)) {
                return format!("{}/{rest}", self.written_as);
            }
        }
        id.to_string()
    }

    /// The part of this figure that seed `seed` writes, the `first` of the run's seeds at the
    /// top of the directory, every other under `seeds/<seed>/`. Parts of different seeds write
    /// different files, so they may run at once; each is handed back with [`Self::absorb`].
    pub(crate) fn seed_part(&self, seed: u64, first: bool) -> ExperimentOutput {
        ExperimentOutput {
            figure: self.figure.clone(),
            written_as: self.written_as.clone(),
            dir: self.dir.clone(),
            claims: Vec::new(),
            seeds_done: Vec::new(),
            prefix: if first {
                String::new()
            } else {
                format!("seeds/{seed}/")
            },
            started: Instant::now(),
            started_at: std::time::SystemTime::now(),
        }
    }

    /// The claims a seed's part has made so far (in the order made).
    pub(crate) fn part_claims(&self) -> &[Claim] {
        &self.claims
    }

    /// The seeds absorbed so far, in seed order (the first one's files are at the top).
    pub fn seeds(&self) -> Vec<u64> {
        self.seeds_done.iter().map(|(s, _)| *s).collect()
    }

    /// Reads back the CSV `name` that seed `seed` wrote (at the top for the first seed, under
    /// `seeds/<seed>/` for the others), for files made across the seeds; None on a cluster
    /// rank that writes nothing.
    ///
    /// # Errors
    /// When the file is missing or does not parse.
    pub fn seed_csv<T: serde::de::DeserializeOwned>(
        &self,
        seed: u64,
        name: &str,
    ) -> Result<Option<Vec<T>>> {
        let Some(d) = &self.dir else { return Ok(None) };
        let first = self.seeds_done.first().map(|(s, _)| *s);
        let path = if first == Some(seed) {
            name.to_string()
        } else {
            format!("seeds/{seed}/{name}")
        };
        Ok(Some(d.read_csv(&path)?))
    }

    /// Takes back seed `seed`'s finished part: its claims are kept for the aggregate. Parts are
    /// absorbed in seed order, whatever order they finished in.
    pub(crate) fn absorb(&mut self, seed: u64, part: ExperimentOutput) {
        self.seeds_done.push((seed, part.claims));
    }

    /// Writes claims.csv and manifest.json (the notes followed by `data`'s provenance), then
    /// moves the directory into place.
    ///
    /// # Errors
    /// On I/O failure (nothing is left at the final path then).
    pub fn finish<C: Serialize>(
        mut self,
        config: &C,
        seed: u64,
        scale: &str,
        driver: &str,
        data: &crate::harness::data_source::DataSource,
        mut notes: Vec<String>,
    ) -> Result<PathBuf> {
        notes.extend(data.provenance());
        notes.extend(crate::harness::cluster::notes());
        let Some(dir) = self.dir else {
            // A cluster rank other than 0: rank 0 writes the same results.
            return Ok(PathBuf::new());
        };
        let dir = Arc::try_unwrap(dir).map_err(|_| {
            anyhow::anyhow!(
                "{}: a seed's part is still alive when the results are committed",
                self.written_as
            )
        })?;
        // Every claim gets its kind, and every failure its class and why, before it is written.
        let table = crate::harness::explained::FailureTable::committed();
        let explain = |claims: Vec<Claim>| -> Vec<Claim> {
            claims.into_iter().map(|c| table.apply(c)).collect()
        };
        self.claims = explain(std::mem::take(&mut self.claims));
        for (_, claims) in &mut self.seeds_done {
            *claims = explain(std::mem::take(claims));
        }
        let (passed, failed, unexercised, undecided) = match self.seeds_done.len() {
            // One seed (or seeds never begun): claims.csv as it always was.
            0 | 1 => {
                let claims = match self.seeds_done.pop() {
                    Some((_, c)) => c,
                    None => self.claims,
                };
                dir.write_csv("claims.csv", &claims)?;
                count(claims.iter().map(|c| c.verdict))
            }
            _ => {
                for (seed, claims) in &self.seeds_done {
                    dir.write_csv(&format!("seeds/{seed}/claims.csv"), claims)?;
                }
                let agg: Vec<_> = across_seeds(&self.seeds_done)
                    .into_iter()
                    .map(|c| table.apply_seeded(c))
                    .collect();
                dir.write_csv("claims.csv", &agg)?;
                let seeds: Vec<String> =
                    self.seeds_done.iter().map(|(s, _)| s.to_string()).collect();
                notes.push(format!(
                    "seeds {}: the top-level CSVs are seed {}'s, the others' under seeds/<seed>/; claims.csv aggregates every seed's claims (seeds/<seed>/claims.csv): a claim not exercised by at least half of the seeds that evaluated it is not exercised; one whose exercised seeds disagree (more than one in five the other way) is undecided; else it passes when it passes for a strict majority of them and, where it has a deciding number, for the seed at its median",
                    seeds.join(", "),
                    seeds[0]
                ));
                count(agg.iter().map(|c| c.verdict))
            }
        };
        let config = serde_json::to_value(config)?;
        let inputs = crate::harness::input_files::inputs(&config);
        let deviations = crate::harness::deviations::DeviationTable::committed()
            .for_run(&self.written_as, &config)
            .into_iter()
            .map(serde_json::to_value)
            .collect::<Result<Vec<_>, _>>()?;
        let manifest = Manifest {
            experiment: self.written_as.clone(),
            config,
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
                // The platform the sim bytes are promised on, and the instruction-set level the
                // CNN kernels ran at (speed only: the bits are the same at every level).
                "numeric_platform": bench_core::metrics::numeric_platform(),
                "cnn_cpu_level": cnn_cpu_level(),
                // The cluster driver's transport, and for ofi the provider it opened.
                "cluster_transport": crate::harness::cluster::transport_detail(),
            }),
            command: std::env::args().collect(),
            wall_seconds: self.started.elapsed().as_secs_f64(),
            started_utc: bench_core::metrics::utc_timestamp(self.started_at),
            cpu: format!(
                "{}, {} logical CPUs",
                bench_core::metrics::cpu_model(),
                std::thread::available_parallelism().map_or(1, |n| n.get())
            ),
            notes,
            deviations,
            environment: bench_core::metrics::environment(),
            inputs,
        };
        dir.write_json("manifest.json", &manifest)?;
        bench_core::driver::cluster::fault_point::reach("write");
        let path = dir.commit()?;
        eprintln!(
            "{}: {} claims passed, {} failed{}{} -> {}",
            self.written_as,
            passed,
            failed,
            if undecided > 0 {
                format!(", {undecided} undecided")
            } else {
                String::new()
            },
            if unexercised > 0 {
                format!(", {unexercised} not exercised")
            } else {
                String::new()
            },
            path.display()
        );
        Ok(path)
    }
}

/// (passed, failed, not exercised, undecided) among `verdicts`.
fn count(verdicts: impl Iterator<Item = Verdict>) -> (usize, usize, usize, usize) {
    verdicts.fold((0, 0, 0, 0), |(p, f, n, u), v| match v {
        Verdict::Pass => (p + 1, f, n, u),
        Verdict::Fail => (p, f + 1, n, u),
        Verdict::NotExercised => (p, f, n + 1, u),
        Verdict::Undecided => (p, f, n, u + 1),
        Verdict::NotApplicable => (p, f, n, u),
    })
}

/// A progress bar on stderr with elapsed time and an estimate of what is left. Bars of seeds
/// running at once share one display, one line each. Where stderr is not a terminal the bar is
/// not drawn and [`progress_log`](crate::harness::progress_log) writes a line about it every
/// minute instead.
pub fn progress(len: u64, what: &str) -> indicatif::ProgressBar {
    static BARS: std::sync::OnceLock<indicatif::MultiProgress> = std::sync::OnceLock::new();
    let pb = BARS
        .get_or_init(indicatif::MultiProgress::new)
        .add(indicatif::ProgressBar::new(len));
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix:>24} {msg:<20} [{bar:30}] {pos}/{len} {elapsed} (about {eta} left)",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    crate::harness::progress_log::watch(&pb);
    pb
}

/// The CNN kernels' instruction-set level in this process, or "-" in a build without CNNs.
fn cnn_cpu_level() -> &'static str {
    #[cfg(feature = "cnn")]
    {
        bench_core::workload::cpu_level::current().name()
    }
    #[cfg(not(feature = "cnn"))]
    {
        "-"
    }
}
