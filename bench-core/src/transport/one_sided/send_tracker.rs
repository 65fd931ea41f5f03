//! The send side's bookkeeping, apart from the verbs that carry it out: which chains may be
//! staged and posted now, what every send completion means (a finished write, a failure that
//! names its peer, a part of a chain), which peers are given up, and teardown's reaping.
//! [`SendTracker`] makes every one of these decisions and calls the verbs through
//! [`SendVerbs`]: the endpoint implements it on its queue pairs and send completion queue
//! (`ibv_post_send`, `ibv_poll_cq`, the move to the error state), the tests on a mock that
//! delays completions, reorders them across queue pairs, fails them and refuses posts part-way,
//! as a device may.

use super::send_window::SendWindow;
use super::slot_write::SLOT_WRITE_WRS;
use super::wr_id::{decode, encode, slot_tag, WrKind};
use crate::error::{CoreError, Result, TransportFault};
use crate::transport::{Completion, NodeId};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// How long a post waits for room in its peer's window, or for its slot's previous write.
const PATIENCE: Duration = Duration::from_secs(30);

/// Send completions read per poll.
const POLL_BATCH: usize = 16;

/// `IBV_WC_SUCCESS`.
const SUCCESS: u32 = 0;

/// A send completion: the request's id, its status (`ibv_wc_status`, [`SUCCESS`] or an
/// error) and the vendor's syndrome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Wc {
    pub wr_id: u64,
    pub status: u32,
    pub vendor_err: u32,
}

/// A post the verbs refused: `ibv_post_send` returned `errno`, and the requests before the one
/// it named in `bad_wr`, `posted` of them, went out all the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PostError {
    pub errno: i32,
    pub posted: usize,
}

/// The verbs the send side calls, on the queue pair to each peer.
pub(crate) trait SendVerbs {
    /// A work request as these verbs take it.
    type Wr;

    /// A failed completion's status and vendor (provider) error, in words.
    fn status_text(&self, status: u32, vendor_err: u32) -> String;

    /// Posts `chain`, linked in order, on the queue pair to `peer`.
    ///
    /// # Errors
    /// The verbs refused the post, with how many requests (from the first) went out.
    ///
    /// # Safety
    /// As [`super::queue_pair::ConnectedQp::post_send`]: the memory every request names stays
    /// registered and unchanged until the completion of the chain's final request has been
    /// polled.
    unsafe fn post_send(
        &mut self,
        peer: NodeId,
        chain: &mut [Self::Wr],
    ) -> std::result::Result<(), PostError>;

    /// Reads up to `out.len()` send completions into `out`; returns how many.
    fn poll_send(&mut self, out: &mut [Wc]) -> usize;

    /// Moves the queue pair to `peer` to the error state: what is queued completes flushed.
    fn enter_error_state(&mut self, peer: NodeId);
}

/// Which requests of a chain ask for a completion, as the fabric needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signaling {
    /// Only the last. On one RC queue pair (verbs) requests complete in posting order, so
    /// the last completion says the whole chain is done; the parts complete only on error.
    Last,
    /// Every one. A libfabric provider may complete a chain's requests in any order: shm
    /// completes an inline footer or notification inside the post while the payload stays
    /// pending until the target has copied it, so the last request's completion would free
    /// staging the provider still reads. The chain is done when all have completed.
    Every,
}

/// A chain of work requests, as the endpoint posts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chain {
    /// A slot write (header, length and payload, footer: [`super::slot_write`]), with a
    /// notification as its last request or without.
    Write { slot: usize, notify: bool },
    /// A notification alone (post_notify).
    Notify,
}

impl Chain {
    /// Requests in the chain.
    fn requests(self) -> u32 {
        match self {
            Chain::Write { notify, .. } => SLOT_WRITE_WRS + u32::from(notify),
            Chain::Notify => 1,
        }
    }
}

