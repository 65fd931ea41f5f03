//! One cell row of the mode matrix: a synchronization mode of any family, named in one word
//! (`ps/ssp3`, `async/min-available12`, `peer/ring-based/backup1+tokens10`), and its run on a
//! workload under a driver.
//!
//! The three families train the same [`Workload`] with the same mini-batches and step
//! schedule (a worker's `k`-th update reads its `k`-th mini-batch) and the same total of
//! `workers x iterations` updates (the coordinator hands its tasks to whichever workers its
//! barrier admits, so under ASP a fast worker does more than `iterations` of them; backup
//! workers' late updates are dropped and skipping peers jump iterations). What makes the
//! families comparable is the aggregation: with
//! [`Aggregation::Mean`] a parameter-server clock and a coordinator round move the model by
//! the mean of the workers' updates, and a decentralized iteration moves the peers' average by
//! the same mean (each peer applies its own update and averages with its in-neighbours).

use crate::harness::runner::{run_nodes, run_ps, RunSettings};
use crate::runs::peers::{eval_node, graph};
use anyhow::{bail, Context, Result};
use bench_core::driver::DriverKind;
use bench_core::metrics::RunRecords;
use bench_core::protocol::coord::{BarrierPredicate, Collect};
use bench_core::protocol::peer::PeerSettings;
use bench_core::protocol::{AsyncSpec, ProtocolSpec, SyncMode};
use bench_core::topology::Topology;
use bench_core::workload::{Aggregation, PeerLearning, TaskLearning, Workload};
use std::sync::Arc;

/// What every mode of a matrix runs alike: workers, iterations per worker, and how the server
/// families combine updates.
#[derive(Debug, Clone, Copy)]
pub struct RunShape {
    /// Workers (peers).
    pub workers: usize,
    /// Iterations per worker.
    pub iterations: u64,
    /// Parameter-server and coordinator aggregation.
    pub aggregation: Aggregation,
}

/// A synchronization mode of one of the three families.
#[derive(Clone)]
pub enum MatrixMode {
    /// Parameter server (BSP, ASP, SSP, ESSP, DSSP, BSP with backup workers).
    Ps(SyncMode),
    /// ASYNC's coordinator with a barrier predicate (BSP collects a round per step, every
    /// other predicate one result per step).
    Coord(BarrierPredicate),
    /// Decentralized peers on a graph (Hop's settings, ASAP's NOTIFY-ACK; `standard` on the
    /// root expander is ASAP's stochastic reduce, on `complete` all-reduce).
    Peer {
        /// Graph name, as `syncbench graph` knows it.
        graph: String,
        /// The setting.
        settings: PeerSettings,
    },
}

impl MatrixMode {
    /// Parses `family/mode` (`ps/<sync mode>`, `async/<barrier>`, `peer/<graph>/<setting>`)
    /// for a run of `iterations` iterations per worker.
    ///
    /// # Errors
    /// An unknown family, or a mode its family does not know, naming the label.
    pub fn parse(label: &str, iterations: u64) -> Result<Self> {
        let (family, rest) = label.split_once('/').unwrap_or((label, ""));
        let mode = match family {
            "ps" => MatrixMode::Ps(SyncMode::parse(rest)?),
            "async" => MatrixMode::Coord(BarrierPredicate::parse(rest)?),
            "peer" => {
                let Some((graph, setting)) = rest.split_once('/') else {
                    bail!("peer modes are peer/<graph>/<setting>, e.g. peer/ring-based/standard");
                };
                MatrixMode::Peer {
                    graph: graph.to_string(),
                    settings: PeerSettings::parse(setting, iterations)?,
                }
            }
            _ => bail!("unknown family '{family}'; expected ps/<mode>, async/<barrier> or peer/<graph>/<setting>"),
        };
        Ok(mode)
    }

    /// `ps/ssp3`, `async/asp`, `peer/ring-based/backup1+tokens10`.
    pub fn label(&self) -> String {
        match self {
            MatrixMode::Ps(m) => format!("ps/{}", m.label()),
            MatrixMode::Coord(b) => format!("async/{}", b.label()),
            MatrixMode::Peer { graph, settings } => format!("peer/{graph}/{}", settings.label()),
        }
    }

