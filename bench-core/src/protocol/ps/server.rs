//! The parameter-server node.

use crate::error::{CoreError, Result};
use crate::protocol::{Action, Input, Message, Nanos, NodeId, Protocol, Role};
use std::collections::VecDeque;

/// Server state: per-worker completed clocks and the reads waiting for them.
#[derive(Debug)]
pub struct PsServer {
    node: NodeId,
    /// `completed[w]`: updates received from worker `w` (its clocks `0..completed[w]`).
    completed: Vec<u64>,
    iterations: u64,
    bound: Option<u64>,
    /// Reads waiting for freshness: (worker node, clock).
    pending: Vec<(NodeId, u64)>,
    actions: VecDeque<Action>,
    finished: bool,
}

impl PsServer {
    /// A server for `workers` workers (nodes `node+1..=node+workers`) running `iterations`
    /// clocks under staleness bound `bound` (`None` = ASP).
    pub fn new(node: NodeId, workers: usize, iterations: u64, bound: Option<u64>) -> Self {
        PsServer {
            node,
            completed: vec![0; workers],
            iterations,
            bound,
            pending: Vec::new(),
            actions: VecDeque::new(),
            finished: false,
        }
    }

    /// Clocks completed by every worker.
    pub fn complete(&self) -> u64 {
        self.completed.iter().copied().min().unwrap_or(0)
    }

    fn worker_index(&self, from: NodeId) -> Result<usize> {
        from.checked_sub(self.node + 1)
            .filter(|&w| w < self.completed.len())
            .ok_or_else(|| {
                self.violation(format!("message from node {from}, which is not a worker"))
            })
    }

    fn violation(&self, message: String) -> CoreError {
        CoreError::Protocol {
            node: self.node,
            message,
        }
    }

    fn fresh_enough(&self, clock: u64) -> bool {
        match self.bound {
            None => true,
            Some(s) => self.complete() + s >= clock,
        }
    }

    fn reply(&mut self, to: NodeId) {
        let complete = self.complete();
        self.actions.push_back(Action::Send {
            to,
            msg: Message::Model { complete },
        });
    }
}

impl Protocol for PsServer {
    fn node(&self) -> NodeId {
        self.node
    }

    fn role(&self) -> Role {
        Role::Server
    }

    fn handle(&mut self, _now: Nanos, input: Input) -> Result<()> {
        match input {
            Input::Start => Ok(()),
            Input::ComputeDone { iter } => Err(self.violation(format!(
                "the server computes nothing, got ComputeDone({iter})"
            ))),
            Input::Received { from, msg } => {
                let w = self.worker_index(from)?;
                match msg {
                    Message::Update { clock } => {
                        if clock != self.completed[w] {
                            return Err(self.violation(format!(
                                "update of clock {clock} from node {from}, expected clock {}",
                                self.completed[w]
                            )));
                        }
                        if clock >= self.iterations {
                            return Err(self.violation(format!(
                                "update of clock {clock} from node {from} beyond the run's {} clocks",
                                self.iterations
                            )));
                        }
                        self.actions.push_back(Action::Apply { from, clock });
                        let before = self.complete();
                        self.completed[w] += 1;
                        if self.complete() > before {
                            let waiting = std::mem::take(&mut self.pending);
                            for (to, c) in waiting {
                                if self.fresh_enough(c) {
                                    self.reply(to);
                                } else {
                                    self.pending.push((to, c));
                                }
                            }
                        }
                        if self.completed.iter().all(|&c| c == self.iterations) {
                            self.finished = true;
                            self.actions.push_back(Action::Finished);
                        }
                        Ok(())
                    }
                    Message::ReadRequest { clock } => {
                        if self.fresh_enough(clock) {
                            self.reply(from);
                        } else {
                            self.pending.push((from, clock));
                        }
                        Ok(())
                    }
                    Message::Model { .. } => {
                        Err(self.violation(format!("node {from} sent a model to the server")))
                    }
                }
            }
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
            "server: completed clocks per worker {:?}, {} reads pending",
            self.completed,
            self.pending.len()
        )
    }
}
