//! ASYNC family (ASYNC §4): a coordinator that assigns tasks to workers under a barrier
//! predicate over the worker STAT table, and passive workers that compute the tasks they get.
//!
//! * [`StatTable`]: per worker its staleness, average task-completion time and availability;
//!   the number of available workers and the maximum staleness (ASYNCcoordinator, §4.1-4.2).
//! * [`BarrierPredicate`]: ASYNCbarrier's filter: ASP (always), BSP (all P available), SSP
//!   (max staleness < s), at least k available, or any user-supplied function (§5.3, Listing 2).
//! * [`Collect`]: how results reach the model: each one as it arrives (ASYNCcollect, ASGD and
//!   ASAGA) or one step per round once every task of the round is back (Spark's reduce, SGD
//!   and SAGA).
//! * History broadcast (ASYNCbroadcast, §4.3): a task names the model version by ID only. A
//!   worker computes at once on a version it holds; otherwise it asks the coordinator for the
//!   value (as Spark executors fetch a broadcast variable on first use) and the bytes are
//!   counted. Historical versions that SAGA needs stay with the worker that used them, so they
//!   never travel again.
//!
//! Staleness of a worker: while it computes, the model versions committed since the version of
//! its task; 0 while it is available (it holds no work in flight). A result's staleness is the
//! same count at its arrival, and is the tag the coordinator attaches (with the worker index and
//! task number) before the result is applied, in arrival (FIFO) order.

mod barrier;
mod coordinator;
mod stat;
mod worker;

pub use barrier::{BarrierPredicate, Collect};
pub use coordinator::Coordinator;
pub use stat::{StatTable, WorkerStatus};
pub use worker::TaskWorker;

#[cfg(test)]
mod tests;
