//! One experiment spec and one runner for every experiment binary.
//!
//! A binary says what is particular to it (its configuration, the figures it writes, its
//! default drivers, the rules its configuration must meet beyond the range checks, and the run
//! of one seed: rows, claims and notes) by implementing [`Experiment`]; [`main`] does the rest
//! in the same order for every binary: command line, configuration (built-in or `--config`,
//! range-checked), validation, drivers (joining the cluster job when asked), the data source,
//! the result directories, one run per seed (`--seeds`; simulator-only runs take several seeds
//! at once, `--jobs`), and the manifest with provenance.
//! An error anywhere leaves no partial results (each figure's directory is committed only at
//! the end).

use crate::harness::cli::drivers_label;
use crate::harness::cli::CommonArgs;
use crate::harness::data_source::{DataMode, DataSource};
use crate::harness::output::ExperimentOutput;
use crate::harness::seed_lines::SeedLines;
use anyhow::{bail, Context, Result};
use bench_core::driver::DriverKind;
use clap::{Args, CommandFactory, FromArgMatches};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};

/// The suffix of a figure's CNN version (`--cnn`): `<figure>-cnn/`, claim ids `<figure>-cnn/...`.
pub const CNN_VARIANT: &str = "cnn";

/// What is particular to one experiment binary.
pub trait Experiment: Sized {
    /// The binary's name, as in `experiments/figures.tsv`.
    const BINARY: &'static str;
    /// What the binary does and writes, for `--help`.
    const ABOUT: &'static str;
    /// The built-in quick-scale configuration (TOML text).
    const QUICK: &'static str;
    /// The built-in paper-scale configuration (TOML text).
    const PAPER: &'static str;
    /// The built-in configurations of the figure's CNN version (quick, paper), run by `--cnn`
    /// into `<figure>-cnn/`; None for a figure without one.
    const CNN: Option<(&'static str, &'static str)> = None;
    /// Other committed configurations (experiments/configs/) that `make` passes with
    /// `--config` for the figure's own run: dssp-fig3's and dssp-table1's CNN headline,
    /// mode-matrix's CNN run (`make fig-<id>-cnn`). A `--config` with the text of one of
    /// these, or of QUICK, PAPER or CNN, writes where the built-in run does; any other writes
    /// under `<out>/config/<name>/`.
    const OTHER_COMMITTED: &'static [&'static str] = &[];
    /// Drivers run when `--driver` is not given.
    const DEFAULT_DRIVERS: &'static [DriverKind];
    /// Whether simulator-only runs may take several seeds at once (`--jobs`). False for a
    /// binary that times the simulator itself (bench-scale): its seeds must not share cores.
    const SEEDS_IN_PARALLEL: bool = true;
    /// Whether the results depend on the seed. False for a figure that draws no random number
    /// (asap-spectral-gap's linear algebra): it runs once, for `--seed`, whatever `--seeds`
    /// says, so its verdicts are not counted as if several seeds had confirmed them.
    const SEEDED: bool = true;

    /// The configuration's shape (unknown keys are errors: `#[serde(deny_unknown_fields)]`).
    type Config: Serialize + DeserializeOwned + Sync;
    /// Flags of this binary beyond the common ones ([`NoArgs`] for most).
    type Args: Args + Sync;

    /// The figure ids this run writes, in order. Default: the one figure named like the binary.
    fn figures(_args: &Self::Args) -> Vec<&'static str> {
        vec![Self::BINARY]
    }

    /// Checks what the per-field range checks cannot: rules across fields, and which of
    /// `drivers` the experiment supports.
    ///
    /// # Errors
    /// A message naming the field or driver at fault.
    fn validate(cfg: &Self::Config, args: &Self::Args, drivers: &[DriverKind]) -> Result<()>;

    /// Whether `cfg` trains a CNN (a figure with a CNN version, [`Experiment::CNN`], says so
    /// from its config's CNN section): `--cnn` with a configuration that does not is refused,
    /// rather than writing the non-CNN figure's results under `<figure>-cnn/`. Default: whether
    /// the figure has a CNN version at all (so one that does not override this is not checked).
    fn trains_cnn(_cfg: &Self::Config) -> bool {
        Self::CNN.is_some()
    }

    /// Runs the experiment for one seed, writing rows, claims and notes through `run`.
    ///
    /// # Errors
    /// Any run or write error; the figures' directories are then not committed.
    fn run(run: &mut Run<'_, Self>) -> Result<()>;

    /// Files made from every seed's results once all of the run's seeds are done, before the
    /// figure's directory is committed ([`ExperimentOutput::seeds`] and
    /// [`ExperimentOutput::seed_csv`] read them back). Default: none.
    ///
    /// # Errors
    /// A file that cannot be read back or written; nothing is committed then.
    fn across_seeds(_out: &mut ExperimentOutput) -> Result<()> {
        Ok(())
    }
}

