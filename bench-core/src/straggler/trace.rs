//! Straggler traces: per worker and iteration, how long its computation took and how long it
//! waited, recorded from a real run (threads or cluster driver) and replayed as compute-time
//! factors in another (the simulator, or the threads driver as injected delays).
//!
//! # Format (`trace.csv`)
//!
//! ```text
//! worker,iter,compute_ns,wait_ns
//! 0,0,3212001,0
//! 0,1,3198230,41200
//! ```
//!
//! One row per (worker, iteration), any order; `worker` is 0-based, `iter` orders a worker's
//! computations, `compute_ns` is the computation's duration in nanoseconds, `wait_ns` the time
//! the worker was blocked during the iteration (for reading; replay ignores it, waiting is what
//! the replaying run decides itself, and the column may be left out). A run's trace
//! ([`crate::metrics::RunRecords::trace`]) takes `end - start - wait` of each iteration as its
//! computation: under ASYNC's coordinator that includes the round trip of the task and its
//! result (microseconds on one machine, more on a cluster), which a replay charges again. A trace from another system converts directly: e.g. one
//! row per (rank, step) of a PyTorch job with the step's forward-backward-optimizer time as
//! `compute_ns`.
//!
//! # Replay
//!
//! Worker `w`'s `k`-th computation is slowed by the factor `compute_ns(w, k) / unit_ns`
//! (cycling through the worker's rows when the run is longer than the trace), multiplied with
//! the pattern's other factors. `unit_ns` is the computation time the replaying run models
//! (`ns_per_example x batch`) to reproduce the recorded times in the simulator with modelled
//! compute (`compute.measured = false`, no time profile), or by default the trace's median
//! computation, which keeps only the relative slowdowns (a trace from other hardware). Under
//! the threads driver a computation takes at least the modelled time times its factor (real
//! work that takes longer, and thread wake-ups, come on top).

use crate::error::{CoreError, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One row of `trace.csv` (`wait_ns` may be left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TraceRow {
    /// 0-based worker.
    pub worker: usize,
    /// The worker's iteration (orders its computations).
    pub iter: u64,
    /// Duration of the computation, ns.
    pub compute_ns: u64,
    /// Time the worker was blocked during the iteration, ns (0 when not known).
    #[serde(default)]
    pub wait_ns: u64,
}

/// A trace loaded for replay: each worker's computation times in iteration order.
#[derive(Debug, Clone, PartialEq)]
pub struct StragglerTrace {
    per_worker: Vec<Vec<u64>>,
    median_ns: f64,
    source: String,
}

impl StragglerTrace {
    /// The trace of `rows` (`source` names it in errors).
    ///
    /// # Errors
    /// [`CoreError::Config`] for an empty trace, a worker without rows below the largest
    /// worker index, a repeated (worker, iteration) or a zero computation time.
    pub fn from_rows(mut rows: Vec<TraceRow>, source: &str) -> Result<Self> {
        let bad = |m: String| CoreError::Config(format!("straggler trace {source}: {m}"));
        if rows.is_empty() {
            return Err(bad("no rows".into()));
        }
        rows.sort_by_key(|r| (r.worker, r.iter));
        let workers = rows.iter().map(|r| r.worker).max().unwrap_or(0) + 1;
        let mut per_worker = vec![Vec::new(); workers];
        for pair in rows.windows(2) {
            if (pair[0].worker, pair[0].iter) == (pair[1].worker, pair[1].iter) {
                return Err(bad(format!(
                    "worker {} iteration {} appears twice",
                    pair[0].worker, pair[0].iter
                )));
            }
        }
        for r in &rows {
            if r.compute_ns == 0 {
                return Err(bad(format!(
                    "worker {} iteration {}: compute_ns must be > 0",
                    r.worker, r.iter
                )));
            }
            per_worker[r.worker].push(r.compute_ns);
        }
        if let Some(w) = per_worker.iter().position(Vec::is_empty) {
            return Err(bad(format!(
                "worker {w} has no rows (the trace has workers up to {})",
                workers - 1
            )));
        }
        let mut all: Vec<u64> = rows.iter().map(|r| r.compute_ns).collect();
        all.sort_unstable();
        let n = all.len();
        let median_ns = if n % 2 == 1 {
            all[n / 2] as f64
        } else {
            (all[n / 2 - 1] + all[n / 2]) as f64 / 2.0
        };
        Ok(StragglerTrace {
            per_worker,
            median_ns,
            source: source.to_string(),
        })
    }

    /// Reads `trace.csv` at `path`.
    ///
    /// # Errors
    /// [`CoreError::Io`] when it cannot be opened, [`CoreError::DataFile`] naming the line of a
    /// malformed row, and the checks of [`Self::from_rows`].
    pub fn read(path: &Path) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|source| CoreError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut reader = csv::Reader::from_reader(file);
        let mut rows = Vec::new();
        for (i, rec) in reader.deserialize::<TraceRow>().enumerate() {
            let row = rec.map_err(|e| CoreError::DataFile {
                path: path.to_path_buf(),
                line: e.position().map_or(i + 2, |p| p.line() as usize),
                column: 0,
                message: format!(
                    "expected worker,iter,compute_ns,wait_ns (non-negative integers): {e}"
                ),
            })?;
            rows.push(row);
        }
        Self::from_rows(rows, &path.display().to_string())
    }

    /// Workers the trace covers.
    pub fn workers(&self) -> usize {
        self.per_worker.len()
    }

    /// The median computation time, ns.
    pub fn median_ns(&self) -> f64 {
        self.median_ns
    }

    /// Worker `worker`'s factors against `unit_ns` (None: the median), in iteration order.
    ///
    /// # Errors
    /// [`CoreError::Config`] for a worker the trace does not cover.
    pub fn factors(&self, worker: usize, unit_ns: Option<f64>) -> Result<Vec<f64>> {
        let unit = unit_ns.unwrap_or(self.median_ns);
        let times = self.per_worker.get(worker).ok_or_else(|| {
            CoreError::Config(format!(
                "straggler trace {} has workers 0..{}, the run has worker {worker}",
                self.source,
                self.workers() - 1
            ))
        })?;
        Ok(times.iter().map(|&t| t as f64 / unit).collect())
    }
}

/// `[stragglers] trace = { path = "trace.csv", unit_ns = 3200000 }`: a recorded trace replayed
/// as compute-time factors (see the module documentation).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceReplay {
    /// The `trace.csv` file.
    pub path: PathBuf,
    /// The computation time a factor of 1 stands for (default: the trace's median).
    #[serde(default)]
    pub unit_ns: Option<f64>,
    /// The trace itself when it was recorded in this process (then `path` only names it).
    #[serde(skip)]
    pub loaded: Option<Arc<StragglerTrace>>,
}

