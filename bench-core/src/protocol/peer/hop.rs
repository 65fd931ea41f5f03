//! One decentralized peer: Hop's queue-based protocol (Hop §4, Figs 4, 7, 8, 9) and ASAP's
//! NOTIFY-ACK, as a sans-IO state machine. See the module documentation of [`super`].

use super::update_queue::{Enqueued, UpdateQueue};
use super::{PeerMode, PeerSettings};
use crate::error::{CoreError, Result};
use crate::protocol::{
    Action, Event, Input, IterationRecord, Message, Nanos, NodeId, Protocol, Role,
};
use std::collections::{HashMap, VecDeque};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// About to enter the current iteration: needs a token from every out-neighbour.
    Entering,
    /// In the iteration, about to Send (NOTIFY-ACK: needs the previous iteration's ACKs).
    Sending,
    /// Sent; computing and/or receiving.
    Working {
        computed: bool,
        reduced: bool,
    },
    Done,
}

/// A peer of a decentralized run.
#[derive(Debug)]
pub struct HopPeer {
    node: NodeId,
    inn: Vec<NodeId>,
    out: Vec<NodeId>,
    settings: PeerSettings,
    iter: u64,
    phase: Phase,
    queue: UpdateQueue,
    /// Staleness: newest iteration received from each in-neighbour (None: nothing yet).
    newest: HashMap<NodeId, u64>,
    /// Tokens available from each out-neighbour.
    tokens: HashMap<NodeId, u64>,
    /// Latest iteration each out-neighbour announced (with its tokens).
    known_iter: HashMap<NodeId, u64>,
    /// NOTIFY-ACK: highest iteration each out-neighbour has ACKed.
    acked: HashMap<NodeId, u64>,
    attempt_at: Nanos,
    sent_at: Nanos,
    /// When the iteration's Compute was issued (after tokens and ACKs).
    started_at: Nanos,
    computed_at: Nanos,
    reduce_staleness: u64,
    skipped: u64,
    actions: VecDeque<Action>,
}

impl HopPeer {
    /// Peer `node` with remote in- and out-neighbours, an update queue window of `window`
    /// iterations.
    pub fn new(
        node: NodeId,
        inn: Vec<NodeId>,
        out: Vec<NodeId>,
        settings: PeerSettings,
        window: usize,
    ) -> Self {
        let tokens = out
            .iter()
            .map(|&j| (j, settings.max_i.unwrap_or(0)))
            .collect();
        HopPeer {
            node,
            inn,
            out,
            settings,
            iter: 0,
            phase: Phase::Entering,
            queue: UpdateQueue::new(window),
            newest: HashMap::new(),
            tokens,
            known_iter: HashMap::new(),
            acked: HashMap::new(),
            attempt_at: 0,
            sent_at: 0,
            started_at: 0,
            computed_at: 0,
            reduce_staleness: 0,
            skipped: 0,
            actions: VecDeque::new(),
        }
    }

    fn violation(&self, message: String) -> CoreError {
        CoreError::Protocol {
            node: self.node,
            message,
        }
    }

    fn send_all(&mut self, to: &[NodeId], msg: Message) {
        for &j in to {
            self.actions.push_back(Action::Send { to: j, msg });
        }
    }

    /// Lowest iteration whose updates the current iteration can use.
    fn min_iter(&self) -> u64 {
        match self.settings.mode {
            PeerMode::Staleness { s } => self.iter.saturating_sub(s),
            _ => self.iter,
        }
    }

    /// Rec(k): the inputs of the Reduce as `(node, iteration, weight)` (own parameters
    /// included), or None to block. Consumes nothing when it blocks.
    fn try_rec(&mut self) -> Option<Vec<(NodeId, u64, f64)>> {
        let k = self.iter;
        let mut inputs = Vec::new();
        match self.settings.mode {
            PeerMode::Standard | PeerMode::NotifyAck => {
                for (it, j) in self.queue.dequeue(self.inn.len(), Some(k), None)? {
                    inputs.push((j, it, 1.0));
                }
                inputs.push((self.node, k, 1.0));
            }
            PeerMode::Backup { backups } => {
                let need = self.inn.len() - backups;
                let mut got = self.queue.dequeue(need, Some(k), None)?;
                let extra = self.queue.size(Some(k), None);
                got.extend(self.queue.dequeue(extra, Some(k), None).unwrap_or_default());
                inputs.extend(got.into_iter().map(|(it, j)| (j, it, 1.0)));
                inputs.push((self.node, k, 1.0));
            }
            PeerMode::Staleness { s } => {
                // eq. 2 weights: iter(u) - (k - s) + 1, which may exceed 0 even for k < s.
                let floor = k as i64 - s as i64;
                let ok = self.inn.iter().all(|j| {
                    let best = self.queue.newest(*j).max(self.newest.get(j).copied());
                    best.map_or(floor < 0, |b| b as i64 >= floor)
                });
                if !ok {
                    return None;
                }
                let mut staleness = 0;
                for j in self.inn.clone() {
                    let n = self.queue.size(None, Some(j));
                    let got = self.queue.dequeue(n, None, Some(j)).unwrap_or_default();
                    let Some(&(newest, _)) = got.iter().max_by_key(|(it, _)| *it) else {
                        continue;
                    };
                    for &(it, _) in got.iter().filter(|(it, _)| *it != newest) {
                        self.actions
                            .push_back(Action::Discard { from: j, clock: it });
                    }
                    let e = self.newest.entry(j).or_insert(newest);
                    *e = (*e).max(newest);
                    if newest as i64 >= floor {
                        staleness = staleness.max(k.saturating_sub(newest));
                        inputs.push((j, newest, (newest as i64 - floor + 1) as f64));
                    } else {
                        self.actions.push_back(Action::Discard {
                            from: j,
                            clock: newest,
                        });
                    }
                }
                self.reduce_staleness = staleness;
                inputs.push((self.node, k, (s + 1) as f64));
            }
        }
        Some(inputs)
    }