/// No flags beyond the common ones.
#[derive(Debug, Clone, Default, Args)]
pub struct NoArgs {}

/// The command line of an experiment binary: the common flags and the binary's own.
#[derive(Debug, clap::Parser)]
struct Cli<A: Args> {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    own: A,
}

/// One seed's run of experiment `E`, as the runner hands it to [`Experiment::run`].
pub struct Run<'a, E: Experiment> {
    /// The checked configuration.
    pub cfg: &'a E::Config,
    /// The binary's own flags.
    pub args: &'a E::Args,
    /// The common flags.
    pub common: &'a CommonArgs,
    /// The run seed: every random number of the run derives from it.
    pub seed: u64,
    /// The drivers to run under, in order.
    pub drivers: &'a [DriverKind],
    /// Where the data comes from; workload builders record what they built on it.
    pub data: &'a DataSource,
    outputs: Vec<ExperimentOutput>,
    notes: Vec<String>,
    driver_label: Option<String>,
}

impl<E: Experiment> Run<'_, E> {
    /// The output of the binary's first (for most binaries: only) figure.
    pub fn out(&mut self) -> &mut ExperimentOutput {
        &mut self.outputs[0]
    }

    /// The output of figure `figure`.
    ///
    /// # Panics
    /// When `figure` is not among [`Experiment::figures`] for this run: a bug of the binary.
    pub fn out_for(&mut self, figure: &str) -> &mut ExperimentOutput {
        let i = self.outputs.iter().position(|o| o.figure() == figure);
        match i {
            Some(i) => &mut self.outputs[i],
            None => panic!("{}: figure {figure} is not one of its figures", E::BINARY),
        }
    }

    /// Whether figure `figure` is written by this run (a binary making several figures may be
    /// asked for one).
    pub fn writes(&self, figure: &str) -> bool {
        self.outputs.iter().any(|o| o.figure() == figure)
    }

    /// Adds notes to every figure's manifest.
    pub fn notes(&mut self, notes: impl IntoIterator<Item = String>) {
        self.notes.extend(notes);
    }

    /// Says what ran in the manifests' `driver` field when it is not the drivers' list (e.g.
    /// `none (linear algebra)`).
    pub fn set_driver_label(&mut self, label: impl Into<String>) {
        self.driver_label = Some(label.into());
    }

    /// A progress bar of `len` steps named after the binary and the seed (not drawn where
    /// stderr is not a terminal: a line every minute instead, crate::harness::progress_log).
    pub fn progress(&self, len: u64) -> indicatif::ProgressBar {
        crate::harness::output::progress(len, &format!("{} seed {}", E::BINARY, self.seed))
    }
}

/// Loads, checks and runs experiment `E` from the process's command line; the whole `main` of
/// an experiment binary. Errors are printed as one clear message with a non-zero exit; SIGINT
/// and SIGTERM stop the run and remove its partial results ([`crate::harness::exit::main_with`]).
pub fn main<E: Experiment>() -> std::process::ExitCode {
    crate::harness::exit::main_with(|| {
        let matches = Cli::<E::Args>::command()
            .name(E::BINARY)
            .about(E::ABOUT)
            .version(env!("CARGO_PKG_VERSION"))
            .get_matches();
        let cli = Cli::<E::Args>::from_arg_matches(&matches)?;
        run_cli::<E>(&cli.common, &cli.own)
    })
}

