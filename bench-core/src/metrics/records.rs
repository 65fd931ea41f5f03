//! Rows of `iterations.csv` and `progress.csv`.

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

/// One row of `progress.csv`: the server (or average) model evaluated.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProgressRow {
    /// Time in seconds (virtual in sim, wall-clock in threads).
    pub time: f64,
    /// Updates applied divided by the worker count.
    pub iteration: f64,
    /// Objective on the evaluation set.
    pub loss: f64,
    /// Accuracy on the evaluation set.
    pub accuracy: f64,
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
}

impl RunRecords {
    /// Iterations per second over the whole run, summed over workers.
    pub fn iteration_rate(&self) -> f64 {
        if self.makespan == 0 {
            return 0.0;
        }
        self.iterations.len() as f64 / (self.makespan as f64 * 1e-9)
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