impl TraceReplay {
    /// Replays `trace` (recorded in this process, named `name`) against `unit_ns`.
    pub fn of(trace: StragglerTrace, name: &str, unit_ns: Option<f64>) -> Self {
        TraceReplay {
            path: PathBuf::from(name),
            unit_ns,
            loaded: Some(Arc::new(trace)),
        }
    }

    /// The trace: the one held, or the file read.
    ///
    /// # Errors
    /// As [`StragglerTrace::read`], and a unit that is not a positive number.
    pub fn trace(&self) -> Result<Arc<StragglerTrace>> {
        if let Some(u) = self.unit_ns {
            if !(u > 0.0 && u.is_finite()) {
                return Err(CoreError::out_of_range("trace.unit_ns", "> 0", u));
            }
        }
        match &self.loaded {
            Some(t) => Ok(t.clone()),
            None => Ok(Arc::new(StragglerTrace::read(&self.path)?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(worker: usize, iter: u64, compute_ns: u64) -> TraceRow {
        TraceRow {
            worker,
            iter,
            compute_ns,
            wait_ns: 0,
        }
    }

    #[test]
    fn factors_are_times_over_the_unit_in_iteration_order() {
        let t = StragglerTrace::from_rows(
            vec![
                row(1, 1, 400),
                row(0, 0, 100),
                row(1, 0, 200),
                row(0, 1, 300),
            ],
            "t",
        )
        .unwrap();
        assert_eq!(t.workers(), 2);
        assert_eq!(t.median_ns(), 250.0);
        assert_eq!(t.factors(1, Some(100.0)).unwrap(), vec![2.0, 4.0]);
        assert_eq!(t.factors(0, None).unwrap(), vec![0.4, 1.2]);
        let e = t.factors(2, None).unwrap_err().to_string();
        assert!(e.contains("workers 0..1") && e.contains("worker 2"), "{e}");
    }

    #[test]
    fn bad_traces_say_what_is_wrong() {
        for (rows, says) in [
            (vec![], "no rows"),
            (vec![row(0, 0, 1), row(0, 0, 2)], "appears twice"),
            (vec![row(0, 0, 0)], "compute_ns must be > 0"),
            (vec![row(1, 0, 5)], "worker 0 has no rows"),
        ] {
            let e = StragglerTrace::from_rows(rows, "x.csv")
                .unwrap_err()
                .to_string();
            assert!(e.contains(says) && e.contains("x.csv"), "{e}");
        }
    }

    #[test]
    fn files_round_trip_and_malformed_lines_are_named() {
        let dir = std::env::temp_dir().join(format!("trace-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("trace.csv");
        std::fs::write(&p, "worker,iter,compute_ns,wait_ns\n0,0,10,0\n0,1,30,5\n").unwrap();
        let t = StragglerTrace::read(&p).unwrap();
        assert_eq!(t.factors(0, Some(10.0)).unwrap(), vec![1.0, 3.0]);
        std::fs::write(&p, "worker,iter,compute_ns,wait_ns\n0,0,10,0\n0,x,30,5\n").unwrap();
        let e = StragglerTrace::read(&p).unwrap_err().to_string();
        assert!(e.contains("trace.csv:3"), "{e}");
        let missing = TraceReplay {
            path: dir.join("none.csv"),
            unit_ns: None,
            loaded: None,
        };
        assert!(missing
            .trace()
            .unwrap_err()
            .to_string()
            .contains("none.csv"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
