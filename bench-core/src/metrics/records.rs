//! Rows of `iterations.csv` and `progress.csv`.

use crate::metrics::seconds;
use crate::protocol::Nanos;

/// One row of `iterations.csv`: one worker's finished iteration. Times in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IterationRow {
    /// 0-based worker index.
    pub worker: usize,
    /// Iteration (clock).
    pub iter: u64,
    /// Start of the iteration (read requested or served from cache).
    pub start: Nanos,
    /// End of its computation.
    pub end: Nanos,
    /// Time blocked waiting for a fresh enough model.
    pub wait: Nanos,
    /// Staleness of the model read (see [`crate::protocol::IterationRecord::staleness`]).
    pub staleness: u64,
    /// Bytes this worker sent during the iteration (payload plus control).
    pub bytes: u64,
}

impl IterationRow {
    /// The row for a protocol's iteration record plus the bytes the driver counted.
    pub fn from_record(r: &crate::protocol::IterationRecord, bytes: u64) -> Self {
        IterationRow {
            worker: r.worker,
            iter: r.iter,
            start: r.start,
            end: r.end,
            wait: r.wait,
            staleness: r.staleness,
            bytes,
        }
    }
}

/// One worker's wait for a task (ASYNC family): from its previous result's submission to the
/// arrival of its next task.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WaitRow {
    /// 0-based worker index.
    pub worker: usize,
    /// Task received.
    pub iter: u64,
    /// Nanoseconds without a task.
    pub wait: Nanos,
}

/// Row tables: how many of one worker's row reads at one clock had one clock differential
/// (the row's clock minus the worker's; BSP reads -1, staler rows lower).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RowReadRow {
    /// 0-based worker index.
    pub worker: usize,
    /// The worker's clock.
    pub clock: u64,
    /// Clock differential.
    pub differential: i64,
    /// Rows read with it.
    pub rows: u64,
}

/// One row of `progress.csv`: the server (or average) model evaluated.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProgressRow {
    /// Time in seconds (virtual in sim, wall-clock in threads).
    pub time: f64,
    /// Updates applied divided by the worker count.
    pub iteration: f64,
    /// Objective on the evaluation set (NaN where it diverged).
    #[serde(with = "crate::metrics::float_text")]
    pub loss: f64,
    /// Accuracy on the evaluation set.
    #[serde(with = "crate::metrics::float_text")]
    pub accuracy: f64,
    /// The training objective `F(w)` the workload minimises, on its training rows, where the
    /// workload defines one ([`crate::learning::Learning::objective`]). Computed at a run's
    /// first and last evaluation only (a pass over the training rows each), empty elsewhere:
    /// what the near-optimum claims read against the reference optimum `F*`, which bounds it
    /// from below (the held-out loss has no such bound).
    #[serde(default, with = "crate::metrics::float_text::option")]
    pub train_objective: Option<f64>,
}

/// A run's training objective at its first and last evaluation, where the driver computed both
/// ([`ProgressRow::train_objective`]; None for a workload without one).
pub fn objective_span(progress: &[ProgressRow]) -> Option<(f64, f64)> {
    Some((
        progress.first()?.train_objective?,
        progress.last()?.train_objective?,
    ))
}

/// Everything a driver measured in one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunRecords {
    /// Finished iterations, in completion order.
    pub iterations: Vec<IterationRow>,
    /// Model evaluations, in time order.
    pub progress: Vec<ProgressRow>,
    /// Bytes sent per node (index = node id).
    pub bytes_sent: Vec<u64>,
    /// Time the last node finished, in ns.
    pub makespan: Nanos,
    /// Events processed (sim) or messages handled (threads).
    pub events: u64,
    /// Updates the server discarded as late (backup workers).
    pub dropped_updates: u64,
    /// Workers' waits for tasks (ASYNC family), in the order recorded.
    pub waits: Vec<WaitRow>,
    /// Row tables: the clock differential of every row read, by worker and clock.
    pub row_reads: Vec<RowReadRow>,
}

impl RunRecords {
    /// Mean over workers of each worker's own iteration rate (its iterations divided by the
    /// end time of its last one), in iterations per second. With a fixed iteration count per
    /// worker, a whole-run rate would only measure the slowest worker; this one shows how
    /// fast workers run when they are not held back.
    pub fn iteration_rate(&self) -> f64 {
        let mut per: std::collections::BTreeMap<usize, (u64, Nanos)> = Default::default();
        for r in &self.iterations {
            let e = per.entry(r.worker).or_default();
            e.0 += 1;
            e.1 = e.1.max(r.end);
        }
        if per.is_empty() {
            return 0.0;
        }
        per.values()
            .map(|&(n, end)| {
                if end == 0 {
                    0.0
                } else {
                    n as f64 / seconds(end)
                }
            })
            .sum::<f64>()
            / per.len() as f64
    }

    /// The run's straggler trace ([`crate::straggler::TraceRow`]): per worker and iteration,
    /// its computation (end - start - wait) and its wait, sorted by worker and iteration.
    pub fn trace(&self) -> Vec<crate::straggler::TraceRow> {
        let mut out: Vec<crate::straggler::TraceRow> = self
            .iterations
            .iter()
            .map(|r| crate::straggler::TraceRow {
                worker: r.worker,
                iter: r.iter,
                compute_ns: r.end.saturating_sub(r.start).saturating_sub(r.wait),
                wait_ns: r.wait,
            })
            .collect();
        out.sort_by_key(|r| (r.worker, r.iter));
        out
    }

    /// First time the evaluated loss reaches `target` or below.
    pub fn time_to_loss(&self, target: f64) -> Option<f64> {
        self.progress
            .iter()
            .find(|p| p.loss <= target)
            .map(|p| p.time)
    }

    /// Mean wait per iteration in ns.
    pub fn mean_wait(&self) -> f64 {
        if self.iterations.is_empty() {
            return 0.0;
        }
        self.iterations.iter().map(|r| r.wait as f64).sum::<f64>() / self.iterations.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_records_computation_without_its_wait() {
        let r = RunRecords {
            iterations: vec![IterationRow {
                worker: 3,
                iter: 7,
                start: 1_000,
                end: 5_000,
                wait: 1_500,
                staleness: 0,
                bytes: 0,
            }],
            ..RunRecords::default()
        };
        assert_eq!(
            r.trace(),
            vec![crate::straggler::TraceRow {
                worker: 3,
                iter: 7,
                compute_ns: 2_500,
                wait_ns: 1_500
            }]
        );
    }

    fn row(worker: usize, iter: u64, end: u64) -> IterationRow {
        IterationRow {
            worker,
            iter,
            start: 0,
            end,
            wait: 0,
            staleness: 0,
            bytes: 0,
        }
    }

    #[test]
    fn iteration_rate_is_the_mean_of_per_worker_rates() {
        let r = RunRecords {
            iterations: vec![
                row(0, 0, 500_000_000),
                row(0, 1, 1_000_000_000),
                row(1, 0, 2_000_000_000),
                row(1, 1, 4_000_000_000),
            ],
            ..RunRecords::default()
        };
        // worker 0: 2 iterations in 1 s; worker 1: 2 in 4 s -> mean of 2 and 0.5.
        assert!((r.iteration_rate() - 1.25).abs() < 1e-12);
    }
}