    /// `ps`, `async` or `peer`.
    pub fn family(&self) -> &'static str {
        match self {
            MatrixMode::Ps(_) => "ps",
            MatrixMode::Coord(_) => "async",
            MatrixMode::Peer { .. } => "peer",
        }
    }

    /// Nodes of a run with `workers` workers (a server or coordinator besides them).
    pub fn nodes(&self, workers: usize) -> usize {
        match self {
            MatrixMode::Peer { .. } => workers,
            _ => workers + 1,
        }
    }

    /// The graph of a peer mode with `workers` peers (None for the other families).
    ///
    /// # Errors
    /// An unknown graph or an impossible size.
    pub fn topology(&self, workers: usize, seed: u64) -> Result<Option<Topology>> {
        match self {
            MatrixMode::Peer { graph: g, .. } => Ok(Some(graph(g, workers, seed)?)),
            _ => Ok(None),
        }
    }

    /// Checks the mode for `workers` workers and `iterations` iterations: what a run would
    /// refuse, before any run starts.
    ///
    /// # Errors
    /// Naming the mode and what is wrong.
    pub fn validate(&self, workers: usize, iterations: u64) -> Result<()> {
        let what = || format!("mode {}", self.label());
        match self {
            MatrixMode::Ps(m) => {
                m.validate().with_context(what)?;
                ProtocolSpec {
                    mode: *m,
                    workers,
                    iterations,
                }
                .build()
                .with_context(what)?;
            }
            MatrixMode::Coord(b) => match b {
                BarrierPredicate::MinAvailable { k } if *k == 0 || *k > workers => {
                    bail!("{}: k must be in 1..={workers}", what());
                }
                // SSP(0) admits no worker once any task is in flight: the first schedule
                // deadlocks
                BarrierPredicate::Ssp { s: 0 } => {
                    bail!("{}: the coordinator's SSP needs s >= 1 (s = 0 admits nobody once a task is out; use async/bsp)", what());
                }
                _ => {}
            },
            MatrixMode::Peer { settings, .. } => {
                let t = self.topology(workers, 0).with_context(what)?;
                settings
                    .build(&t.expect("peer modes have a graph"))
                    .with_context(what)?;
            }
        }
        Ok(())
    }

    /// Runs the mode on `workload` (per-worker updates) in `shape` under `driver`.
    ///
    /// # Errors
    /// Any configuration, protocol, transport or deadlock error of the run.
    pub fn run(
        &self,
        driver: DriverKind,
        shape: &RunShape,
        settings: &RunSettings,
        workload: &Arc<dyn Workload>,
        seed: u64,
    ) -> Result<RunRecords> {
        let RunShape {
            workers,
            iterations,
            aggregation,
        } = *shape;
        let r = match self {
            MatrixMode::Ps(mode) => run_ps(
                driver,
                ProtocolSpec {
                    mode: *mode,
                    workers,
                    iterations,
                },
                settings,
                &aggregation.wrap(workload.clone()),
                seed,
            ),
            MatrixMode::Coord(barrier) => {
                let spec = AsyncSpec {
                    workers,
                    tasks: iterations * workers as u64,
                    collect: if matches!(barrier, BarrierPredicate::Bsp) {
                        Collect::Round
                    } else {
                        Collect::Each
                    },
                    barrier: barrier.clone(),
                };
                let learning = Arc::new(TaskLearning::new(workload.clone(), aggregation, false));
                run_nodes(driver, spec.build()?, settings, &learning, seed)
            }
            MatrixMode::Peer { settings: s, .. } => {
                let topology = self
                    .topology(workers, seed)?
                    .expect("peer modes have a graph");
                let learning = Arc::new(
                    PeerLearning::new(workload.clone())
                        .evaluating(eval_node(&topology))
                        .serial(s.serial),
                );
                let s = PeerSettings { iterations, ..*s };
                run_nodes(driver, s.build(&topology)?, settings, &learning, seed)
            }
        };
        r.with_context(|| format!("{} under {}", self.label(), driver.label()))
    }
}

/// Mean wait per iteration in microseconds: the coordinator's workers wait for tasks, the
/// other families' for models or updates.
pub fn mean_wait_us(r: &RunRecords) -> f64 {
    if !r.waits.is_empty() {
        return r.waits.iter().map(|w| w.wait as f64).sum::<f64>() / r.waits.len() as f64 * 1e-3;
    }
    r.mean_wait() * 1e-3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip_and_bad_ones_are_named() {
        for l in [
            "ps/bsp",
            "ps/essp3",
            "ps/dssp3-12",
            "ps/bsp-backup1",
            "async/asp",
            "async/ssp3",
            "async/min-available12",
            "peer/ring-based/backup1+skip10+tokens10",
            "peer/root-expander/notify-ack",
        ] {
            assert_eq!(MatrixMode::parse(l, 10).unwrap().label(), l);
        }
        for (l, says) in [
            ("mpi/bsp", "unknown family 'mpi'"),
            ("ps/fast", "fast"),
            ("async/sometimes", "sometimes"),
            ("peer/standard", "peer/<graph>/<setting>"),
        ] {
            let e = format!("{:#}", MatrixMode::parse(l, 10).err().unwrap());
            assert!(e.contains(says), "{l}: {e}");
        }
        let m = MatrixMode::parse("peer/no-such-graph/standard", 10).unwrap();
        assert!(m.validate(16, 10).is_err());
        let m = MatrixMode::parse("async/min-available17", 10).unwrap();
        assert!(m.validate(16, 10).is_err());
        let m = MatrixMode::parse("async/ssp0", 10).unwrap();
        assert!(format!("{:#}", m.validate(16, 10).unwrap_err()).contains("s >= 1"));
        let m = MatrixMode::parse("ps/bsp-backup16", 10).unwrap();
        assert!(m.validate(16, 10).is_err());
        assert!(MatrixMode::parse("peer/chain/backup1+tokens2", 10)
            .unwrap()
            .validate(16, 10)
            .is_err());
    }
}
