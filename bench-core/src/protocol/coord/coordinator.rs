//! The ASYNC coordinator (server role): STAT bookkeeping, barrier-controlled scheduling,
//! FIFO collection of tagged results, and the version side of the history broadcast.

use super::{BarrierPredicate, Collect, StatTable};
use crate::error::{CoreError, Result};
use crate::protocol::{
    Action, Event, Input, IterationRecord, Message, Nanos, NodeId, Protocol, Role,
};
use std::collections::VecDeque;

/// A finished task, as its worker's iteration record.
#[derive(Debug, Clone, Copy)]
struct Finished {
    iter: u64,
    start: Nanos,
    end: Nanos,
    wait: Nanos,
    staleness: u64,
}

/// The coordinator node. Workers are nodes `first_worker..first_worker + P`, worker `w` at
/// node `first_worker + w`.
#[derive(Debug)]
pub struct Coordinator {
    node: NodeId,
    first_worker: NodeId,
    stat: StatTable,
    barrier: BarrierPredicate,
    collect: Collect,
    tasks_total: u64,
    dispatched: u64,
    done: u64,
    /// Results applied since the last commit.
    uncommitted: u64,
    next_iter: Vec<u64>,
    /// Per worker: when its last result arrived (None before its first task), i.e. since when
    /// it has been available, waiting for a task.
    available_since: Vec<Option<Nanos>>,
    /// Per worker, of the task in flight: when the worker began waiting for it (its previous
    /// result, or the dispatch of its first task) and how long it waited.
    task_began: Vec<(Nanos, Nanos)>,
    finished: bool,
    actions: VecDeque<Action>,
}

impl Coordinator {
    /// A coordinator at `node` for `workers` workers at nodes `first_worker..`, running
    /// `tasks_total` tasks in all.
    pub fn new(
        node: NodeId,
        first_worker: NodeId,
        workers: usize,
        barrier: BarrierPredicate,
        collect: Collect,
        tasks_total: u64,
    ) -> Self {
        Coordinator {
            node,
            first_worker,
            stat: StatTable::new(workers),
            barrier,
            collect,
            tasks_total,
            dispatched: 0,
            done: 0,
            uncommitted: 0,
            next_iter: vec![0; workers],
            available_since: vec![None; workers],
            task_began: vec![(0, 0); workers],
            finished: false,
            actions: VecDeque::new(),
        }
    }

    /// The STAT table as it stands.
    pub fn stat(&self) -> &StatTable {
        &self.stat
    }

    fn violation(&self, message: String) -> CoreError {
        CoreError::Protocol {
            node: self.node,
            message,
        }
    }

    fn worker_of(&self, from: NodeId) -> Result<usize> {
        from.checked_sub(self.first_worker)
            .filter(|&w| w < self.stat.len())
            .ok_or_else(|| self.violation(format!("node {from} is not a worker of this run")))
    }

    fn in_flight(&self) -> u64 {
        self.dispatched - self.done
    }

    /// Records a finished task as an iteration of its worker: from when the worker became
    /// available (its previous result) to its result's arrival, the wait for the task inside
    /// it, so that `end - start - wait` is the task's computation and round trip, as for the
    /// other families.
    fn record(&mut self, w: usize, f: Finished) {
        self.actions
            .push_back(Action::Record(Event::Iteration(IterationRecord {
                worker: w,
                iter: f.iter,
                start: f.start,
                end: f.end,
                wait: f.wait,
                staleness: f.staleness,
            })));
    }

    fn commit(&mut self) {
        if self.uncommitted == 0 {
            return;
        }
        self.uncommitted = 0;
        self.stat.commit();
        self.actions.push_back(Action::Commit {
            version: self.stat.version(),
        });
    }