fn run_cli<E: Experiment>(common: &CommonArgs, own: &E::Args) -> Result<()> {
    let (quick, paper, variant) = match (common.cnn, E::CNN) {
        (false, _) => (E::QUICK, E::PAPER, None),
        (true, Some((quick, paper))) => (quick, paper, Some(CNN_VARIANT)),
        (true, None) => {
            let with: Vec<String> = crate::harness::catalog::entries()
                .into_iter()
                .filter(|e| e.is_cnn_half())
                .map(|e| e.binary)
                .collect();
            return Err(crate::harness::exit::usage(format!(
                "{} has no CNN version (--cnn): the figures with one are {}",
                E::BINARY,
                with.join(", ")
            )));
        }
    };
    let cfg: E::Config = common.load_config(quick, paper)?;
    if variant.is_some() && !E::trains_cnn(&cfg) {
        bail!(
            "--cnn runs {}'s CNN version, but {} has no CNN section ([common.cnn]): give a CNN configuration (experiments/configs/{}.cnn.{}.toml is the built-in one) or drop --cnn",
            E::BINARY,
            common
                .config
                .as_ref()
                .map_or_else(|| "the built-in configuration".to_string(), |p| p.display().to_string()),
            E::BINARY,
            common.scale.label()
        );
    }
    let drivers = common.driver_list(E::DEFAULT_DRIVERS)?;
    let device = common.device(&drivers)?;
    let data = common.data_source().on(device);
    E::validate(&cfg, own, &drivers)
        .with_context(|| format!("invalid {} configuration", E::BINARY))?;
    if data.mode() == DataMode::Real {
        let value = serde_json::to_value(&cfg)
            .with_context(|| format!("cannot read back the {} configuration", E::BINARY))?;
        crate::harness::datasets_needed::check(&crate::harness::datasets_needed::names(&value))?;
    }
    let mut committed = vec![E::QUICK, E::PAPER];
    committed.extend(E::CNN.iter().flat_map(|&(q, p)| [q, p]));
    committed.extend(E::OTHER_COMMITTED);
    let root = common.results_root(&committed)?;
    // Checked before joining a cluster job: every rank refuses the same configuration alike.
    common.enter(&drivers)?;
    let mut outputs = E::figures(own)
        .into_iter()
        .map(|f| ExperimentOutput::new(&root, f, variant))
        .collect::<Result<Vec<_>>>()?;
    // Further seeds are decided on each process's own claims, so a cluster job, whose ranks
    // must run the same seeds, runs exactly --seeds.
    let (seeds, max_seeds) = if !E::SEEDED {
        (vec![common.seed], vec![common.seed])
    } else if drivers.contains(&DriverKind::Cluster) {
        (common.seed_list(), common.seed_list())
    } else {
        (common.seed_list(), common.max_seed_list())
    };
    // Measured computation times (compute.measured) are real time too: one run at a time. So
    // are runs on a LibTorch device (a GPU is one device for every seed, and its memory).
    let jobs = if E::SEEDS_IN_PARALLEL
        && !crate::harness::parallel::measures_real_time(&cfg)
        && device.deterministic()
    {
        common.sim_jobs(&drivers)
    } else {
        1
    };
    let ctx = SeedContext::<E> {
        cfg: &cfg,
        own,
        common,
        drivers: &drivers,
        mode: data.mode(),
        device,
        outputs: &outputs,
        seeds: &max_seeds,
    };
    // One pool for the seeds and every simulator run inside them (crate::harness::parallel); with one
    // thread (threads or cluster runs only) everything is serial, and seeds take turns
    // whenever a threads run is among them.
    let pool = crate::harness::parallel::pool(jobs)?;
    let mut done = pool.install(|| ctx.run_all(0..seeds.len()))?;
    // Claims the first seeds split on are decided on further seeds, up to --max-seeds.
    let undecided = undecided_claims(&max_seeds, &done, outputs.len());
    let span = |s: &[u64]| format!("{}-{}", s[0], s[s.len() - 1]);
    let (n, m) = (seeds.len(), max_seeds.len());
    let first = span(&seeds);
    let (count, ids) = (undecided.len(), undecided.join(", "));
    let seeds_note = if !undecided.is_empty() && m > n {
        let more = span(&max_seeds[n..]);
        eprintln!(
            "{}: {count} claim(s) undecided on seeds {first} ({ids}); running seeds {more}",
            E::BINARY
        );
        done.extend(pool.install(|| ctx.run_all(n..m))?);
        Some(format!(
            "further seeds: seeds {first} left {count} claim(s) undecided ({ids}), so seeds {more} ran too (--max-seeds {m}, the cap), and every verdict is decided on all {m} seeds"
        ))
    } else if drivers.contains(&DriverKind::Cluster) && E::SEEDED && n > 1 {
        Some(format!(
            "further seeds: none under the cluster driver (its ranks must run the same seeds; {count} claim(s) undecided on seeds {first} stay undecided)"
        ))
    } else if !undecided.is_empty() {
        Some(format!(
            "further seeds: {count} claim(s) undecided on seeds {first} ({ids}), and the cap --max-seeds {m} allows no more: they stay undecided"
        ))
    } else if E::SEEDED && n > 1 {
        Some(format!(
            "further seeds: none needed (no claim undecided on seeds {first}; the cap is --max-seeds {m})"
        ))
    } else {
        None
    };
    let (mut notes, mut driver_label) = (Vec::new(), None);
    for (k, seed_done) in done.into_iter().enumerate() {
        for (out, part) in outputs.iter_mut().zip(seed_done.parts) {
            out.absorb(max_seeds[k], part);
        }
        for line in seed_done.provenance {
            data.record(line);
        }
        // Notes and labels are the same for every seed but may name it: the first seed's stand.
        if k == 0 {
            notes = seed_done.notes;
            driver_label = seed_done.driver_label;
        }
    }
    notes.extend(seeds_note);
    let driver = driver_label.unwrap_or_else(|| drivers_label(&drivers));
    for out in &mut outputs {
        E::across_seeds(out)
            .with_context(|| format!("{}: the files made across the seeds", out.figure()))?;
    }
    for out in outputs {
        out.finish(
            &cfg,
            common.seed,
            common.scale.label(),
            &driver,
            &data,
            notes.clone(),
        )?;
    }
    Ok(())
}

