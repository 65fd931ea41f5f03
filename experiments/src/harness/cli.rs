//! Flags every experiment binary takes, and configuration loading.

use anyhow::{bail, Context, Result};
use bench_core::driver::DriverKind;
use clap::{Args, ValueEnum};
use serde::de::DeserializeOwned;
use std::path::PathBuf;

/// Problem size of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// Minutes on one 2-core machine: simulated or thread workers, synthetic data.
    Quick,
    /// The papers' worker counts, dataset sizes and durations.
    Paper,
}

impl Scale {
    /// `quick` or `paper`.
    pub fn label(&self) -> &'static str {
        match self {
            Scale::Quick => "quick",
            Scale::Paper => "paper",
        }
    }
}

/// Flags common to every experiment binary.
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// Problem size: `quick` (minutes on a laptop) or `paper` (the papers' sizes).
    #[arg(long, value_enum, default_value_t = Scale::Quick)]
    pub scale: Scale,
    /// Driver(s) to run under, comma-separated: `sim` (deterministic virtual time), `threads`
    /// (one OS thread per node, real time) and/or `cluster` (one process per rank, started by
    /// `syncbench launch --ranks N --`, mpirun or srun; only rank 0 writes results). Default: the
    /// experiment's own list. Another name is a usage error (exit 2), as for every flag.
    #[arg(long, value_delimiter = ',', value_parser = ["sim", "threads", "cluster"])]
    pub driver: Vec<String>,
    /// Run seed: every random number of the run derives from it. With `--seeds N` the seeds
    /// are SEED, SEED+1, ..., SEED+N-1.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Seeds per verdict: the experiment runs once per seed; a claim whose seeds disagree (more
    /// than one in five the other way) is undecided, else it passes when it passes for a
    /// strict majority of them and, where it has a deciding number, for the seed at its median
    /// (claims.csv gains `seeds` and `passes`; every seed's files after the first are under
    /// `<figure>/seeds/<seed>/`). Default: 3 at quick scale, 5 at paper scale.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub seeds: Option<u64>,
    /// The most seeds a figure runs when some of its claims are undecided after `--seeds`: it
    /// runs the further consecutive seeds up to this many and decides on all of them (the
    /// manifest says how many ran and why). Default: 5 at quick scale, 7 at paper scale; equal
    /// to `--seeds` (or below it), no further seeds.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub max_seeds: Option<u64>,
    /// Threads for simulator runs when every driver is `sim`: seeds, and the independent runs
    /// of a seed (modes, sensitivity points), run at once (virtual time: each run's bytes are
    /// those of a run on its own). Default: the machine's cores. Runs under `threads` or
    /// `cluster` always run one at a time, so that their timings are not shared.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub jobs: Option<u64>,
    /// Results root; each figure writes `<out>/<figure-id>/`, or `<out>/config/<name>/<figure-id>/`
    /// with a `--config <name>.toml` that is not one of the binary's committed configurations
    /// (experiments/configs/), so a run on your own configuration never overwrites the figure's.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// TOML configuration replacing the built-in one for the chosen scale (unknown keys are
    /// errors). See experiments/configs/ for the defaults. Results go to
    /// `<out>/config/<name>/` (`<name>`: the file's name without `.toml`), beside the built-in
    /// run's, unless the file's text is one of the binary's committed configurations.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// SVM experiments' data: `synthetic` (seeded twins of the datasets' shapes; default at
    /// quick scale) or `real` (the files of datasets.lock from the cache, fetched and verified
    /// with `syncbench datasets fetch NAME`; default at paper scale).
    #[arg(long, value_enum)]
    pub data: Option<crate::harness::data_source::DataMode>,
    /// Run the figure's CNN version (Hop's CNN halves: hop-fig12, hop-fig13, hop-fig14-16,
    /// hop-fig17, hop-fig18-19, hop-fig20-21):
    /// its built-in CNN configuration for the scale (experiments/configs/<binary>.cnn.<scale>.toml;
    /// `--config` replaces it), written as `<out>/<figure>-cnn/` with claim ids
    /// `<figure>-cnn/...`, beside the figure's own results. Needs the `cnn` feature.
    #[arg(long)]
    pub cnn: bool,
    /// Where CNN workloads compute (other workloads ignore it): `cpu` (burn's pure-Rust
    /// backend, one thread; a seed gives the same bytes), `cuda:N` (GPU N through LibTorch;
    /// needs the `cuda` feature), or `torch-cpu` (LibTorch on the CPU). A cluster job may list
    /// one per rank (`cuda:0,cuda:0,cuda:1,cuda:1`: rank r takes entry r, ranks may share a
    /// GPU) or say `cuda` (each rank takes the GPU of its local rank).
    #[arg(long, default_value = "cpu", value_name = "DEVICE[,DEVICE...]")]
    pub device: String,
    /// Cluster-driver flags.
    #[command(flatten)]
    pub cluster: crate::harness::cluster::ClusterArgs,
}