/// A chain admitted for staging and posting ([`SendTracker::admit`]): nothing in flight reads
/// its notification entry or its slot's staging any more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Admitted {
    /// The peer.
    pub to: NodeId,
    /// The id post_write and post_notify return, and that the write's completion carries.
    pub id: u64,
    /// The work-request id of the chain's final (signaled) request.
    pub final_id: u64,
    /// The work-request id of the requests before it (unsignaled).
    part_id: u64,
    /// Requests in the chain.
    pub requests: u32,
    /// With a notification: its number and the staging entry it is staged in.
    pub notification: Option<(u64, usize)>,
    /// Whether every request asks a completion ([`Signaling::Every`]).
    every: bool,
}

impl Admitted {
    /// The work-request id of request `i` of the chain and whether it is signaled: the last
    /// request carries the chain's final id, the others the part id; under
    /// [`Signaling::Last`] only the last is signaled (parts complete only when they fail),
    /// under [`Signaling::Every`] all are.
    pub(crate) fn request(&self, i: usize) -> (u64, bool) {
        debug_assert!(
            i < self.requests as usize,
            "request {i} of {}",
            self.requests
        );
        if i + 1 == self.requests as usize {
            (self.final_id, true)
        } else {
            (self.part_id, self.every)
        }
    }
}

/// What a post waits for.
#[derive(Debug, Clone, Copy)]
enum Wait {
    /// Room in the peer's window for a chain of this many requests (staging a notification
    /// entry when true).
    Room(u32, bool),
    /// No write into a slot with this tag in flight.
    Slot(u8),
}

/// One peer's sends.
#[derive(Debug, Default)]
struct PeerSends {
    /// Chains in flight and the staging they read.
    window: SendWindow,
    /// The connection failed (a refused post or a failed completion): its queue pair is in
    /// the error state, and sends to it are refused.
    dead: bool,
}

/// The send side of one endpoint: per peer what is in flight and whether it failed; the
/// writes finished and not yet taken; every failure noticed.
#[derive(Debug)]
pub(crate) struct SendTracker {
    /// The backend's name, which every message starts with (`rdma`, `ofi`).
    fabric: &'static str,
    node: NodeId,
    signaling: Signaling,
    peers: HashMap<NodeId, PeerSends>,
    /// The last request sequence number handed out.
    next_wr: u64,
    /// Finished writes and notifications, oldest first.
    done: VecDeque<Completion>,
    /// Failures, first first (health() reports the first).
    failures: Vec<(TransportFault, String)>,
}

impl SendTracker {
    /// The send side of node `node` of backend `fabric` (the name its messages start with),
    /// whose chains ask completions as `signaling` says, with no peers yet.
    pub(crate) fn new(fabric: &'static str, node: NodeId, signaling: Signaling) -> Self {
        SendTracker {
            fabric,
            node,
            signaling,
            peers: HashMap::new(),
            next_wr: 0,
            done: VecDeque::new(),
            failures: Vec::new(),
        }
    }

    /// A device-level failure, named `<fabric>: ...`.
    fn err(&self, what: impl std::fmt::Display) -> CoreError {
        CoreError::transport(TransportFault::Device, format!("{}: {what}", self.fabric))
    }

    /// The error of a post to a peer given up earlier.
    fn given_up(&self, to: NodeId) -> CoreError {
        CoreError::transport(
            TransportFault::PeerLost,
            format!(
                "{}: node {}: the connection to node {to} failed earlier",
                self.fabric, self.node
            ),
        )
    }

    /// The error of a post to a node without a queue pair.
    fn no_peer(&self, to: NodeId) -> CoreError {
        self.err(format!("node {}: no connection to node {to}", self.node))
    }

    /// A queue pair to `peer` is connected.
    pub(crate) fn add_peer(&mut self, peer: NodeId) {
        self.peers.entry(peer).or_default();
    }

    /// Every failure noticed, first first.
    pub(crate) fn failures(&self) -> &[(TransportFault, String)] {
        &self.failures
    }

    /// Records a failure noticed elsewhere (the receive side), after those noticed before.
    pub(crate) fn record(&mut self, fault: TransportFault, message: String) {
        self.failures.push((fault, message));
    }

