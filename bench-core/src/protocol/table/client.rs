//! A worker of the row tables and its client cache.

use super::{RowAccess, RowKey, TableMode};
use crate::error::{CoreError, Result};
use crate::protocol::{
    Action, Event, Input, IterationRecord, Message, Nanos, NodeId, Protocol, Role,
};
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Idle,
    /// Waiting for rows since `since`.
    Waiting {
        since: Nanos,
    },
    /// Computing a step.
    Computing,
    Done,
}

/// What the worker knows of one shard.
#[derive(Debug, Default)]
struct ShardView {
    /// Clock and step of the request in flight, if any.
    in_flight: Option<(u64, u64)>,
    /// Requests sent.
    requests: u64,
    /// ESSP: rows the shard has registered (from the requests it has acknowledged by a push).
    registered: Vec<RowKey>,
    /// ESSP: rows of each request sent, in order, until a push shows the shard got it.
    unconfirmed: VecDeque<Vec<RowKey>>,
    /// Requests whose rows are in `registered`.
    confirmed: u64,
}

/// A worker: its clock, its cache's row stamps, and where it is in a clock.
#[derive(Debug)]
pub struct TableClient {
    worker: usize,
    shards: usize,
    clocks: u64,
    mode: TableMode,
    access: Arc<dyn RowAccess>,
    clock: u64,
    /// The step of the current clock, and how many it has.
    step: u64,
    steps: u64,
    /// Time blocked so far in the current clock, its stalest read, and its reads' clock
    /// differentials (recorded once per clock).
    wait: Nanos,
    staleness: u64,
    differentials: BTreeMap<i64, u64>,
    /// The rows of the current step.
    needed: Vec<RowKey>,
    /// Stamp of each cached row.
    cache: FxHashMap<RowKey, u64>,
    views: Vec<ShardView>,
    start: Nanos,
    phase: Phase,
    actions: VecDeque<Action>,
}

impl TableClient {
    /// Worker `worker` (node `shards + worker`) of a run with `shards` shards.
    pub fn new(
        worker: usize,
        shards: usize,
        clocks: u64,
        mode: TableMode,
        access: Arc<dyn RowAccess>,
    ) -> Self {
        TableClient {
            worker,
            shards,
            clocks,
            mode,
            access,
            clock: 0,
            step: 0,
            steps: 1,
            wait: 0,
            staleness: 0,
            differentials: BTreeMap::new(),
            needed: Vec::new(),
            cache: FxHashMap::default(),
            views: (0..shards).map(|_| ShardView::default()).collect(),
            start: 0,
            phase: Phase::Idle,
            actions: VecDeque::new(),
        }
    }

    fn node(&self) -> NodeId {
        self.shards + self.worker
    }

    fn violation(&self, message: String) -> CoreError {
        CoreError::Protocol {
            node: self.node(),
            message,
        }
    }

    /// Does a read of `row` at the current clock have to wait?
    fn blocks(&self, row: &RowKey) -> bool {
        match (self.mode, self.cache.get(row)) {
            (_, None) => true,
            (TableMode::Bounded { s, .. }, Some(&t)) => t + s < self.clock,
            (TableMode::Async, Some(_)) => false,
        }
    }

    /// Sends the requests the current step needs (one in flight per shard) and starts its
    /// computation when no row blocks.
    fn try_read(&mut self, now: Nanos) {
        let mut blocked = vec![false; self.shards];
        let mut any = vec![false; self.shards];
        for r in &self.needed {
            let j = r.shard(self.shards);
            any[j] = true;
            if self.blocks(r) {
                blocked[j] = true;
            }
        }
        for j in 0..self.shards {
            // ASP refreshes the shards it reads from in the background; the other modes ask
            // only where a row blocks.
            let ask = blocked[j] || (self.mode == TableMode::Async && any[j]);
            if ask && self.views[j].in_flight.is_none() {
                let rows: Vec<RowKey> = self
                    .needed
                    .iter()
                    .copied()
                    .filter(|r| r.shard(self.shards) == j)
                    .collect();
                let v = &mut self.views[j];
                v.in_flight = Some((self.clock, self.step));
                v.requests += 1;
                if matches!(self.mode, TableMode::Bounded { eager: true, .. }) {
                    v.unconfirmed.push_back(rows);
                }
                self.actions.push_back(Action::Send {
                    to: j,
                    msg: Message::RowRequest {
                        clock: self.clock,
                        step: self.step,
                    },
                });
            }
        }
        if blocked.iter().any(|&b| b) {
            if !matches!(self.phase, Phase::Waiting { .. }) {
                self.phase = Phase::Waiting { since: now };
            }
            return;
        }
        let wait = match self.phase {
            Phase::Waiting { since } => now - since,
            _ => 0,
        };
        self.start_compute(wait);
    }

    fn start_compute(&mut self, wait: Nanos) {
        let mut oldest = self.clock;
        for r in &self.needed {
            let t = self.cache[r];
            oldest = oldest.min(t);
            *self
                .differentials
                .entry(t as i64 - 1 - self.clock as i64)
                .or_default() += 1;
        }
        self.staleness = self.staleness.max(self.clock - oldest.min(self.clock));
        self.wait += wait;
        self.phase = Phase::Computing;
        self.actions.push_back(Action::Record(Event::Read {
            worker: self.worker,
            iter: self.clock,
            complete: oldest,
        }));
        self.actions.push_back(Action::Compute { iter: self.clock });
    }

