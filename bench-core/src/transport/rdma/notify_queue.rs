//! The receive side's notification queue: a WRITE_WITH_IMM's receive completion names the
//! queue entry its sender wrote; entries are accepted in the sender's order, an out-of-order
//! one is reported and skipped, and each consumed receive request is reposted.

use super::completion::status_name;
use super::endpoint::*;
use super::QUEUE;
use crate::error::TransportFault;
use crate::transport::region::{entry_offset, ENTRY_WORDS};
use crate::transport::Notification;
use ibverbs_sys as ffi;
use std::sync::atomic::Ordering;

impl RdmaEndpoint {
    pub(super) fn pop(&mut self) -> Option<Notification> {
        let mut wc = [ffi::ibv_wc::default(); 1];
        if self.recv_cq.poll(&mut wc) == 0 {
            return None;
        }
        let c = wc[0];
        let from = *self.by_qpn.get(&c.qp_num)?;
        if let Some((status, vendor)) = c.error() {
            self.sends.record(
                TransportFault::PeerLost,
                format!(
                    "node {}: the connection from node {from} failed: {}, vendor error {vendor}",
                    self.node,
                    status_name(status)
                ),
            );
            return None;
        }
        let e = *self.senders.get(&from)?;
        let h = self.heads.get_mut(&from)?;
        let t = c.imm_data().map(u32::from_be);
        let at = entry_offset(e.queue, entry_index(t, *h));
        let w = &self.region.words().as_slice()[at..at + ENTRY_WORDS];
        let v = |j: usize| w[j].load(Ordering::Acquire);
        let (expected, next) = accept_entry(t, *h, v(0));
        *h = next;
        let note = expected.then(|| Notification {
            from,
            slot: v(1) as usize,
            version: v(2),
            imm: [v(3), v(4)],
        });
        if !expected {
            self.sends.record(
                TransportFault::Malformed,
                format!(
                    "node {}: notification {next} from node {from} arrived out of order (entry holds {})",
                    self.node,
                    v(0)
                ),
            );
        }
        // The receive request was consumed either way: repost it, or the sender would
        // eventually stall on a queue with no receive posted.
        if let Err(e) = self.post_recv(from) {
            self.sends.record(TransportFault::Device, e.to_string());
        }
        note
    }
}

/// The queue entry a notification's receive completion names: the one of its immediate (the
/// sender's notification number), else the next expected from the sender (`head`), so that a
/// number the sender skipped (a post it gave up) does not shift every later notification onto
/// its predecessor's entry.
pub(super) fn entry_index(imm: Option<u32>, head: u64) -> usize {
    imm.map_or(head as usize, |t| t as usize) % QUEUE
}

/// Whether the queue entry whose first word is `word` holds the notification announced (the
/// entry of number t holds t + 1; without an immediate, the one after `head`), and the head
/// after it: the entry's number when it does; else `head + 1`, the entry skipped (an
/// out-of-order notification: reported, and its receive request reposted all the same).
pub(super) fn accept_entry(imm: Option<u32>, head: u64, word: u64) -> (bool, u64) {
    let expected = match imm {
        Some(t) => word as u32 == t.wrapping_add(1),
        None => word == head + 1,
    };
    (expected, if expected { word } else { head + 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_out_of_order_entry_is_skipped_and_the_head_moves_on_by_one() {
        // In order, by the immediate: notification 4 is in entry 4, which holds 5.
        assert_eq!(entry_index(Some(4), 0), 4);
        assert_eq!(accept_entry(Some(4), 4, 5), (true, 5));
        // A number the sender skipped (a post it gave up) does not shift the next one.
        assert_eq!(accept_entry(Some(6), 5, 7), (true, 7));
        // Without an immediate: the entry after the head.
        assert_eq!(entry_index(None, 9), 9);
        assert_eq!(accept_entry(None, 9, 10), (true, 10));
        // The entry holds something else: skipped, reported, and the head moves on by one
        // (pop reposts the receive request on both paths).
        assert_eq!(accept_entry(Some(4), 4, 3), (false, 5));
        assert_eq!(accept_entry(None, 9, 0), (false, 10));
        // Numbers wrap the queue's entries, and the immediate's 32 bits.
        assert_eq!(entry_index(Some(QUEUE as u32 + 3), 0), 3);
        assert_eq!(entry_index(None, QUEUE as u64 * 2 + 1), 1);
        assert_eq!(accept_entry(Some(u32::MAX), 7, 1 << 32), (true, 1 << 32));
    }
}