    /// Waits (polling completions through `verbs`) until `chain` may be staged and posted to
    /// `to`: room in the send queue and fewer than [`super::send_window::STAGED_ENTRIES`]
    /// chains in flight, so that the notification entry about to be staged is no longer read
    /// by the device, and for a write no write into its slot's tag in flight. Then hands out
    /// the chain's ids and its notification's number and entry.
    ///
    /// # Errors
    /// The peer failed (earlier, or while waiting), or nothing completed for 30 s.
    pub(crate) fn admit<V: SendVerbs>(
        &mut self,
        verbs: &mut V,
        to: NodeId,
        chain: Chain,
    ) -> Result<Admitted> {
        let requests = chain.requests();
        let stages_entry = match chain {
            Chain::Write { notify, .. } => notify,
            Chain::Notify => true,
        };
        self.wait(verbs, to, Wait::Room(requests, stages_entry))?;
        let (kind, notify) = match chain {
            Chain::Write { slot, notify } => {
                let tag = slot_tag(slot);
                // Polling only retires chains: the room found above stays.
                self.wait(verbs, to, Wait::Slot(tag))?;
                (WrKind::Write(tag), notify)
            }
            Chain::Notify => (WrKind::Notify, true),
        };
        let Some(p) = self.peers.get_mut(&to) else {
            return Err(self.no_peer(to));
        };
        let notification = notify.then(|| p.window.next_notification());
        self.next_wr += 1;
        let id = self.next_wr;
        Ok(Admitted {
            to,
            id,
            final_id: encode(to, kind, id),
            part_id: encode(to, WrKind::Part, id),
            requests,
            notification,
            every: self.signaling == Signaling::Every,
        })
    }

    /// Polls until `what` holds for `to`; refuses at once, or as soon as it happens, when the
    /// peer fails.
    fn wait<V: SendVerbs>(&mut self, verbs: &mut V, to: NodeId, what: Wait) -> Result<()> {
        let mut started: Option<Instant> = None;
        loop {
            let node = self.node;
            let Some(p) = self.peers.get(&to) else {
                return Err(self.no_peer(to));
            };
            if p.dead {
                return Err(self.given_up(to));
            }
            let ready = match what {
                Wait::Room(wrs, entry) => p.window.has_room(wrs, entry),
                Wait::Slot(tag) => !p.window.slot_busy(tag),
            };
            if ready {
                return Ok(());
            }
            if started.get_or_insert_with(Instant::now).elapsed() > PATIENCE {
                return Err(self.err(match what {
                    Wait::Room(..) => format!(
                        "node {node}: no send completions from node {to} for {} s",
                        PATIENCE.as_secs()
                    ),
                    Wait::Slot(_) => format!("node {node}: a write to node {to} never completed"),
                }));
            }
            self.poll(verbs);
        }
    }

    /// Posts `chain`, built from `admitted` (request `i` carrying
    /// [`Admitted::request`]`(i)`), on the queue pair to its peer, and records it in flight.
    /// A refusal gives the peer up: its queue pair goes to the error state (what went out is
    /// flushed), the failure is recorded naming the peer and how many requests went out, and
    /// later posts to the peer are refused.
    ///
    /// # Errors
    /// The peer failed earlier, or the verbs refused the post.
    ///
    /// # Safety
    /// As [`SendVerbs::post_send`]: the memory the chain names stays registered and unchanged
    /// until the chain's final completion has been polled. Staging written only for chains
    /// this tracker admitted, after [`SendTracker::admit`] returned, keeps the second half:
    /// a chain is admitted only when no chain in flight reads its entry or its slot.
    pub(crate) unsafe fn post<V: SendVerbs>(
        &mut self,
        verbs: &mut V,
        admitted: &Admitted,
        chain: &mut [V::Wr],
    ) -> Result<()> {
        debug_assert_eq!(
            chain.len(),
            admitted.requests as usize,
            "a chain as admitted"
        );
        let (node, to) = (self.node, admitted.to);
        if !self.peers.contains_key(&to) {
            return Err(self.no_peer(to));
        }
        if self.peers[&to].dead {
            return Err(self.given_up(to));
        }
        let p = self.peers.get_mut(&to).expect("checked above");
        // SAFETY: the caller's obligation (above).
        match unsafe { verbs.post_send(to, chain) } {
            Ok(()) => {
                let completions = if admitted.every { admitted.requests } else { 1 };
                p.window.posted(
                    admitted.final_id,
                    admitted.requests,
                    completions,
                    admitted.notification.map(|n| n.1),
                );
                Ok(())
            }
            Err(refused) => {
                // The connection is given up: to the error state (what went out is flushed),
                // and later posts to this peer are refused rather than staged over requests
                // the device may still read.
                verbs.enter_error_state(to);
                p.dead = true;
                let message = format!(
                    "node {node}: posting to node {to} failed after {} of {} requests: {}",
                    refused.posted.min(chain.len()),
                    chain.len(),
                    std::io::Error::from_raw_os_error(refused.errno)
                );
                self.failures
                    .push((TransportFault::Device, message.clone()));
                Err(self.err(message))
            }
        }
    }

