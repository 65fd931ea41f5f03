//! What protocol nodes record for the metrics.

use super::Nanos;

/// One finished iteration of one worker: the row of `iterations.csv` without bytes, which the
/// driver adds because only it sees the payloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct IterationRecord {
    /// 0-based worker index.
    pub worker: usize,
    /// Iteration (clock) number.
    pub iter: u64,
    /// When the worker began the iteration (asked for its read).
    pub start: Nanos,
    /// When its computation finished.
    pub end: Nanos,
    /// Time blocked waiting for a fresh enough model (peers: also for their in-neighbours'
    /// updates; ASYNC's coordinator: for the task, from the worker's previous result to the
    /// dispatch, with `end` the result's arrival at the coordinator).
    pub wait: Nanos,
    /// Clocks of other workers' updates possibly missing from the model read:
    /// `iter - complete` where the model holds every update of clocks `< complete`.
    /// BSP reads 0; SSP(s) reads at most `s`. ESSP's clock differential is `-1 - staleness`.
    pub staleness: u64,
}

/// Events a node records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A worker read a model and started computing.
    Read {
        /// 0-based worker index.
        worker: usize,
        /// Iteration starting.
        iter: u64,
        /// `complete` of the model read.
        complete: u64,
    },
    /// A worker finished an iteration.
    Iteration(IterationRecord),
    /// Row tables: the clock differentials of one worker's row reads at one clock (the row's
    /// clock, `stamp - 1`, minus the worker's clock), as `(differential, rows)` pairs.
    RowReads {
        /// 0-based worker index.
        worker: usize,
        /// The worker's clock.
        clock: u64,
        /// `(clock differential, rows read with it)`, ascending by differential.
        differentials: Vec<(i64, u64)>,
    },
    /// An ASYNC worker received task `iter` `wait` ns after it submitted its previous result
    /// (after the start of the run for its first task): the wait time of ASYNC §6.3, Fig 4.
    TaskWait {
        /// 0-based worker index.
        worker: usize,
        /// The task received.
        iter: u64,
        /// Nanoseconds without a task.
        wait: Nanos,
    },
}
