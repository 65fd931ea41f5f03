//! The one place that turns a configuration into protocol nodes.

use super::coord::{BarrierPredicate, Collect, Coordinator, TaskWorker};
use super::ps::dssp::DsspController;
use super::ps::{PsServer, PsWorker, ReadPolicy, ReleasePolicy};
use super::Protocol;
use crate::error::{CoreError, Result};

/// Parameter-server synchronization modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase", deny_unknown_fields)]
pub enum SyncMode {
    /// Bulk synchronous parallel: a read at clock c sees every update of clocks < c.
    Bsp,
    /// Asynchronous parallel: reads never block and carry no freshness guarantee.
    Asp,
    /// Stale synchronous parallel: a read at clock c sees every update of clocks <= c - s - 1.
    Ssp {
        /// Staleness bound s >= 0.
        staleness: i64,
    },
    /// Eager SSP: SSP's read rule plus server push of the fresh model on every clock advance.
    Essp {
        /// Staleness bound s >= 0.
        staleness: i64,
    },
    /// BSP with backup workers: of the run's workers, `backups` are spare; each clock
    /// completes with the first `workers - backups` updates and later ones are dropped.
    BspBackup {
        /// Spare workers c (>= 0, below the worker count).
        backups: i64,
    },
    /// Dynamic SSP: lower bound s_L plus up to r_max extra iterations chosen by the server's
    /// synchronization controller.
    Dssp {
        /// Lower bound of the staleness range, s_L >= 0.
        s_l: i64,
        /// Width of the range, r_max >= 0.
        r_max: i64,
    },
}

impl SyncMode {
    /// Largest iteration gap a read may have (`None`: unbounded, ASP). For DSSP: s_L + r_max.
    pub fn bound(&self) -> Option<u64> {
        match *self {
            SyncMode::Bsp => Some(0),
            SyncMode::Asp => None,
            SyncMode::Ssp { staleness } | SyncMode::Essp { staleness } => {
                Some(staleness.max(0) as u64)
            }
            SyncMode::Dssp { s_l, r_max } => Some((s_l.max(0) + r_max.max(0)) as u64),
            // Reads hold every clock before theirs, but each clock with only the first N of
            // N + c updates: no bound over all workers' updates.
            SyncMode::BspBackup { .. } => None,
        }
    }

    /// Stable label for CSVs and figures: `bsp`, `asp`, `ssp3`, `essp3`, `dssp3-12`.
    pub fn label(&self) -> String {
        match *self {
            SyncMode::Bsp => "bsp".into(),
            SyncMode::Asp => "asp".into(),
            SyncMode::Ssp { staleness } => format!("ssp{staleness}"),
            SyncMode::Essp { staleness } => format!("essp{staleness}"),
            SyncMode::Dssp { s_l, r_max } => format!("dssp{s_l}-{r_max}"),
            SyncMode::BspBackup { backups } => format!("bsp-backup{backups}"),
        }
    }

    /// Parses `bsp`, `asp`, `ssp` (s = 3), `sspN`, `essp` (s = 3), `esspN`, `dssp` (3-12) or
    /// `dsspL-R` (s_L = L, r_max = R): the labels [`Self::label`] writes.
    ///
    /// # Errors
    /// [`CoreError::Config`] for anything else.
    pub fn parse(s: &str) -> Result<Self> {
        let l = s.to_ascii_lowercase();
        let err = || {
            CoreError::Config(format!(
                "unknown sync mode '{s}'; expected bsp, asp, sspN, esspN, dsspL-R or bsp-backupC (e.g. ssp3, essp3, dssp3-12, bsp-backup1)"
            ))
        };
        let int = |v: &str| v.parse::<i64>().map_err(|_| err());
        match l.as_str() {
            "bsp" => Ok(SyncMode::Bsp),
            "asp" => Ok(SyncMode::Asp),
            "ssp" => Ok(SyncMode::Ssp { staleness: 3 }),
            "essp" => Ok(SyncMode::Essp { staleness: 3 }),
            "dssp" => Ok(SyncMode::Dssp { s_l: 3, r_max: 12 }),
            _ => {
                if let Some(v) = l.strip_prefix("bsp-backup") {
                    Ok(SyncMode::BspBackup { backups: int(v)? })
                } else if let Some(v) = l.strip_prefix("essp") {
                    Ok(SyncMode::Essp { staleness: int(v)? })
                } else if let Some(v) = l.strip_prefix("ssp") {
                    Ok(SyncMode::Ssp { staleness: int(v)? })
                } else if let Some(v) = l.strip_prefix("dssp") {
                    // dsspL-R; L itself may be negative only as a typo, caught by validate.
                    let (a, b) = v
                        .strip_prefix('-')
                        .map(|rest| {
                            rest.split_once('-')
                                .map(|(x, y)| (format!("-{x}"), y.to_string()))
                        })
                        .unwrap_or_else(|| {
                            v.split_once('-')
                                .map(|(x, y)| (x.to_string(), y.to_string()))
                        })
                        .ok_or_else(err)?;
                    Ok(SyncMode::Dssp {
                        s_l: int(&a)?,
                        r_max: int(&b)?,
                    })
                } else {
                    Err(err())
                }
            }
        }
    }

