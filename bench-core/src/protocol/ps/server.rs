//! The parameter-server node.

use super::completed::CompletedClocks;
use super::dssp::Decision;
use super::policy::ReleasePolicy;
use crate::error::{CoreError, Result};
use crate::protocol::{Action, Input, Message, Nanos, NodeId, Protocol, Role};
use std::collections::VecDeque;

/// Server state: per-worker completed clocks and the reads waiting for them.
#[derive(Debug)]
pub struct PsServer {
    node: NodeId,
    /// `completed[w]`: the clock worker `w`'s next update must have at least (updates of its
    /// clocks `0..completed[w]` were received; with backup workers, some skipped).
    completed: CompletedClocks,
    /// Backup workers: updates accepted per clock not yet complete.
    accepted: std::collections::BTreeMap<u64, usize>,
    /// Backup workers: clocks completed with enough updates.
    backup_complete: u64,
    iterations: u64,
    policy: ReleasePolicy,
    /// Reads waiting to be released: (worker node, clock).
    pending: Vec<(NodeId, u64)>,
    actions: VecDeque<Action>,
    finished: bool,
}

impl PsServer {
    /// A server for `workers` workers (nodes `node+1..=node+workers`) running `iterations`
    /// clocks under `policy`.
    pub fn new(node: NodeId, workers: usize, iterations: u64, policy: ReleasePolicy) -> Self {
        PsServer {
            node,
            completed: CompletedClocks::new(workers),
            accepted: Default::default(),
            backup_complete: 0,
            iterations,
            policy,
            pending: Vec::new(),
            actions: VecDeque::new(),
            finished: false,
        }
    }

    /// Clocks whose updates the model holds: completed by every worker, or with backup
    /// workers, by enough of them.
    pub fn complete(&self) -> u64 {
        match self.policy {
            ReleasePolicy::Backup { .. } => self.backup_complete,
            _ => self.completed.min(),
        }
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

    /// May the pending read of worker `w` at `clock` be answered now?
    fn releasable(&self, w: usize, clock: u64) -> bool {
        match &self.policy {
            ReleasePolicy::Immediate => true,
            ReleasePolicy::Bounded { s, .. } => self.complete() + s >= clock,
            ReleasePolicy::Dssp(c) => c.released(w),
            ReleasePolicy::Backup { .. } => self.backup_complete >= clock,
        }
    }

    /// Backup workers: accept the first `needed` updates of each clock, discard later ones.
    fn on_backup_update(
        &mut self,
        from: NodeId,
        w: usize,
        clock: u64,
        needed: usize,
    ) -> Result<()> {
        if clock < self.completed.get(w) {
            return Err(self.violation(format!(
                "update of clock {clock} from node {from} after its clock {}",
                self.completed.get(w) - 1
            )));
        }
        self.completed.set(w, clock + 1);
        if clock < self.backup_complete {
            self.actions.push_back(Action::Discard { from, clock });
            return Ok(());
        }
        self.actions.push_back(Action::Apply { from, clock });
        *self.accepted.entry(clock).or_default() += 1;
        let before = self.backup_complete;
        while self
            .accepted
            .get(&self.backup_complete)
            .is_some_and(|&n| n >= needed)
        {
            self.accepted.remove(&self.backup_complete);
            self.backup_complete += 1;
        }
        if self.backup_complete > before {
            let waiting = std::mem::take(&mut self.pending);
            for (to, c) in waiting {
                if self.backup_complete >= c {
                    self.reply(to);
                } else {
                    self.pending.push((to, c));
                }
            }
        }
        if !self.finished && self.backup_complete >= self.iterations {
            self.finished = true;
            self.actions.push_back(Action::Finished);
        }
        Ok(())
    }

    fn reply(&mut self, to: NodeId) {
        let complete = self.complete();
        self.actions.push_back(Action::Send {
            to,
            msg: Message::Model { complete },
        });
    }

    fn on_update(&mut self, now: Nanos, from: NodeId, w: usize, clock: u64) -> Result<()> {
        if let ReleasePolicy::Backup { needed } = self.policy {
            return self.on_backup_update(from, w, clock, needed);
        }
        if clock != self.completed.get(w) {
            return Err(self.violation(format!(
                "update of clock {clock} from node {from}, expected clock {}",
                self.completed.get(w)
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
        self.completed.set(w, clock + 1);
        if let ReleasePolicy::Dssp(c) = &mut self.policy {
            c.record_push(w, now);
        }
        let advanced = self.complete() > before;
        let eager = matches!(self.policy, ReleasePolicy::Bounded { eager: true, .. });
        if advanced && eager {
            // ESSP: every worker gets the fresh model; it also answers pending reads that
            // the new clock releases.
            let released: Vec<(NodeId, u64)> = std::mem::take(&mut self.pending);
            for (to, c) in released {
                let idx = to - self.node - 1;
                if !self.releasable(idx, c) {
                    self.pending.push((to, c));
                }
            }
            let mut still_pending = vec![false; self.completed.len()];
            for &(to, _) in &self.pending {
                still_pending[to - self.node - 1] = true;
            }
            for (wi, &waits) in still_pending.iter().enumerate() {
                let to = self.node + 1 + wi;
                if self.completed.get(wi) < self.iterations || waits {
                    self.reply(to);
                }
            }
        } else if advanced || matches!(self.policy, ReleasePolicy::Dssp(_)) {
            let waiting = std::mem::take(&mut self.pending);
            for (to, c) in waiting {
                let idx = to - self.node - 1;
                if self.releasable(idx, c) {
                    self.reply(to);
                } else {
                    self.pending.push((to, c));
                }
            }
        }
        if self.completed.all_at(self.iterations) {
            self.finished = true;
            self.actions.push_back(Action::Finished);
        }
        Ok(())
    }

    fn on_read(&mut self, from: NodeId, w: usize, clock: u64) {
        let ok = match &mut self.policy {
            ReleasePolicy::Dssp(c) => {
                if clock != self.completed.get(w) {
                    // DSSP workers ask right after pushing clock - 1.
                    false
                } else {
                    c.decide(w) == Decision::Continue
                }
            }
            _ => self.releasable(w, clock),
        };
        if ok {
            self.reply(from);
        } else {
            self.pending.push((from, clock));
        }
    }
}

impl Protocol for PsServer {
    fn node(&self) -> NodeId {
        self.node
    }

    fn role(&self) -> Role {
        Role::Server
    }

    fn handle(&mut self, now: Nanos, input: Input) -> Result<()> {
        match input {
            Input::Start => Ok(()),
            Input::ComputeDone { iter } => Err(self.violation(format!(
                "the server computes nothing, got ComputeDone({iter})"
            ))),
            Input::Received { from, msg } => {
                let w = self.worker_index(from)?;
                match msg {
                    Message::Update { clock } => self.on_update(now, from, w, clock),
                    Message::ReadRequest { clock } => {
                        self.on_read(from, w, clock);
                        Ok(())
                    }
                    other => Err(self.violation(format!(
                        "node {from} sent {other:?}, which a parameter server never receives"
                    ))),
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
            self.completed.as_slice(),
            self.pending.len()
        )
    }
}