impl CommonArgs {
    /// Loads the configuration: `--config` if given, else the built-in text for the scale.
    ///
    /// # Errors
    /// When the file cannot be read or does not parse (the message names the file and key).
    pub fn load_config<T: DeserializeOwned>(&self, quick: &str, paper: &str) -> Result<T> {
        let (text, origin) = match &self.config {
            Some(p) => (
                std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read config {}", p.display()))?,
                p.display().to_string(),
            ),
            None => (
                match self.scale {
                    Scale::Quick => quick.to_string(),
                    Scale::Paper => paper.to_string(),
                },
                format!("built-in {} config", self.scale.label()),
            ),
        };
        // Parsed into the structs first (type errors and unknown keys name line and column),
        // then every numeric field range-checked in one place.
        let cfg: T =
            toml::from_str(&text).with_context(|| format!("invalid configuration in {origin}"))?;
        let value: toml::Value =
            toml::from_str(&text).with_context(|| format!("invalid configuration in {origin}"))?;
        crate::harness::config_ranges::check(&value)
            .map_err(|e| anyhow::anyhow!("invalid configuration in {origin}: {e}"))?;
        Ok(cfg)
    }

    /// Where this run's figures go: `--out`, or `<out>/config/<name>/` for a `--config
    /// <name>.toml` whose text is none of `committed` (the binary's configurations in
    /// experiments/configs/, which `make` passes for a figure's own run).
    ///
    /// # Errors
    /// When the configuration cannot be read.
    pub fn results_root(&self, committed: &[&str]) -> Result<PathBuf> {
        let Some(path) = &self.config else {
            return Ok(self.out.clone());
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config {}", path.display()))?;
        if committed.contains(&text.as_str()) {
            return Ok(self.out.clone());
        }
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "config".to_string());
        Ok(self.out.join("config").join(name))
    }

    /// The run's seeds: `--seeds` (default 3 at quick scale, 5 at paper scale) consecutive seeds
    /// from `--seed`.
    pub fn seed_list(&self) -> Vec<u64> {
        let n = self.seeds.unwrap_or(match self.scale {
            Scale::Quick => 3,
            Scale::Paper => 5,
        });
        (0..n).map(|k| self.seed.wrapping_add(k)).collect()
    }

    /// The seeds a run may extend to when claims are undecided: `--max-seeds` (default 5 at
    /// quick scale, 7 at paper scale) consecutive seeds from `--seed`, never fewer than
    /// [`Self::seed_list`]'s.
    pub fn max_seed_list(&self) -> Vec<u64> {
        let first = self.seed_list();
        let n = self
            .max_seeds
            .unwrap_or(match self.scale {
                Scale::Quick => 5,
                Scale::Paper => 7,
            })
            .max(first.len() as u64);
        (0..n).map(|k| self.seed.wrapping_add(k)).collect()
    }

    /// Threads for simulator runs: `--jobs`, default the machine's cores, when some driver is
    /// `sim` (or none is named: linear algebra) and none is `cluster` (other ranks share the
    /// host); else one. Seeds take several of them only when every driver is `sim`
    /// ([`Self::seeds_in_parallel`]); a `threads` run never shares the cores.
    pub fn sim_jobs(&self, drivers: &[DriverKind]) -> usize {
        if drivers.contains(&DriverKind::Cluster)
            || (!drivers.is_empty() && !drivers.contains(&DriverKind::Sim))
        {
            return 1;
        }
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.jobs.map_or(cores, |j| j as usize).max(1)
    }

    /// Whether seeds run at once: only when every driver is `sim` (a `threads` or `cluster`
    /// run measures real time, and another seed's runs would share its cores).
    pub fn seeds_in_parallel(drivers: &[DriverKind]) -> bool {
        drivers.iter().all(|d| *d == DriverKind::Sim)
    }

    /// `--data`, or its default for the scale.
    pub fn data_mode(&self) -> crate::harness::data_source::DataMode {
        self.data.unwrap_or(match self.scale {
            Scale::Quick => crate::harness::data_source::DataMode::Synthetic,
            Scale::Paper => crate::harness::data_source::DataMode::Real,
        })
    }

    /// The run's data source: `--data` (or its default for the scale), recording what the
    /// workloads are built on for the manifest.
    pub fn data_source(&self) -> crate::harness::data_source::DataSource {
        crate::harness::data_source::DataSource::new(self.data_mode())
    }

    /// This process's CNN device (`--device`) for a run under `drivers` (a per-rank list or a
    /// bare `cuda` reads the rank only when they include `cluster`), checked against this
    /// build and machine.
    ///
    /// # Errors
    /// An unknown device, a per-rank list that does not fit the job, or a device this build
    /// or machine does not have, named.
    pub fn device(&self, drivers: &[DriverKind]) -> Result<bench_core::workload::CnnDevice> {
        let (rank, local) = crate::harness::device_choice::ranks(
            drivers.contains(&DriverKind::Cluster),
            self.cluster.rank,
        );
        let d = crate::harness::device_choice::pick(
            &self.device,
            rank,
            local,
            bench_core::workload::CnnDevice::Cuda(0)
                .built()
                .then(bench_core::workload::CnnDevice::cuda_devices),
        )?;
        d.check()?;
        Ok(d)
    }