    /// Checks the mode's parameters.
    ///
    /// # Errors
    /// [`CoreError::Config`] for a negative staleness, s_L or r_max.
    pub fn validate(&self) -> Result<()> {
        match *self {
            SyncMode::Ssp { staleness } | SyncMode::Essp { staleness } if staleness < 0 => {
                Err(CoreError::Config(format!(
                    "{} staleness must be >= 0, got {staleness}",
                    if matches!(self, SyncMode::Ssp { .. }) {
                        "SSP"
                    } else {
                        "ESSP"
                    }
                )))
            }
            SyncMode::BspBackup { backups } if backups < 0 => Err(CoreError::Config(format!(
                "backup workers must be >= 0, got {backups}"
            ))),
            SyncMode::Dssp { s_l, r_max } if s_l < 0 || r_max < 0 => Err(CoreError::Config(
                format!("DSSP needs s_L >= 0 and r_max >= 0, got s_L = {s_l}, r_max = {r_max}"),
            )),
            _ => Ok(()),
        }
    }

    fn policies(&self, workers: usize) -> (ReadPolicy, ReleasePolicy) {
        match *self {
            SyncMode::Bsp => (
                ReadPolicy::Cache { s: 0 },
                ReleasePolicy::Bounded { s: 0, eager: false },
            ),
            SyncMode::Asp => (ReadPolicy::Async, ReleasePolicy::Immediate),
            SyncMode::Ssp { staleness } => {
                let s = staleness.max(0) as u64;
                (
                    ReadPolicy::Cache { s },
                    ReleasePolicy::Bounded { s, eager: false },
                )
            }
            SyncMode::Essp { staleness } => {
                let s = staleness.max(0) as u64;
                (
                    ReadPolicy::Cache { s },
                    ReleasePolicy::Bounded { s, eager: true },
                )
            }
            SyncMode::BspBackup { backups } => (
                ReadPolicy::AskAndJump,
                ReleasePolicy::Backup {
                    needed: workers - backups.max(0) as usize,
                },
            ),
            SyncMode::Dssp { s_l, r_max } => (
                ReadPolicy::AskEveryIteration,
                ReleasePolicy::Dssp(DsspController::new(
                    workers,
                    s_l.max(0) as u64,
                    r_max.max(0) as u64,
                )),
            ),
        }
    }
}

/// Everything needed to build the nodes of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtocolSpec {
    /// The synchronization mode.
    pub mode: SyncMode,
    /// Number of workers.
    pub workers: usize,
    /// Iterations (clocks) each worker runs.
    pub iterations: u64,
}

