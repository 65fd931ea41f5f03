//! One server shard of the row tables.

use super::{RowAccess, RowKey, TableMode};
use crate::error::{CoreError, Result};
use crate::protocol::{Action, Input, Message, Nanos, NodeId, Protocol, Role};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;
use std::sync::Arc;

/// A shard: the clocks every worker completed here, what it sent each worker, the rows each
/// worker registered (ESSP), and the requests waiting for the shard's clock.
#[derive(Debug)]
pub struct TableShard {
    shard: usize,
    shards: usize,
    clocks: u64,
    mode: TableMode,
    access: Arc<dyn RowAccess>,
    /// `completed[w]`: worker `w`'s RowInc of clocks `< completed[w]` arrived.
    completed: Vec<u64>,
    /// Per worker, the stamp of the latest copy of each row sent to it.
    sent: Vec<FxHashMap<RowKey, u64>>,
    /// ESSP: per worker, the rows it registered.
    registered: Vec<FxHashSet<RowKey>>,
    /// ESSP: per row, the workers that registered it.
    registrants: FxHashMap<RowKey, Vec<usize>>,
    /// ESSP: per worker, registered rows changed (or never sent) since the last copy sent.
    dirty: Vec<FxHashSet<RowKey>>,
    /// Per worker, requests received.
    requests: Vec<u64>,
    /// Requests waiting: (worker, clock, step).
    pending: Vec<(usize, u64, u64)>,
    /// INCs `(from, clock)` held back until every reader's window holds their clock.
    deferred: Vec<(NodeId, u64)>,
    actions: VecDeque<Action>,
    finished: bool,
}

impl TableShard {
    /// Shard `shard` of `shards` (its node id) for `workers` workers running `clocks` clocks.
    pub fn new(
        shard: usize,
        shards: usize,
        workers: usize,
        clocks: u64,
        mode: TableMode,
        access: Arc<dyn RowAccess>,
    ) -> Self {
        TableShard {
            shard,
            shards,
            clocks,
            mode,
            access,
            completed: vec![0; workers],
            sent: vec![FxHashMap::default(); workers],
            registered: vec![FxHashSet::default(); workers],
            registrants: FxHashMap::default(),
            dirty: vec![FxHashSet::default(); workers],
            requests: vec![0; workers],
            pending: Vec::new(),
            deferred: Vec::new(),
            actions: VecDeque::new(),
            finished: false,
        }
    }

    /// The shard's clock: every worker's INCs of clocks below it have arrived.
    pub fn clock(&self) -> u64 {
        self.completed.iter().copied().min().unwrap_or(0)
    }

    fn violation(&self, message: String) -> CoreError {
        CoreError::Protocol {
            node: self.shard,
            message,
        }
    }

    fn node_of(&self, w: usize) -> NodeId {
        self.shards + w
    }

    /// The rows of worker `w`'s reads at step `step` of `clock` that this shard holds.
    fn my_rows(&self, w: usize, clock: u64, step: u64) -> Vec<RowKey> {
        let mut rows = self.access.rows(w, clock, step);
        rows.retain(|r| r.shard(self.shards) == self.shard);
        rows
    }

    fn releasable(&self, clock: u64) -> bool {
        match self.mode {
            TableMode::Bounded { s, .. } => self.clock() + s >= clock,
            TableMode::Async => true,
        }
    }

    /// Answers worker `w`'s request of step `step` of `clock` with the rows it still wants, at
    /// the shard's clock.
    fn answer(&mut self, w: usize, clock: u64, step: u64) {
        let stamp = self.clock();
        let rows: Vec<RowKey> = self
            .my_rows(w, clock, step)
            .into_iter()
            .filter(|r| self.mode.wants(self.sent[w].get(r).copied(), clock, stamp))
            .collect();
        for r in &rows {
            self.sent[w].insert(*r, stamp);
            self.dirty[w].remove(r);
        }
        let to = self.node_of(w);
        self.actions.push_back(Action::RowSet { peer: to, rows });
        self.actions.push_back(Action::Send {
            to,
            msg: Message::Rows { clock, stamp },
        });
    }

    /// ESSP: to every worker still running, the new clock for every row it registered, with
    /// the values of those that changed since it last got them.
    fn push_all(&mut self) {
        let stamp = self.clock();
        for w in 0..self.completed.len() {
            if self.registered[w].is_empty() || self.completed[w] >= self.clocks {
                continue;
            }
            for r in &self.registered[w] {
                self.sent[w].insert(*r, stamp);
            }
            // Sorted, as the row lists of requests are.
            let mut rows: Vec<RowKey> = self.dirty[w].drain().collect();
            rows.sort_unstable();
            let to = self.node_of(w);
            self.actions.push_back(Action::RowSet { peer: to, rows });
            self.actions.push_back(Action::Send {
                to,
                msg: Message::RowPush {
                    upto: self.requests[w],
                    stamp,
                },
            });
        }
    }