    /// Polls the send completions once and takes each into account.
    fn poll<V: SendVerbs>(&mut self, verbs: &mut V) {
        let mut wc = [Wc::default(); POLL_BATCH];
        let n = verbs.poll_send(&mut wc).min(POLL_BATCH);
        for &c in &wc[..n] {
            self.complete(verbs, c);
        }
    }

    /// One send completion: the last of its chain to come (the final request's under
    /// [`Signaling::Last`], any request's under [`Signaling::Every`]) retires the chain, a
    /// finished write when none of its completions failed; the first failure of a peer, of
    /// any request, gives the peer up and is recorded naming it, once.
    fn complete<V: SendVerbs>(&mut self, verbs: &V, c: Wc) {
        let (peer, kind, seq) = decode(c.wr_id);
        let node = self.node;
        let Some(p) = self.peers.get_mut(&peer) else {
            return;
        };
        let failed = c.status != SUCCESS;
        if failed && !std::mem::replace(&mut p.dead, true) {
            let what = match kind {
                WrKind::Write(_) => "a write",
                WrKind::Notify => "a notification",
                WrKind::Part => "part of a write",
            };
            self.failures.push((
                TransportFault::PeerLost,
                format!(
                    "node {node}: {what} to node {peer} (request {seq}) failed: {}: peer lost or unreachable",
                    verbs.status_text(c.status, c.vendor_err)
                ),
            ));
        }
        // Under Signaling::Last the parts are unsignaled: they complete only on error and
        // count for nothing. A chain retired with a failure (nothing reads its staging any
        // more) is reported through health(), not as a completion.
        let counts = kind != WrKind::Part || self.signaling == Signaling::Every;
        if counts && p.window.completed(c.wr_id, failed) == Some(false) {
            self.done.push_back(Completion { wr_id: seq });
        }
    }

    /// The next finished write or notification, polling once when none is waiting.
    pub(crate) fn poll_completion<V: SendVerbs>(&mut self, verbs: &mut V) -> Option<Completion> {
        if self.done.is_empty() {
            self.poll(verbs);
        }
        self.done.pop_front()
    }

    /// Chains in flight to peers not given up.
    fn in_flight_to_live_peers(&self) -> usize {
        self.peers
            .values()
            .filter(|p| !p.dead)
            .map(|p| p.window.in_flight())
            .sum()
    }

    /// Teardown: polls (for up to `deadline`) until no chain to a live peer is in flight, so
    /// that a final write (a DONE or STOP) whose packet was lost is retransmitted rather than
    /// destroyed with its queue pair, then moves every queue pair to the error state (what is
    /// left is flushed). Returns how many chains to live peers were abandoned at the deadline.
    pub(crate) fn teardown<V: SendVerbs>(&mut self, verbs: &mut V, deadline: Duration) -> usize {
        let started = Instant::now();
        while self.in_flight_to_live_peers() > 0 && started.elapsed() < deadline {
            self.poll(verbs);
            std::thread::yield_now();
        }
        let abandoned = self.in_flight_to_live_peers();
        for &peer in self.peers.keys() {
            verbs.enter_error_state(peer);
        }
        abandoned
    }

    /// Chains in flight to `peer`.
    #[cfg(test)]
    pub(crate) fn in_flight(&self, peer: NodeId) -> usize {
        self.peers.get(&peer).map_or(0, |p| p.window.in_flight())
    }
}

#[cfg(test)]
#[path = "send_tracker_tests.rs"]
mod tests;