    fn begin_clock(&mut self, now: Nanos) {
        if self.clock == self.clocks {
            self.phase = Phase::Done;
            self.actions.push_back(Action::Finished);
            return;
        }
        self.start = now;
        self.step = 0;
        self.steps = self.access.steps(self.worker, self.clock).max(1);
        self.wait = 0;
        self.staleness = 0;
        self.begin_step(now);
    }

    fn begin_step(&mut self, now: Nanos) {
        self.needed = self.access.rows(self.worker, self.clock, self.step);
        self.phase = Phase::Idle;
        self.try_read(now);
    }

    /// Installs rows from shard `j` at `stamp`, naming them for the learning.
    fn install(&mut self, j: usize, rows: Vec<RowKey>, stamp: u64) -> Result<()> {
        for r in &rows {
            let e = self.cache.entry(*r).or_insert(stamp);
            let cached = *e;
            *e = stamp.max(cached);
            if cached > stamp {
                return Err(self.violation(format!(
                    "shard {j} sent row {r:?} at clock {stamp}, older than the cached {cached}"
                )));
            }
        }
        self.actions.push_back(Action::RowSet { peer: j, rows });
        self.actions.push_back(Action::Install { from: j });
        Ok(())
    }

    fn on_rows(&mut self, now: Nanos, j: usize, clock: u64, stamp: u64) -> Result<()> {
        let step = match self.views[j].in_flight {
            Some((c, step)) if c == clock => step,
            other => {
                return Err(self.violation(format!(
                    "rows for a request of clock {clock} from shard {j}, which has {other:?} \
                     (clock, step) in flight"
                )))
            }
        };
        self.views[j].in_flight = None;
        // The shard chose these rows from what it had sent this worker, which is what the cache
        // holds now: every earlier message from it has been handled.
        let mut rows = self.access.rows(self.worker, clock, step);
        rows.retain(|r| {
            r.shard(self.shards) == j && self.mode.wants(self.cache.get(r).copied(), clock, stamp)
        });
        self.install(j, rows, stamp)?;
        if matches!(self.phase, Phase::Waiting { .. }) {
            self.try_read(now);
        }
        Ok(())
    }

    fn on_push(&mut self, now: Nanos, j: usize, upto: u64, stamp: u64) -> Result<()> {
        let (sent, covered) = (self.views[j].requests, self.views[j].confirmed);
        if upto > sent || upto < covered {
            return Err(self.violation(format!(
                "push from shard {j} covering {upto} requests; {sent} sent, {covered} already \
                 covered"
            )));
        }
        let v = &mut self.views[j];
        let before = v.registered.len();
        while v.confirmed < upto {
            let rows = v.unconfirmed.pop_front().unwrap_or_default();
            v.registered.extend(rows);
            v.confirmed += 1;
        }
        // Sorted and deduplicated already unless this push confirmed new rows.
        if v.registered.len() > before {
            v.registered.sort_unstable();
            v.registered.dedup();
        }
        let rows = v.registered.clone();
        self.install(j, rows, stamp)?;
        if matches!(self.phase, Phase::Waiting { .. }) {
            self.try_read(now);
        }
        Ok(())
    }
}

impl Protocol for TableClient {
    fn node(&self) -> NodeId {
        TableClient::node(self)
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
                self.begin_clock(now);
                Ok(())
            }
            Input::ComputeDone { iter } => {
                if self.phase != Phase::Computing {
                    return Err(self.violation(format!("ComputeDone({iter}) while not computing")));
                }
                if iter != self.clock {
                    return Err(self.violation(format!(
                        "ComputeDone({iter}) but computing clock {}",
                        self.clock
                    )));
                }
                if self.step + 1 < self.steps {
                    // Messages that arrived during the step are installed: the next step reads
                    // them.
                    self.step += 1;
                    self.begin_step(now);
                    return Ok(());
                }
                let (wait, staleness) = (self.wait, self.staleness);
                for j in 0..self.shards {
                    self.actions.push_back(Action::Send {
                        to: j,
                        msg: Message::RowInc { clock: iter },
                    });
                }
                self.actions.push_back(Action::Record(Event::RowReads {
                    worker: self.worker,
                    clock: iter,
                    differentials: std::mem::take(&mut self.differentials)
                        .into_iter()
                        .collect(),
                }));
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
                self.begin_clock(now);
                Ok(())
            }
            Input::Received { from, msg } => {
                if from >= self.shards {
                    return Err(
                        self.violation(format!("{msg:?} from node {from}, which is not a shard"))
                    );
                }
                match msg {
                    Message::Rows { clock, stamp } => self.on_rows(now, from, clock, stamp),
                    Message::RowPush { upto, stamp } => self.on_push(now, from, upto, stamp),
                    other => Err(self.violation(format!(
                        "node {from} sent {other:?}, which a table worker never receives"
                    ))),
                }
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
        let in_flight: Vec<_> = self.views.iter().map(|v| v.in_flight).collect();
        format!(
            "table worker {} at step {} of {} of clock {} ({:?}), requests (clock, step) in \
             flight per shard {in_flight:?}",
            self.worker, self.step, self.steps, self.clock, self.phase
        )
    }
}