    /// The drivers to run (`--driver`, else `default`), without joining a cluster job yet.
    ///
    /// # Errors
    /// For an unknown driver name.
    pub fn driver_list(&self, default: &[DriverKind]) -> Result<Vec<DriverKind>> {
        if self.driver.is_empty() {
            Ok(default.to_vec())
        } else {
            self.parse_drivers()
        }
    }

    /// Joins the cluster job when `drivers` include `cluster`; refuses a process started as a
    /// rank whose drivers do not (every rank would write the same files).
    ///
    /// # Errors
    /// A cluster job that cannot be joined, or a rank without the cluster driver.
    pub fn enter(&self, drivers: &[DriverKind]) -> Result<()> {
        if drivers.contains(&DriverKind::Cluster) {
            crate::harness::cluster::join(&self.cluster)?;
        } else if let Some(how) = crate::harness::cluster::started_as_rank() {
            bail!("this process was started as {how}, but the drivers ({}) do not include cluster: every rank would run the whole experiment and write the same files; add --driver cluster", drivers_label(drivers));
        }
        Ok(())
    }

    fn parse_drivers(&self) -> Result<Vec<DriverKind>> {
        self.driver
            .iter()
            .map(|d| match d.trim() {
                "sim" => Ok(DriverKind::Sim),
                "threads" => Ok(DriverKind::Threads),
                "cluster" => Ok(DriverKind::Cluster),
                other => bail!("unknown driver '{other}'; expected sim, threads or cluster"),
            })
            .collect()
    }
}

/// `sim,threads`-style label of a driver list, for manifests.
pub fn drivers_label(drivers: &[DriverKind]) -> String {
    drivers
        .iter()
        .map(|d| d.label())
        .collect::<Vec<_>>()
        .join(",")
}

/// `name` when one driver runs, `name{sep}driver` when several do, so rows and claim ids of
/// different drivers never collide.
pub fn driver_tag(name: &str, sep: &str, driver: DriverKind, drivers: &[DriverKind]) -> String {
    if drivers.len() > 1 {
        format!("{name}{sep}{}", driver.label())
    } else {
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        common: CommonArgs,
    }

    fn common(args: &[&str]) -> CommonArgs {
        Cli::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
            .unwrap()
            .common
    }

    #[test]
    fn only_simulator_runs_take_several_seeds_at_once() {
        let sim = [DriverKind::Sim];
        assert_eq!(common(&["--jobs", "4"]).sim_jobs(&sim), 4);
        assert_eq!(common(&["--jobs", "1"]).sim_jobs(&sim), 1);
        // Threads and cluster runs measure real time: one seed at a time, whatever --jobs says;
        // a mixed run's simulator runs may still share the cores, its threads runs never.
        for drivers in [vec![DriverKind::Threads], vec![DriverKind::Cluster]] {
            assert_eq!(common(&["--jobs", "4"]).sim_jobs(&drivers), 1);
            assert!(!CommonArgs::seeds_in_parallel(&drivers));
        }
        let mixed = [DriverKind::Sim, DriverKind::Threads];
        assert_eq!(common(&["--jobs", "4"]).sim_jobs(&mixed), 4);
        assert!(!CommonArgs::seeds_in_parallel(&mixed));
        assert!(CommonArgs::seeds_in_parallel(&sim));
        assert_eq!(
            common(&["--jobs", "4"]).sim_jobs(&[DriverKind::Sim, DriverKind::Cluster]),
            1
        );
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(common(&[]).sim_jobs(&sim), cores);
        assert!(Cli::try_parse_from(["x", "--jobs", "0"]).is_err());
    }

    #[test]
    fn further_seeds_extend_the_run_consecutively_up_to_the_cap() {
        let seeds = |args: &[&str]| (common(args).seed_list(), common(args).max_seed_list());
        assert_eq!(seeds(&[]), (vec![1, 2, 3], vec![1, 2, 3, 4, 5]));
        assert_eq!(
            seeds(&["--scale", "paper"]),
            ((1..=5).collect(), (1..=7).collect())
        );
        assert_eq!(
            seeds(&["--seed", "4", "--max-seeds", "4"]),
            (vec![4, 5, 6], vec![4, 5, 6, 7])
        );
        // A cap at or below --seeds runs no further seed.
        assert_eq!(seeds(&["--seeds", "6", "--max-seeds", "2"]).1.len(), 6);
        // --driver takes only the three drivers' names, as clap's own values.
        assert!(Cli::try_parse_from(["x", "--driver", "sim,threads"]).is_ok());
        let e = Cli::try_parse_from(["x", "--driver", "simulator"])
            .err()
            .unwrap();
        assert_eq!(e.exit_code(), 2);
    }
}
