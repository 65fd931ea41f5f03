//! The notification queues: single-producer single-consumer rings of `[slot, version, imm0,
//! imm1]` entries in the receiver's segment; a full queue makes the sender wait (backpressure)
//! up to [`FULL_TIMEOUT`], then fail naming the receiver; the receiver polls its senders'
//! queues in a fixed order, fairly.

use super::super::region::entry_offset;
use super::super::{NodeId, Notification, IMM_WORDS};
use super::endpoint::*;
use super::segment::*;
use super::{FULL_TIMEOUT, QUEUE, QUEUE_WORDS};
use crate::error::{CoreError, Result, TransportFault};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

impl ShmEndpoint {
    pub(super) fn target(&self, to: NodeId) -> Result<&(Arc<Segment>, Entry)> {
        self.remote.get(&to).ok_or_else(|| {
            CoreError::transport(
                TransportFault::NoSuchPeer,
                format!(
                    "node {}: no ring registered at node {to} (or not connected)",
                    self.node
                ),
            )
        })
    }

    /// Appends a notification to `to`'s queue for this node, waiting while it is full.
    pub(super) fn push(
        &mut self,
        to: NodeId,
        slot: usize,
        version: u64,
        imm: [u64; IMM_WORDS],
    ) -> Result<()> {
        let node = self.node;
        let (seg, e) = self.target(to)?;
        let (seg, e) = (seg.clone(), *e);
        let w = &seg.words()[e.queue..e.queue + QUEUE_WORDS];
        let (tail, seen_head) = self.tails.entry(to).or_insert((0, 0));
        let t = *tail;
        if t - *seen_head >= QUEUE as u64 {
            let started = Instant::now();
            loop {
                *seen_head = w[0].load(Ordering::Acquire);
                if t - *seen_head < QUEUE as u64 {
                    break;
                }
                if started.elapsed() > FULL_TIMEOUT {
                    return Err(CoreError::transport(TransportFault::RingOverrun, format!(
                        "node {node}: node {to}'s queue stayed full for {} s (is it still running?)",
                        FULL_TIMEOUT.as_secs()
                    )));
                }
                std::thread::yield_now();
            }
        }
        let at = entry_offset(0, t as usize % QUEUE);
        for (i, v) in [slot as u64, version, imm[0], imm[1]]
            .into_iter()
            .enumerate()
        {
            w[at + 1 + i].store(v, Ordering::Relaxed);
        }
        w[at].store(t + 1, Ordering::Release);
        *tail = t + 1;
        Ok(())
    }

    /// Takes the next notification of any sender, polling them in turn.
    pub(super) fn pop(&mut self) -> Option<Notification> {
        let w = self.own.words();
        for k in 0..self.senders.len() {
            let i = (self.next_sender + k) % self.senders.len();
            let (from, e) = self.senders[i];
            let q = &w[e.queue..e.queue + QUEUE_WORDS];
            let h = self.heads[i];
            let at = entry_offset(0, h as usize % QUEUE);
            if q[at].load(Ordering::Acquire) != h + 1 {
                continue;
            }
            let v = |j: usize| q[at + 1 + j].load(Ordering::Relaxed);
            let n = Notification {
                from,
                slot: v(0) as usize,
                version: v(1),
                imm: [v(2), v(3)],
            };
            self.heads[i] = h + 1;
            q[0].store(h + 1, Ordering::Release);
            self.next_sender = (i + 1) % self.senders.len();
            return Some(n);
        }
        None
    }
}
