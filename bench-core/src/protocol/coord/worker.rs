//! The ASYNC worker: passive, it computes the tasks the coordinator dispatches.

use crate::error::{CoreError, Result};
use crate::protocol::{Action, Event, Input, Message, Nanos, NodeId, Protocol, Role};
use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    /// Waiting for the value of `version` before computing `iter`.
    Fetching {
        iter: u64,
        version: u64,
    },
    Computing {
        iter: u64,
        version: u64,
    },
    Done,
}

/// Worker `worker` at node `node`, fed by a coordinator at node `server`.
#[derive(Debug)]
pub struct TaskWorker {
    node: NodeId,
    worker: usize,
    server: NodeId,
    /// Broadcast version whose value this worker holds as its current model.
    held: Option<u64>,
    /// When the previous result was submitted (the run's start before the first).
    submitted_at: Nanos,
    phase: Phase,
    actions: VecDeque<Action>,
}

impl TaskWorker {
    /// A worker holding no model version yet.
    pub fn new(node: NodeId, worker: usize, server: NodeId) -> Self {
        TaskWorker {
            node,
            worker,
            server,
            held: None,
            submitted_at: 0,
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

    fn start(&mut self, iter: u64, version: u64) {
        self.phase = Phase::Computing { iter, version };
        self.actions.push_back(Action::Compute { iter });
    }
}

impl Protocol for TaskWorker {
    fn node(&self) -> NodeId {
        self.node
    }

    fn role(&self) -> Role {
        Role::Worker(self.worker)
    }

    fn handle(&mut self, now: Nanos, input: Input) -> Result<()> {
        match (self.phase, input) {
            (_, Input::Start) => {
                self.submitted_at = now;
                Ok(())
            }
            (Phase::Idle, Input::Received { from, msg }) if from == self.server => match msg {
                Message::Task { iter, version } => {
                    self.actions.push_back(Action::Record(Event::TaskWait {
                        worker: self.worker,
                        iter,
                        wait: now.saturating_sub(self.submitted_at),
                    }));
                    if self.held == Some(version) {
                        self.start(iter, version);
                    } else {
                        self.phase = Phase::Fetching { iter, version };
                        self.actions.push_back(Action::Send {
                            to: self.server,
                            msg: Message::VersionRequest { version },
                        });
                    }
                    Ok(())
                }
                Message::Stop => {
                    self.phase = Phase::Done;
                    self.actions.push_back(Action::Finished);
                    Ok(())
                }
                other => Err(self.violation(format!("unexpected {other:?} while idle"))),
            },
            (Phase::Fetching { iter, version }, Input::Received { from, msg })
                if from == self.server && msg == Message::VersionData { version } =>
            {
                self.actions.push_back(Action::Install { from });
                self.held = Some(version);
                self.start(iter, version);
                Ok(())
            }
            (Phase::Computing { iter, version }, Input::ComputeDone { iter: done })
                if done == iter =>
            {
                self.phase = Phase::Idle;
                self.submitted_at = now;
                self.actions.push_back(Action::Send {
                    to: self.server,
                    msg: Message::TaskResult { iter, version },
                });
                Ok(())
            }
            (phase, input) => Err(self.violation(format!(
                "worker {} got {input:?} in phase {phase:?}",
                self.worker
            ))),
        }
    }

    fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn is_finished(&self) -> bool {
        self.phase == Phase::Done
    }

    fn waiting_on(&self) -> String {
        format!("ASYNC worker {} in phase {:?}", self.worker, self.phase)
    }
}