impl ProtocolSpec {
    /// Builds every node of the run: node 0 is the parameter server, nodes `1..=workers` are the
    /// workers (worker index = node - 1), matching the star topology.
    ///
    /// # Errors
    /// [`CoreError::Config`] for an invalid mode, zero workers or zero iterations.
    pub fn build(&self) -> Result<Vec<Box<dyn Protocol>>> {
        self.mode.validate()?;
        if self.workers == 0 {
            return Err(CoreError::Config("a run needs at least one worker".into()));
        }
        if self.iterations == 0 {
            return Err(CoreError::Config(
                "a run needs at least one iteration".into(),
            ));
        }
        if let SyncMode::BspBackup { backups } = self.mode {
            if backups as usize >= self.workers {
                return Err(CoreError::Config(format!(
                    "{backups} backup workers leave none of the {} workers to wait for",
                    self.workers
                )));
            }
        }
        let (read, release) = self.mode.policies(self.workers);
        let mut nodes: Vec<Box<dyn Protocol>> = Vec::with_capacity(self.workers + 1);
        nodes.push(Box::new(PsServer::new(
            0,
            self.workers,
            self.iterations,
            release,
        )));
        for w in 0..self.workers {
            nodes.push(Box::new(PsWorker::new(w + 1, w, 0, self.iterations, read)));
        }
        Ok(nodes)
    }

    /// Node count including the server.
    pub fn nodes(&self) -> usize {
        self.workers + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_validate() {
        assert_eq!(
            SyncMode::parse("SSP5").unwrap(),
            SyncMode::Ssp { staleness: 5 }
        );
        assert!(SyncMode::parse("foo").is_err());
        let e = SyncMode::parse("ssp-1").unwrap().validate().unwrap_err();
        assert!(e.to_string().contains("-1"));
        let spec = ProtocolSpec {
            mode: SyncMode::Bsp,
            workers: 0,
            iterations: 1,
        };
        assert!(spec.build().is_err());
    }

    #[test]
    fn labels_round_trip() {
        for m in [
            SyncMode::Bsp,
            SyncMode::Asp,
            SyncMode::Ssp { staleness: 3 },
            SyncMode::Essp { staleness: 0 },
            SyncMode::Dssp { s_l: 3, r_max: 12 },
            SyncMode::BspBackup { backups: 2 },
        ] {
            assert_eq!(SyncMode::parse(&m.label()).unwrap(), m);
        }
        let spec = ProtocolSpec {
            mode: SyncMode::BspBackup { backups: 4 },
            workers: 4,
            iterations: 3,
        };
        assert!(spec.build().is_err());
        assert_eq!(SyncMode::Dssp { s_l: 3, r_max: 12 }.bound(), Some(15));
        assert!(SyncMode::parse("dssp3").is_err());
        assert!(SyncMode::parse("dssp-1-2").unwrap().validate().is_err());
        assert!(SyncMode::parse("dssp1--2").unwrap().validate().is_err());
        assert!(SyncMode::parse("essp-1").unwrap().validate().is_err());
    }

    #[test]
    fn toml_form() {
        let m: SyncMode = toml::from_str("mode = \"ssp\"\nstaleness = 2").unwrap();
        assert_eq!(m, SyncMode::Ssp { staleness: 2 });
    }
}

/// An ASYNC run: a coordinator at node 0 and `workers` task workers at nodes `1..=workers`.
#[derive(Debug, Clone)]
pub struct AsyncSpec {
    /// Worker count P.
    pub workers: usize,
    /// Tasks to finish in all (a synchronous run of R rounds: R * P).
    pub tasks: u64,
    /// Which available workers get tasks.
    pub barrier: BarrierPredicate,
    /// How results reach the model.
    pub collect: Collect,
}

impl AsyncSpec {
    /// The run's nodes.
    ///
    /// # Errors
    /// [`CoreError::Config`] for no workers or no tasks.
    pub fn build(&self) -> Result<Vec<Box<dyn Protocol>>> {
        if self.workers == 0 || self.tasks == 0 {
            return Err(CoreError::Config(format!(
                "an ASYNC run needs at least one worker and one task, got {} workers and {} tasks",
                self.workers, self.tasks
            )));
        }
        let mut nodes: Vec<Box<dyn Protocol>> = vec![Box::new(Coordinator::new(
            0,
            1,
            self.workers,
            self.barrier.clone(),
            self.collect,
            self.tasks,
        ))];
        for w in 0..self.workers {
            nodes.push(Box::new(TaskWorker::new(w + 1, w, 0)));
        }
        Ok(nodes)
    }
}
