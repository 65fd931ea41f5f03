//! The end-of-run and flow-control exchange between one node and the nodes it has rings with,
//! as a sans-IO state machine: [`Links`] takes the link signals that arrive and says what to
//! post back; the node loop ([`super::node_loop`]) does the posting.
//!
//! * **End of run.** A node whose protocol finished posts [`Signal::Done`] to every node it has
//!   a ring to, and keeps receiving until every node with a ring to it has said done and every
//!   node it said done to has answered [`Signal::DoneAck`]. The transports deliver a
//!   notification after everything posted before it, so no message arrives after a done and no
//!   credit after its acknowledgement: nothing is ever posted to a node that left.
//! * **Failure.** A node that fails posts [`Signal::Stop`]; the receiver ends with
//!   [`CoreError::Stopped`] naming it instead of waiting for a timeout.
//! * **Credits.** A message occupies a slot of the receiver's ring until the receiver handled
//!   it, and one-sided writes cannot tell whether it has. A sender keeps at most `depth`
//!   messages unacknowledged per receiver; a receiver returns [`Signal::Credit`] each time it
//!   handled a quarter of a ring from one sender. A ring can then never be overrun.

use crate::error::{CoreError, Result};
use crate::protocol::NodeId;
use crate::transport::IMM_WORDS;

/// Notification words no protocol message encodes to (tags 0xFB-0xFE).
const DONE: [u64; IMM_WORDS] = [0xFE, 0x444F_4E45];
const STOP: [u64; IMM_WORDS] = [0xFD, 0x5354_4F50];
/// Tag of a credit return: `[CREDIT, slots freed]`.
const CREDIT: u64 = 0xFC;
const DONE_ACK: [u64; IMM_WORDS] = [0xFB, 0x4143_4B00];

/// A notification-only post that is a link signal, not a protocol message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// The sender's protocol finished; it posts nothing more but credits and acknowledgements.
    Done,
    /// Answer to a done: everything its sender posted here has been handled.
    DoneAck,
    /// The sender handled this many messages from the receiver since its last credit.
    Credit(u64),
    /// The sender failed.
    Stop,
}

impl Signal {
    /// The signal these notification words carry (`None`: a protocol message).
    pub fn decode(imm: [u64; IMM_WORDS]) -> Option<Self> {
        match imm {
            DONE => Some(Signal::Done),
            DONE_ACK => Some(Signal::DoneAck),
            STOP => Some(Signal::Stop),
            [CREDIT, freed] => Some(Signal::Credit(freed)),
            _ => None,
        }
    }

    /// The notification words of the signal.
    pub fn encode(self) -> [u64; IMM_WORDS] {
        match self {
            Signal::Done => DONE,
            Signal::DoneAck => DONE_ACK,
            Signal::Stop => STOP,
            Signal::Credit(freed) => [CREDIT, freed],
        }
    }
}

/// One node's view of its links: who said done, who acknowledged its done, credits.
#[derive(Debug, Clone)]
pub struct Links {
    node: NodeId,
    sends_to: Vec<NodeId>,
    hears_from: Vec<NodeId>,
    /// Messages handled from one sender before credits go back.
    credit_every: u64,
    done_from: Vec<bool>,
    acked_by: Vec<bool>,
    /// Messages posted to each node and not yet returned as credits.
    unacked: Vec<u64>,
    /// Messages handled from each node since the last credit return.
    handled: Vec<u64>,
}

impl Links {
    /// Links of `node` in a run of `nodes` nodes, with rings to `sends_to` and from
    /// `hears_from`, each `ring_depth` slots deep.
    pub fn new(
        node: NodeId,
        nodes: usize,
        sends_to: Vec<NodeId>,
        hears_from: Vec<NodeId>,
        ring_depth: usize,
    ) -> Self {
        Links {
            node,
            sends_to,
            hears_from,
            credit_every: (ring_depth as u64 / 4).max(1),
            done_from: vec![false; nodes],
            acked_by: vec![false; nodes],
            unacked: vec![0; nodes],
            handled: vec![0; nodes],
        }
    }

    /// Nodes this node has a ring to (it says done and stop to them).
    pub fn sends_to(&self) -> &[NodeId] {
        &self.sends_to
    }

    /// Takes a signal from `from`; returns the signal to post back to it, if any.
    ///
    /// # Errors
    /// [`CoreError::Stopped`] for [`Signal::Stop`].
    pub fn on_signal(&mut self, from: NodeId, signal: Signal) -> Result<Option<Signal>> {
        match signal {
            Signal::Done => {
                if let Some(d) = self.done_from.get_mut(from) {
                    *d = true;
                }
                // Everything it sent is handled: its ring needs no more credits.
                Ok(Some(Signal::DoneAck))
            }
            Signal::DoneAck => {
                if let Some(a) = self.acked_by.get_mut(from) {
                    *a = true;
                }
                Ok(None)
            }
            Signal::Credit(freed) => {
                if let Some(u) = self.unacked.get_mut(from) {
                    *u = u.saturating_sub(freed);
                }
                Ok(None)
            }
            Signal::Stop => Err(CoreError::Stopped {
                node: self.node,
                message: format!("node {from} failed"),
            }),
        }
    }

