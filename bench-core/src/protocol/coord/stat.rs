//! The worker STAT table the coordinator keeps and barrier predicates read.

use crate::protocol::Nanos;

/// One worker's most recent status.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct WorkerStatus {
    /// True when the worker executes no task.
    pub available: bool,
    /// Model versions committed since its task's version (0 while available).
    pub staleness: u64,
    /// Mean time from dispatch of a task to arrival of its result, in nanoseconds (0 before
    /// the first result).
    pub avg_task_ns: f64,
    /// Tasks finished.
    pub tasks_done: u64,
    /// Version of the task in flight or last finished.
    pub task_version: u64,
    /// When the task in flight was dispatched.
    pub dispatched_at: Nanos,
}

/// The STAT table: every worker's status and the current model version.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StatTable {
    workers: Vec<WorkerStatus>,
    version: u64,
}

impl StatTable {
    /// A table of `workers` available workers at model version 0.
    pub fn new(workers: usize) -> Self {
        StatTable {
            workers: vec![
                WorkerStatus {
                    available: true,
                    ..WorkerStatus::default()
                };
                workers
            ],
            version: 0,
        }
    }

    /// Worker count P.
    pub fn len(&self) -> usize {
        self.workers.len()
    }

    /// True for a table without workers.
    pub fn is_empty(&self) -> bool {
        self.workers.is_empty()
    }

    /// Status of worker `w` (panics when out of range, like slice indexing).
    pub fn worker(&self, w: usize) -> &WorkerStatus {
        &self.workers[w]
    }

    /// All statuses in worker order.
    pub fn workers(&self) -> &[WorkerStatus] {
        &self.workers
    }

    /// Current model version (commits so far).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Number of available workers.
    pub fn available_workers(&self) -> usize {
        self.workers.iter().filter(|s| s.available).count()
    }

    /// Largest staleness over all workers.
    pub fn max_staleness(&self) -> u64 {
        self.workers.iter().map(|s| s.staleness).max().unwrap_or(0)
    }

    /// Worker `w` starts a task on the current version at `now`.
    pub(super) fn dispatch(&mut self, w: usize, now: Nanos) {
        let v = self.version;
        let s = &mut self.workers[w];
        s.available = false;
        s.staleness = 0;
        s.task_version = v;
        s.dispatched_at = now;
    }

    /// Worker `w`'s result arrives at `now`; returns the result's staleness.
    pub(super) fn finish(&mut self, w: usize, now: Nanos) -> u64 {
        let s = &mut self.workers[w];
        let staleness = s.staleness;
        let took = now.saturating_sub(s.dispatched_at) as f64;
        s.avg_task_ns = (s.avg_task_ns * s.tasks_done as f64 + took) / (s.tasks_done + 1) as f64;
        s.tasks_done += 1;
        s.available = true;
        s.staleness = 0;
        staleness
    }

    /// The model advances one version: every busy worker's work gets one version staler.
    pub(super) fn commit(&mut self) {
        self.version += 1;
        for s in self.workers.iter_mut().filter(|s| !s.available) {
            s.staleness += 1;
        }
    }
}