/// The ids of the claims that the finished seeds `done` (the first of `seeds`, in order) leave
/// undecided, over the run's `outputs` figures.
fn undecided_claims(seeds: &[u64], done: &[SeedDone], outputs: usize) -> Vec<String> {
    if done.len() < 2 {
        return Vec::new();
    }
    (0..outputs)
        .flat_map(|j| {
            let per_seed: Vec<(u64, Vec<bench_core::claims::Claim>)> = seeds
                .iter()
                .zip(done)
                .map(|(seed, d)| (*seed, d.parts[j].part_claims().to_vec()))
                .collect();
            bench_core::claims::across_seeds(&per_seed)
                .into_iter()
                .filter(|c| c.verdict == bench_core::claims::Verdict::Undecided)
                .map(|c| c.claim_id)
        })
        .collect()
}

/// What every seed of a run shares: the checked configuration, flags, drivers, data mode and
/// the figures' outputs (each seed writes its own part of them).
struct SeedContext<'a, E: Experiment> {
    cfg: &'a E::Config,
    own: &'a E::Args,
    common: &'a CommonArgs,
    drivers: &'a [DriverKind],
    mode: DataMode,
    device: bench_core::workload::CnnDevice,
    outputs: &'a [ExperimentOutput],
    seeds: &'a [u64],
}

/// One finished seed: its part of each figure, its notes and driver label, and what data its
/// workloads were built on.
struct SeedDone {
    parts: Vec<ExperimentOutput>,
    notes: Vec<String>,
    driver_label: Option<String>,
    provenance: Vec<String>,
}

impl<E: Experiment> SeedContext<'_, E> {
    /// Runs the `k`-th seed, saying so through `log`. Its data source is its own, so that
    /// what it records does not depend on which seed ran first; the caller merges them in seed
    /// order.
    fn run(&self, k: usize, log: &SeedLines) -> Result<SeedDone> {
        let seed = self.seeds[k];
        log.started(k, seed);
        let started = std::time::Instant::now();
        let data = DataSource::new(self.mode).on(self.device);
        let mut run = Run::<E> {
            cfg: self.cfg,
            args: self.own,
            common: self.common,
            seed,
            drivers: self.drivers,
            data: &data,
            outputs: self
                .outputs
                .iter()
                .map(|o| o.seed_part(seed, k == 0))
                .collect(),
            notes: Vec::new(),
            driver_label: None,
        };
        E::run(&mut run).with_context(|| format!("seed {seed}"))?;
        log.finished(k, seed, started.elapsed());
        Ok(SeedDone {
            parts: run.outputs,
            notes: run.notes,
            driver_label: run.driver_label,
            provenance: data.provenance(),
        })
    }

    /// Runs the seeds `ks` (indices into the run's seeds), in parallel on the current pool when
    /// it has several threads. After a failure no further seed starts; the first failing
    /// seed's error (in seed order) is returned.
    fn run_all(&self, ks: std::ops::Range<usize>) -> Result<Vec<SeedDone>> {
        let parallel =
            rayon::current_num_threads() > 1 && CommonArgs::seeds_in_parallel(self.drivers);
        let at_once = if parallel {
            rayon::current_num_threads().min(ks.len())
        } else {
            1
        };
        let log = SeedLines::new(E::BINARY, ks.clone(), &self.seeds[ks.clone()], at_once);
        if !parallel {
            return ks.map(|k| self.run(k, &log)).collect();
        }
        let failed = AtomicBool::new(false);
        let ks: Vec<usize> = ks.collect();
        let slots = crate::harness::parallel::map_runs(true, &ks, |&k| {
            if failed.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let r = self.run(k, &log);
            if r.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            Ok(Some(r))
        })?;
        let mut done = Vec::with_capacity(slots.len());
        let mut skipped = false;
        for slot in slots {
            match slot {
                Some(r) => done.push(r?),
                None => skipped = true,
            }
        }
        if skipped {
            // Not started after a failure, which an earlier slot would have returned.
            bail!("a seed did not run");
        }
        Ok(done)
    }
}