    /// Has `node` said done (it has finished and posts nothing more)?
    pub fn said_done(&self, node: NodeId) -> bool {
        self.done_from.get(node).copied().unwrap_or(false)
    }

    /// May one more message go to `to`, whose ring has `depth` slots?
    pub fn has_credit(&self, to: NodeId, depth: usize) -> bool {
        self.unacked.get(to).is_some_and(|&u| u < depth as u64)
    }

    /// One message was posted to `to`.
    pub fn posted(&mut self, to: NodeId) {
        if let Some(u) = self.unacked.get_mut(to) {
            *u += 1;
        }
    }

    /// One message from `from` was handled (its slot is free): the credits to return to it
    /// now, if a quarter ring is due and it has not said done.
    pub fn handled(&mut self, from: NodeId) -> Option<Signal> {
        if self.done_from.get(from).copied().unwrap_or(true) {
            return None;
        }
        let h = self.handled.get_mut(from)?;
        *h += 1;
        (*h >= self.credit_every).then(|| Signal::Credit(std::mem::take(h)))
    }

    /// After this node said done: the node its end still waits on (an in-neighbour that has
    /// not said done, then an out-neighbour that has not acknowledged), or `None` when the
    /// node may leave.
    pub fn ending_waits_on(&self) -> Option<NodeId> {
        self.hears_from
            .iter()
            .find(|&&f| !self.done_from[f])
            .or_else(|| self.sends_to.iter().find(|&&t| !self.acked_by[t]))
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Message;

    #[test]
    fn signals_round_trip_and_are_not_messages() {
        for s in [
            Signal::Done,
            Signal::DoneAck,
            Signal::Stop,
            Signal::Credit(4),
        ] {
            assert_eq!(Signal::decode(s.encode()), Some(s));
            assert!(Message::decode(s.encode(), 0).is_err(), "{s:?}");
        }
        let msg = Message::Update { clock: 3 }.encode();
        assert_eq!(Signal::decode(msg), None);
        assert_eq!(Signal::decode([DONE[0], 7]), None, "a done is exact");
    }

    #[test]
    fn credits_bound_what_is_in_flight() {
        // Node 0 sends to 1, whose ring has 8 slots: credits every 2 handled.
        let mut tx = Links::new(0, 2, vec![1], vec![], 8);
        let mut rx = Links::new(1, 2, vec![], vec![0], 8);
        for _ in 0..8 {
            assert!(tx.has_credit(1, 8));
            tx.posted(1);
        }
        assert!(!tx.has_credit(1, 8), "a full ring takes nothing more");
        assert_eq!(rx.handled(0), None);
        let credit = rx.handled(0).expect("a quarter ring handled");
        assert_eq!(credit, Signal::Credit(2));
        assert_eq!(tx.on_signal(1, credit).unwrap(), None);
        assert!(tx.has_credit(1, 8));
        assert!(!tx.has_credit(5, 8), "no ring to an unknown node");
    }

    #[test]
    fn a_run_ends_after_dones_and_acknowledgements() {
        // 0 <-> 1: each waits for the other's done, then for the ack of its own.
        let mut a = Links::new(0, 2, vec![1], vec![1], 4);
        let mut b = Links::new(1, 2, vec![0], vec![0], 4);
        assert_eq!(a.ending_waits_on(), Some(1));
        // a finishes and says done; b acknowledges and gives no more credits.
        let ack = b.on_signal(0, Signal::Done).unwrap();
        assert_eq!(ack, Some(Signal::DoneAck));
        assert!(b.said_done(0));
        assert_eq!(b.handled(0), None, "no credits to a node that said done");
        a.on_signal(1, ack.unwrap()).unwrap();
        assert_eq!(a.ending_waits_on(), Some(1), "b has not said done yet");
        let ack = a.on_signal(1, Signal::Done).unwrap().unwrap();
        assert_eq!(a.ending_waits_on(), None);
        assert_eq!(b.ending_waits_on(), Some(0), "b still needs its ack");
        b.on_signal(0, ack).unwrap();
        assert_eq!(b.ending_waits_on(), None);
    }

    #[test]
    fn a_stop_names_the_failed_node() {
        let mut a = Links::new(0, 3, vec![2], vec![2], 4);
        let e = a.on_signal(2, Signal::Stop).unwrap_err();
        assert!(matches!(e, CoreError::Stopped { node: 0, .. }), "{e}");
        assert!(e.to_string().contains("node 2 failed"), "{e}");
    }
}