    /// ASYNCbarrier + ASYNCscheduler: filters the available workers through the predicate on
    /// one snapshot of STAT, then dispatches a task to each admitted one.
    fn schedule(&mut self, now: Nanos) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        if self.done == self.tasks_total {
            self.commit();
            for w in 0..self.stat.len() {
                self.actions.push_back(Action::Send {
                    to: self.first_worker + w,
                    msg: Message::Stop,
                });
            }
            self.actions.push_back(Action::Finished);
            self.finished = true;
            return Ok(());
        }
        let admitted: Vec<usize> = (0..self.stat.len())
            .filter(|&w| self.stat.worker(w).available && self.barrier.admits(&self.stat, w))
            .collect();
        if admitted.is_empty() && self.in_flight() == 0 && self.dispatched < self.tasks_total {
            return Err(CoreError::Deadlock {
                time_ns: now,
                message: format!(
                    "barrier predicate '{}' admits none of the {} available workers (max staleness {}, version {}) with {} of {} tasks left: the run can never progress",
                    self.barrier.label(),
                    self.stat.available_workers(),
                    self.stat.max_staleness(),
                    self.stat.version(),
                    self.tasks_total - self.dispatched,
                    self.tasks_total
                ),
            });
        }
        for w in admitted {
            if self.dispatched == self.tasks_total {
                break;
            }
            self.stat.dispatch(w, now);
            self.task_began[w] = match self.available_since[w].take() {
                Some(since) => (since, now.saturating_sub(since)),
                None => (now, 0),
            };
            let iter = self.next_iter[w];
            self.next_iter[w] += 1;
            self.dispatched += 1;
            self.actions.push_back(Action::Send {
                to: self.first_worker + w,
                msg: Message::Task {
                    iter,
                    version: self.stat.version(),
                },
            });
        }
        Ok(())
    }

    fn on_result(&mut self, now: Nanos, from: NodeId, iter: u64, version: u64) -> Result<()> {
        let w = self.worker_of(from)?;
        let s = *self.stat.worker(w);
        if s.available || iter + 1 != self.next_iter[w] || version != s.task_version {
            return Err(self.violation(format!(
                "worker {w} returned task {iter} on version {version}, but its task in flight is {} on version {} (available: {})",
                self.next_iter[w].wrapping_sub(1),
                s.task_version,
                s.available
            )));
        }
        let staleness = self.stat.finish(w, now);
        self.done += 1;
        let (start, wait) = self.task_began[w];
        self.record(
            w,
            Finished {
                iter,
                start,
                end: now,
                wait,
                staleness,
            },
        );
        self.available_since[w] = Some(now);
        self.actions.push_back(Action::Apply {
            from,
            clock: version,
        });
        self.uncommitted += 1;
        if self.collect == Collect::Each || self.in_flight() == 0 {
            self.commit();
        }
        self.schedule(now)
    }

    fn on_version_request(&mut self, from: NodeId, version: u64) -> Result<()> {
        let w = self.worker_of(from)?;
        let s = self.stat.worker(w);
        if s.available || s.task_version != version {
            return Err(self.violation(format!(
                "worker {w} asked for version {version}, which is not the version of a task it holds"
            )));
        }
        self.actions.push_back(Action::Send {
            to: from,
            msg: Message::VersionData { version },
        });
        Ok(())
    }
}

impl Protocol for Coordinator {
    fn node(&self) -> NodeId {
        self.node
    }

    fn role(&self) -> Role {
        Role::Server
    }

    fn handle(&mut self, now: Nanos, input: Input) -> Result<()> {
        match input {
            Input::Start => self.schedule(now),
            Input::ComputeDone { iter } => Err(self.violation(format!(
                "the coordinator computes nothing, got ComputeDone({iter})"
            ))),
            Input::Received { from, msg } => match msg {
                Message::TaskResult { iter, version } => self.on_result(now, from, iter, version),
                Message::VersionRequest { version } => self.on_version_request(from, version),
                other => Err(self.violation(format!(
                    "node {from} sent {other:?}, which the coordinator never receives"
                ))),
            },
        }
    }

    fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn is_finished(&self) -> bool {
        self.finished
    }

    fn waiting_on(&self) -> String {
        format!(
            "coordinator ({}): {} of {} tasks done, {} in flight, {} workers available, max staleness {}",
            self.barrier.label(),
            self.done,
            self.tasks_total,
            self.in_flight(),
            self.stat.available_workers(),
            self.stat.max_staleness()
        )
    }
}
