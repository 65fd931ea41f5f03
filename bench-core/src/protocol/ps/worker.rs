//! The parameter-server worker node.

use super::policy::ReadPolicy;
use crate::error::{CoreError, Result};
use crate::protocol::{
    Action, Event, Input, IterationRecord, Message, Nanos, NodeId, Protocol, Role,
};
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    /// Asked the server for a fresh model at `since`.
    Waiting {
        since: Nanos,
    },
    /// Computing; `wait` was spent blocked before.
    Computing {
        wait: Nanos,
        staleness: u64,
    },
    Done,
}

/// Worker state: its clock, the freshness of its cached model, and where it is in an iteration.
#[derive(Debug)]
pub struct PsWorker {
    node: NodeId,
    worker: usize,
    server: NodeId,
    clock: u64,
    iterations: u64,
    policy: ReadPolicy,
    /// `complete` of the cached model (initial model: 0, it holds no update).
    cached_complete: u64,
    start: Nanos,
    /// ASP only: a refresh request is in flight.
    refresh_pending: bool,
    /// Backup workers only: clocks skipped because the others finished them first.
    skipped: u64,
    phase: Phase,
    actions: VecDeque<Action>,
}

impl PsWorker {
    /// Worker `worker` (node `node`) of a server at node `server`.
    pub fn new(
        node: NodeId,
        worker: usize,
        server: NodeId,
        iterations: u64,
        policy: ReadPolicy,
    ) -> Self {
        PsWorker {
            node,
            worker,
            server,
            clock: 0,
            iterations,
            policy,
            cached_complete: 0,
            start: 0,
            refresh_pending: false,
            skipped: 0,
            phase: Phase::Idle,
            actions: VecDeque::new(),
        }
    }

    fn violation(&self, message: String) -> CoreError {
        CoreError::Protocol {
            node: self.node,
            message,
        }
    }

    /// May the cache serve the current clock without asking?
    fn cache_fresh(&self) -> bool {
        match self.policy {
            ReadPolicy::Async => true,
            ReadPolicy::Cache { s } => self.cached_complete + s >= self.clock,
            ReadPolicy::AskEveryIteration | ReadPolicy::AskAndJump => false,
        }
    }

    fn begin_iteration(&mut self, now: Nanos) {
        if self.clock == self.iterations {
            self.phase = Phase::Done;
            self.actions.push_back(Action::Finished);
            return;
        }
        self.start = now;
        if self.policy == ReadPolicy::Async {
            // ASP: never block; keep one refresh in flight and compute on the cache.
            if !self.refresh_pending {
                self.refresh_pending = true;
                self.actions.push_back(Action::Send {
                    to: self.server,
                    msg: Message::ReadRequest { clock: self.clock },
                });
            }
            self.start_compute(0);
        } else if self.cache_fresh() {
            self.start_compute(0);
        } else {
            self.phase = Phase::Waiting { since: now };
            self.actions.push_back(Action::Send {
                to: self.server,
                msg: Message::ReadRequest { clock: self.clock },
            });
        }
    }

    fn start_compute(&mut self, wait: Nanos) {
        let staleness = self.clock.saturating_sub(self.cached_complete);
        self.phase = Phase::Computing { wait, staleness };
        self.actions.push_back(Action::Record(Event::Read {
            worker: self.worker,
            iter: self.clock,
            complete: self.cached_complete,
        }));
        self.actions.push_back(Action::Compute { iter: self.clock });
    }
}

impl Protocol for PsWorker {
    fn node(&self) -> NodeId {
        self.node
    }

    fn role(&self) -> Role {
        Role::Worker(self.worker)
    }

    fn handle(&mut self, now: Nanos, input: Input) -> Result<()> {
        match input {
            Input::Start => {
                if self.phase != Phase::Idle || self.clock != 0 {
                    return Err(self.violation("started twice".into()));
                }
                self.begin_iteration(now);
                Ok(())
            }
            Input::ComputeDone { iter } => {
                let Phase::Computing { wait, staleness } = self.phase else {
                    return Err(self.violation(format!("ComputeDone({iter}) while not computing")));
                };
                if iter != self.clock {
                    return Err(self.violation(format!(
                        "ComputeDone({iter}) but computing clock {}",
                        self.clock
                    )));
                }
                self.actions.push_back(Action::Send {
                    to: self.server,
                    msg: Message::Update { clock: iter },
                });
                self.actions
                    .push_back(Action::Record(Event::Iteration(IterationRecord {
                        worker: self.worker,
                        iter,
                        start: self.start,
                        end: now,
                        wait,
                        staleness,
                    })));
                self.clock += 1;
                self.begin_iteration(now);
                Ok(())
            }
            Input::Received { from, msg } => {
                let Message::Model { complete } = msg else {
                    return Err(self.violation(format!("unexpected {msg:?} from node {from}")));
                };
                if from != self.server {
                    return Err(self.violation(format!("model from node {from}, not the server")));
                }
                if complete < self.cached_complete {
                    return Err(self.violation(format!(
                        "model with complete={complete} older than the cached {}",
                        self.cached_complete
                    )));
                }
                self.cached_complete = complete;
                self.refresh_pending = false;
                self.actions.push_back(Action::Install { from });
                if let Phase::Waiting { since } = self.phase {
                    // Under ESSP an eager push may arrive that is still too old for this
                    // clock: install it and keep waiting for the answer to the request.
                    let ok = match self.policy {
                        ReadPolicy::Cache { .. } => self.cache_fresh(),
                        ReadPolicy::Async | ReadPolicy::AskEveryIteration => true,
                        ReadPolicy::AskAndJump => {
                            // The others finished clocks this worker was still on: skip them.
                            if complete > self.clock {
                                self.skipped += complete - self.clock;
                                self.clock = complete;
                            }
                            if self.clock >= self.iterations {
                                self.phase = Phase::Done;
                                self.actions.push_back(Action::Finished);
                                return Ok(());
                            }
                            true
                        }
                    };
                    if ok {
                        self.start_compute(now - since);
                    }
                }
                Ok(())
            }
        }
    }

    fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn is_finished(&self) -> bool {
        self.phase == Phase::Done
    }

    fn waiting_on(&self) -> String {
        format!(
            "worker {} at clock {} ({:?}), cached model complete={}, {} clocks skipped",
            self.worker, self.clock, self.phase, self.cached_complete, self.skipped
        )
    }
}