    fn progress(&mut self, now: Nanos) -> Result<()> {
        loop {
            match self.phase {
                Phase::Done => return Ok(()),
                Phase::Entering => {
                    if self.iter > 0 && self.settings.max_i.is_some() {
                        if let Some(target) = self.jump_target() {
                            self.jump(target);
                            continue;
                        }
                        if self.out.iter().any(|j| self.tokens[j] == 0) {
                            return Ok(());
                        }
                        for j in &self.out {
                            *self
                                .tokens
                                .get_mut(j)
                                .expect("token entry per out-neighbour") -= 1;
                        }
                        let inn = self.inn.clone();
                        self.send_all(&inn, Message::Token { iter: self.iter });
                    }
                    self.phase = Phase::Sending;
                }
                Phase::Sending => {
                    if self.settings.mode == PeerMode::NotifyAck && self.iter > 0 {
                        let prev = self.iter - 1;
                        if self
                            .out
                            .iter()
                            .any(|j| self.acked.get(j).is_none_or(|&a| a < prev))
                        {
                            return Ok(());
                        }
                    }
                    self.started_at = now;
                    if !self.settings.serial {
                        self.send_update(now);
                    }
                    self.actions.push_back(Action::Compute { iter: self.iter });
                    self.phase = Phase::Working {
                        computed: false,
                        reduced: false,
                    };
                }
                Phase::Working { computed, reduced } => {
                    let mut reduced = reduced;
                    // Serial: the reduce waits for the parameters sent after Appl.
                    if !reduced && (computed || !self.settings.serial) {
                        if let Some(inputs) = self.try_rec() {
                            self.actions.push_back(Action::Reduce { inputs });
                            if self.settings.mode == PeerMode::NotifyAck {
                                let inn = self.inn.clone();
                                self.send_all(&inn, Message::Ack { clock: self.iter });
                            }
                            reduced = true;
                        }
                    }
                    self.phase = Phase::Working { computed, reduced };
                    if !(computed && reduced) {
                        return Ok(());
                    }
                    let wait = self.started_at.saturating_sub(self.attempt_at)
                        + now.saturating_sub(self.computed_at.max(self.sent_at));
                    self.actions
                        .push_back(Action::Record(Event::Iteration(IterationRecord {
                            worker: self.node,
                            iter: self.iter,
                            start: self.attempt_at,
                            end: now,
                            wait,
                            staleness: self.reduce_staleness,
                        })));
                    self.attempt_at = now;
                    if self.iter + 1 == self.settings.iterations {
                        self.phase = Phase::Done;
                        self.actions.push_back(Action::Finished);
                        return Ok(());
                    }
                    self.iter += 1;
                    self.phase = Phase::Entering;
                    let base = self.min_iter();
                    for (clock, from) in self.queue.advance(base) {
                        self.actions.push_back(Action::Discard { from, clock });
                    }
                }
            }
        }
    }

    /// Sends the iteration's parameters to every out-neighbour that still needs them.
    fn send_update(&mut self, now: Nanos) {
        self.sent_at = now;
        for j in self.out.clone() {
            let useless = matches!(self.settings.mode, PeerMode::Backup { .. })
                && self.known_iter.get(&j).is_some_and(|&t| t > self.iter);
            if !useless {
                self.actions.push_back(Action::Send {
                    to: j,
                    msg: Message::Update { clock: self.iter },
                });
            }
        }
    }

    /// Rec(t) could complete now (without consuming anything).
    fn rec_ready(&self, t: u64) -> bool {
        match self.settings.mode {
            PeerMode::Standard | PeerMode::NotifyAck => {
                self.queue.size(Some(t), None) >= self.inn.len()
            }
            PeerMode::Backup { backups } => {
                self.queue.size(Some(t), None) >= self.inn.len() - backups
            }
            PeerMode::Staleness { s } => {
                let floor = t as i64 - s as i64;
                self.inn.iter().all(|j| {
                    let best = self.queue.newest(*j).max(self.newest.get(j).copied());
                    best.map_or(floor < 0, |b| b as i64 >= floor)
                })
            }
        }
    }

