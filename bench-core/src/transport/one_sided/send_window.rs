//! One peer's send window: the work-request chains in flight on its queue pair and the
//! staging entries they read. The device reads a chain's staged bytes until the chain's
//! final (signaled) request completes, so nothing may be staged over them before that.
//! Chains complete in the order they were posted (one RC queue pair), which is what makes the
//! rule "stage only when fewer than [`STAGED_ENTRIES`] chains are in flight" enough for the
//! notification entries, used round-robin.

use super::wr_id::{decode, WrKind};
use std::collections::HashMap;

/// Send-queue entries per peer: what a queue pair (or an endpoint's transmit queue) is sized
/// for, and the most requests in flight to one peer.
pub(crate) const SEND_WRS: u32 = 1024;

/// Chains in flight at once per peer, and notification entries staged round-robin.
pub(crate) const STAGED_ENTRIES: usize = 64;

/// What is in flight to one peer.
#[derive(Debug, Default)]
pub(crate) struct SendWindow {
    /// Final request id -> send-queue entries its chain covers.
    inflight: HashMap<u64, u32>,
    /// Send-queue entries in flight.
    outstanding: u32,
    /// Notifications staged so far.
    sent: u64,
}

impl SendWindow {
    /// Whether a chain of `wrs` requests may be staged and posted now.
    pub(crate) fn has_room(&self, wrs: u32) -> bool {
        self.outstanding + wrs <= SEND_WRS && self.inflight.len() < STAGED_ENTRIES
    }

    /// Whether a write into a slot with tag `tag` is in flight (its staging is then busy).
    pub(crate) fn slot_busy(&self, tag: u8) -> bool {
        self.inflight
            .keys()
            .any(|&k| decode(k).1 == WrKind::Write(tag))
    }

    /// The next notification's number and its staging entry. Call only with room
    /// ([`SendWindow::has_room`]): the entry's previous chain has then completed.
    pub(crate) fn next_notification(&mut self) -> (u64, usize) {
        let t = self.sent;
        self.sent += 1;
        (t, t as usize % STAGED_ENTRIES)
    }

    /// A chain of `wrs` requests ending in `final_id` was posted.
    pub(crate) fn posted(&mut self, final_id: u64, wrs: u32) {
        self.outstanding += wrs;
        self.inflight.insert(final_id, wrs);
    }

    /// The chain ending in `final_id` completed; false when it was not in flight.
    pub(crate) fn completed(&mut self, final_id: u64) -> bool {
        match self.inflight.remove(&final_id) {
            Some(wrs) => {
                self.outstanding = self.outstanding.saturating_sub(wrs);
                true
            }
            None => false,
        }
    }

    /// Chains in flight.
    pub(crate) fn in_flight(&self) -> usize {
        self.inflight.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::slot_write::SLOT_WRITE_WRS;
    use super::super::wr_id::{encode, slot_tag};
    use super::*;
    use rand::{Rng, SeedableRng};
    use std::collections::VecDeque;

    /// Posts and in-order completions at random: no staging entry and no slot's staging is
    /// written while a chain that reads it is in flight.
    #[test]
    fn no_staging_entry_is_rewritten_while_in_flight() {
        let mut staged_checks = 0u64;
        for seed in 0..40u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            // Half the seeds send notifications only (post_notify): every chain in flight
            // then holds an entry, which is where an off-by-one in has_room would show.
            let notify_only = seed % 2 == 1;
            let mut w = SendWindow::default();
            // Chains in flight, oldest first: (final id, notification entry, slot).
            let mut fifo: VecDeque<(u64, Option<usize>, Option<usize>)> = VecDeque::new();
            let mut seq = 0u64;
            for _ in 0..5_000 {
                if rng.gen_bool(0.55) {
                    let slot =
                        (!notify_only && rng.gen_bool(0.8)).then(|| rng.gen_range(0..300usize));
                    // A chain without a slot is post_notify's, which always stages an entry.
                    let notify = slot.is_none() || rng.gen_bool(0.6);
                    let wrs = if slot.is_some() {
                        SLOT_WRITE_WRS + u32::from(notify)
                    } else {
                        1
                    };
                    if !w.has_room(wrs) {
                        continue;
                    }
                    if let Some(s) = slot {
                        if w.slot_busy(slot_tag(s)) {
                            continue; // the endpoint polls until it is free
                        }
                        assert!(
                            fifo.iter().all(|c| c.2 != Some(s)),
                            "slot {s} restaged in flight"
                        );
                    }
                    let entry = notify.then(|| w.next_notification().1);
                    if let Some(e) = entry {
                        assert!(
                            fifo.iter().all(|c| c.1 != Some(e)),
                            "entry {e} restaged in flight"
                        );
                        staged_checks += 1;
                    }
                    seq += 1;
                    let kind = match slot {
                        Some(s) => WrKind::Write(slot_tag(s)),
                        None => WrKind::Notify,
                    };
                    let id = encode(3, kind, seq);
                    w.posted(id, wrs);
                    fifo.push_back((id, entry, slot));
                } else if let Some((id, _, _)) = fifo.pop_front() {
                    assert!(w.completed(id));
                }
                assert_eq!(w.in_flight(), fifo.len());
            }
        }
        assert!(staged_checks > 10_000, "{staged_checks}");
    }

    /// At the boundary: 64 notifications in flight leave no room; the oldest completing
    /// frees exactly its entry for the next one.
    #[test]
    fn the_window_is_full_at_64_chains_and_the_freed_entry_is_the_next() {
        let mut w = SendWindow::default();
        let mut ids = VecDeque::new();
        for seq in 0..STAGED_ENTRIES as u64 {
            assert!(w.has_room(1));
            assert_eq!(w.next_notification(), (seq, seq as usize));
            let id = encode(1, WrKind::Notify, seq);
            w.posted(id, 1);
            ids.push_back(id);
        }
        assert!(
            !w.has_room(1),
            "a 65th chain would restage entry 0 while it is read"
        );
        assert!(w.completed(ids.pop_front().unwrap()));
        assert!(w.has_room(1));
        assert_eq!(w.next_notification(), (STAGED_ENTRIES as u64, 0));
        assert!(
            !w.completed(encode(1, WrKind::Notify, 999)),
            "unknown ids retire nothing"
        );
    }
}