    /// May an INC of `clock` reach the rows now (see [`Self::on_inc`])? ASP: always.
    fn applicable(&self, clock: u64) -> bool {
        match self.mode {
            TableMode::Bounded { s, .. } => clock < self.clock() + s,
            TableMode::Async => true,
        }
    }

    /// Applies worker `w`'s (node `from`) INC of `clock`; under ESSP its rows become due to
    /// every worker that registered them.
    fn apply(&mut self, from: NodeId, w: usize, clock: u64) {
        self.actions.push_back(Action::Apply { from, clock });
        if matches!(self.mode, TableMode::Bounded { eager: true, .. }) {
            // The plan's rows of a clock are the ones its INCs change.
            let mut rows = self.access.clock_rows(w, clock);
            rows.retain(|r| r.shard(self.shards) == self.shard);
            for r in rows {
                for &v in self.registrants.get(&r).into_iter().flatten() {
                    self.dirty[v].insert(r);
                }
            }
        }
    }

    fn on_inc(&mut self, from: NodeId, w: usize, clock: u64) -> Result<()> {
        if clock != self.completed[w] || clock >= self.clocks {
            return Err(self.violation(format!(
                "RowInc of clock {clock} from node {from}, expected clock {} of {}",
                self.completed[w], self.clocks
            )));
        }
        // The SSP view at clock c (ESSP §"Theoretical Analysis") holds every update of clocks
        // <= c - s - 1 and, best effort, some of the window c - s ..= c + s - 1. An INC is
        // applied once every worker still reading could have it in its window (its clock < the
        // shard's clock + s), and held back until then: at s = 0 (empty window) a read late in
        // clock c must not see a faster worker's INCs of clock c, and at s >= 1 a worker s clocks
        // ahead must not leak its INCs of clock c + s to a reader at c.
        if self.applicable(clock) {
            self.apply(from, w, clock);
        } else {
            self.deferred.push((from, clock));
        }
        let before = self.clock();
        self.completed[w] += 1;
        if self.clock() > before {
            // In arrival order, so each worker's INCs stay in clock order.
            for (from, clock) in std::mem::take(&mut self.deferred) {
                if self.applicable(clock) {
                    self.apply(from, from - self.shards, clock);
                } else {
                    self.deferred.push((from, clock));
                }
            }
            if matches!(self.mode, TableMode::Bounded { eager: true, .. }) {
                self.push_all();
            }
            let waiting = std::mem::take(&mut self.pending);
            for (w, c, step) in waiting {
                if self.releasable(c) {
                    self.answer(w, c, step);
                } else {
                    self.pending.push((w, c, step));
                }
            }
        }
        self.check_finished();
        Ok(())
    }

    fn on_request(&mut self, from: NodeId, w: usize, clock: u64, step: u64) -> Result<()> {
        if clock != self.completed[w] || clock >= self.clocks {
            return Err(self.violation(format!(
                "row request of clock {clock} from node {from}, which completed {} of {} clocks \
                 here",
                self.completed[w], self.clocks
            )));
        }
        let steps = self.access.steps(w, clock).max(1);
        if step >= steps {
            return Err(self.violation(format!(
                "row request of step {step} of clock {clock} from node {from}, whose clock has \
                 {steps} steps"
            )));
        }
        self.requests[w] += 1;
        if matches!(self.mode, TableMode::Bounded { eager: true, .. }) {
            for r in self.my_rows(w, clock, step) {
                if self.registered[w].insert(r) {
                    self.registrants.entry(r).or_default().push(w);
                    if !self.sent[w].contains_key(&r) {
                        // Registered before its first copy: the next push must carry it.
                        self.dirty[w].insert(r);
                    }
                }
            }
        }
        if self.releasable(clock) {
            self.answer(w, clock, step);
        } else {
            self.pending.push((w, clock, step));
        }
        Ok(())
    }

    fn check_finished(&mut self) {
        if !self.finished
            && self.pending.is_empty()
            && self.completed.iter().all(|&c| c == self.clocks)
        {
            self.finished = true;
            self.actions.push_back(Action::Finished);
        }
    }
}

impl Protocol for TableShard {
    fn node(&self) -> NodeId {
        self.shard
    }

    fn role(&self) -> Role {
        Role::Server
    }

    fn handle(&mut self, _now: Nanos, input: Input) -> Result<()> {
        match input {
            Input::Start => Ok(()),
            Input::ComputeDone { iter } => {
                Err(self.violation(format!("a shard computes nothing, got ComputeDone({iter})")))
            }
            Input::Received { from, msg } => {
                let w = from
                    .checked_sub(self.shards)
                    .filter(|&w| w < self.completed.len())
                    .ok_or_else(|| {
                        self.violation(format!("message from node {from}, which is not a worker"))
                    })?;
                match msg {
                    Message::RowInc { clock } => self.on_inc(from, w, clock),
                    Message::RowRequest { clock, step } => self.on_request(from, w, clock, step),
                    other => Err(self.violation(format!(
                        "node {from} sent {other:?}, which a table shard never receives"
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
            "shard {}: completed clocks per worker {:?}, {} requests pending",
            self.shard,
            self.completed,
            self.pending.len()
        )
    }
}