    /// Skipping iterations: the iteration to jump to from `self.iter - 1` (just completed),
    /// if this peer is a straggler (every out-neighbour at least `trigger` ahead) and the
    /// updates of the iteration before some target at least two ahead are already here.
    fn jump_target(&self) -> Option<u64> {
        let skip = self.settings.skip?;
        let max_i = self.settings.max_i?;
        let k0 = self.iter - 1;
        // Out-neighbour j's lead over this peer: tokens - max_i = Iter(j) - Iter(i).
        let lead = self
            .out
            .iter()
            .map(|j| self.tokens[j].saturating_sub(max_i))
            .min()?;
        if lead < skip.trigger {
            return None;
        }
        let last = self.settings.iterations - 1;
        let far = skip.max_jump.min(lead).min(last.saturating_sub(k0));
        (2..=far)
            .rev()
            .map(|j| k0 + j)
            .find(|&target| self.rec_ready(target - 1))
    }

    /// Jumps from `self.iter - 1` to `target`: Rec(target - 1) + Reduce (no gradient), then
    /// `target - (self.iter - 1)` tokens taken from every out-neighbour and given to every
    /// in-neighbour.
    fn jump(&mut self, target: u64) {
        let k0 = self.iter - 1;
        let jumped = target - k0;
        self.iter = target - 1;
        let base = self.min_iter();
        for (clock, from) in self.queue.advance(base) {
            self.actions.push_back(Action::Discard { from, clock });
        }
        let inputs = self
            .try_rec()
            .expect("jump_target checked that Rec(target - 1) can complete");
        self.actions.push_back(Action::Reduce { inputs });
        for j in &self.out {
            *self
                .tokens
                .get_mut(j)
                .expect("token entry per out-neighbour") -= jumped;
        }
        self.iter = target;
        let base = self.min_iter();
        for (clock, from) in self.queue.advance(base) {
            self.actions.push_back(Action::Discard { from, clock });
        }
        let inn = self.inn.clone();
        for _ in 0..jumped {
            self.send_all(&inn, Message::Token { iter: target });
        }
        self.skipped += jumped - 1;
        self.phase = Phase::Sending;
    }

    /// Iterations this peer skipped by jumping.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    fn on_update(&mut self, from: NodeId, clock: u64) -> Result<()> {
        if !self.inn.contains(&from) {
            return Err(self.violation(format!("update from node {from}, not an in-neighbour")));
        }
        match self.queue.enqueue(clock, from) {
            Ok(Enqueued::Stored) => Ok(()),
            Ok(Enqueued::Stale) => {
                self.actions.push_back(Action::Discard { from, clock });
                Ok(())
            }
            Err((lo, hi)) => Err(self.violation(format!(
                "update queue overflow: update of iteration {clock} from node {from} outside the window {lo}..{hi} at iteration {} (the iteration-gap bound it was sized for was broken)",
                self.iter
            ))),
        }
    }
}

impl Protocol for HopPeer {
    fn node(&self) -> NodeId {
        self.node
    }

    fn role(&self) -> Role {
        Role::Worker(self.node)
    }

    fn handle(&mut self, now: Nanos, input: Input) -> Result<()> {
        match input {
            Input::Start => {
                self.attempt_at = now;
            }
            Input::ComputeDone { iter } => match self.phase {
                Phase::Working {
                    computed: false,
                    reduced,
                } if iter == self.iter => {
                    self.computed_at = now;
                    self.phase = Phase::Working {
                        computed: true,
                        reduced,
                    };
                    if self.settings.serial {
                        // The driver applied the update (Appl); send the new parameters.
                        self.send_update(now);
                    }
                }
                phase => {
                    return Err(self.violation(format!(
                        "ComputeDone({iter}) at iteration {} in phase {phase:?}",
                        self.iter
                    )))
                }
            },
            Input::Received { from, msg } => match msg {
                Message::Update { clock } => self.on_update(from, clock)?,
                Message::Token { iter } if self.out.contains(&from) => {
                    *self.tokens.entry(from).or_insert(0) += 1;
                    let k = self.known_iter.entry(from).or_insert(iter);
                    *k = (*k).max(iter);
                }
                Message::Ack { clock } if self.out.contains(&from) => {
                    let a = self.acked.entry(from).or_insert(clock);
                    *a = (*a).max(clock);
                }
                other => {
                    return Err(self.violation(format!(
                        "node {from} sent {other:?}, which this peer does not expect from it"
                    )))
                }
            },
        }
        self.progress(now)
    }

    fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn is_finished(&self) -> bool {
        self.phase == Phase::Done
    }

    fn waiting_on(&self) -> String {
        format!(
            "peer {} ({}) at iteration {} in phase {:?}: tokens {:?}, acks {:?}, {} updates queued",
            self.node,
            self.settings.label(),
            self.iter,
            self.phase,
            self.tokens,
            self.acked,
            self.queue.size(None, None)
        )
    }

    /// The iteration entered: a peer still waiting for tokens to enter `iter` is in `iter - 1`.
    fn iteration(&self) -> Option<u64> {
        Some(if self.phase == Phase::Entering {
            self.iter.saturating_sub(1)
        } else {
            self.iter
        })
    }
}
