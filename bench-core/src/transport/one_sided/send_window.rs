//! One peer's send window: the work-request chains in flight on its queue pair and the
//! staging entries they read. The device reads a chain's staged bytes until the chain is
//! done, so nothing may be staged over them before that. A chain is done when every request
//! of it that asks a completion has completed: on one RC queue pair (verbs) requests complete
//! in posting order, so only the last one asks; a libfabric provider may complete them in any
//! order, so every one asks ([`super::send_tracker::Signaling`]). Chains may then also finish
//! out of order, so a notification entry is staged only once the chain that last read it is
//! done, not merely when fewer than [`STAGED_ENTRIES`] chains are in flight.

use super::wr_id::{decode, WrKind};
use std::collections::HashMap;

/// Send-queue entries per peer: what a queue pair (or an endpoint's transmit queue) is sized
/// for, and the most requests in flight to one peer.
pub(crate) const SEND_WRS: u32 = 1024;

/// Chains in flight at once per peer, and notification entries staged round-robin.
pub(crate) const STAGED_ENTRIES: usize = 64;

/// A chain in flight.
#[derive(Debug)]
struct Flight {
    /// Its final request's kind (a write's slot tag, or a notification).
    kind: WrKind,
    /// Send-queue entries it covers.
    wrs: u32,
    /// Completions still to come before it is done.
    pending: u32,
    /// The notification entry it stages, if any.
    entry: Option<usize>,
    /// Whether one of its completions so far was a failure.
    failed: bool,
}

/// What is in flight to one peer.
#[derive(Debug, Default)]
pub(crate) struct SendWindow {
    /// Request sequence number -> the chain it numbers.
    inflight: HashMap<u64, Flight>,
    /// Send-queue entries in flight.
    outstanding: u32,
    /// Notifications staged so far.
    sent: u64,
}

impl SendWindow {
    /// Whether a chain of `wrs` requests may be staged and posted now, one that stages the
    /// next notification entry when `notifies`.
    pub(crate) fn has_room(&self, wrs: u32, notifies: bool) -> bool {
        let entry = self.sent as usize % STAGED_ENTRIES;
        self.outstanding + wrs <= SEND_WRS
            && self.inflight.len() < STAGED_ENTRIES
            && !(notifies && self.inflight.values().any(|f| f.entry == Some(entry)))
    }

    /// Whether a write into a slot with tag `tag` is in flight (its staging is then busy).
    pub(crate) fn slot_busy(&self, tag: u8) -> bool {
        self.inflight.values().any(|f| f.kind == WrKind::Write(tag))
    }

    /// The next notification's number and its staging entry. Call only with room
    /// ([`SendWindow::has_room`] with `notifies`): no chain in flight reads the entry then.
    pub(crate) fn next_notification(&mut self) -> (u64, usize) {
        let t = self.sent;
        self.sent += 1;
        (t, t as usize % STAGED_ENTRIES)
    }

    /// A chain of `wrs` requests ending in `final_id` was posted; it is done after
    /// `completions` completions (1 when only its last request asks one); it stages `entry`.
    pub(crate) fn posted(
        &mut self,
        final_id: u64,
        wrs: u32,
        completions: u32,
        entry: Option<usize>,
    ) {
        let (_, kind, seq) = decode(final_id);
        self.outstanding += wrs;
        self.inflight.insert(
            seq,
            Flight {
                kind,
                wrs,
                pending: completions.max(1),
                entry,
                failed: false,
            },
        );
    }

    /// A completion of a request of the chain numbered as `wr_id` is (the final request's or,
    /// when every request asks one, any part's), `failed` or not. When it was the chain's
    /// last one to come, the chain is done and retired: returns whether any of its
    /// completions failed. None when the chain is still in flight or was not (unknown ids
    /// retire nothing).
    pub(crate) fn completed(&mut self, wr_id: u64, failed: bool) -> Option<bool> {
        let (_, _, seq) = decode(wr_id);
        let f = self.inflight.get_mut(&seq)?;
        f.failed |= failed;
        f.pending = f.pending.saturating_sub(1);
        if f.pending > 0 {
            return None;
        }
        let f = self.inflight.remove(&seq).expect("found above");
        self.outstanding = self.outstanding.saturating_sub(f.wrs);
        Some(f.failed)
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

    /// A random chain's requests and final kind: a write into `slot` (with a notification
    /// when `notify`), or post_notify's notification alone when there is no slot.
    fn chain_of(slot: Option<usize>, notify: bool) -> (u32, WrKind) {
        match slot {
            Some(s) => (
                SLOT_WRITE_WRS + u32::from(notify),
                WrKind::Write(slot_tag(s)),
            ),
            None => (1, WrKind::Notify),
        }
    }

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
                    let (wrs, kind) = chain_of(slot, notify);
                    if !w.has_room(wrs, notify) {
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
                    let id = encode(3, kind, seq);
                    w.posted(id, wrs, 1, entry);
                    fifo.push_back((id, entry, slot));
                } else if let Some((id, _, _)) = fifo.pop_front() {
                    assert_eq!(w.completed(id, false), Some(false));
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
            assert!(w.has_room(1, true));
            let (t, entry) = w.next_notification();
            assert_eq!((t, entry), (seq, seq as usize));
            let id = encode(1, WrKind::Notify, seq);
            w.posted(id, 1, 1, Some(entry));
            ids.push_back(id);
        }
        assert!(
            !w.has_room(1, true),
            "a 65th chain would restage entry 0 while it is read"
        );
        assert_eq!(w.completed(ids.pop_front().unwrap(), false), Some(false));
        assert!(w.has_room(1, true));
        assert_eq!(w.next_notification(), (STAGED_ENTRIES as u64, 0));
        assert_eq!(
            w.completed(encode(1, WrKind::Notify, 999), false),
            None,
            "unknown ids retire nothing"
        );
    }

    /// Every request signaled and completions in any order (a libfabric provider): a chain is
    /// done only at its last completion, and neither its slot's staging nor its notification
    /// entry is restaged before; a failure among its parts is reported when it is retired.
    #[test]
    fn out_of_order_completions_retire_a_chain_only_when_all_have_come() {
        let mut staged_checks = 0u64;
        for seed in 0..40u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut w = SendWindow::default();
            // Chains in flight: (final id, completions still to come, entry, slot).
            let mut flying: Vec<(u64, u32, Option<usize>, Option<usize>)> = Vec::new();
            let mut seq = 0u64;
            for _ in 0..6_000 {
                if rng.gen_bool(0.5) {
                    let slot = rng.gen_bool(0.7).then(|| rng.gen_range(0..40usize));
                    let notify = slot.is_none() || rng.gen_bool(0.6);
                    let (wrs, kind) = chain_of(slot, notify);
                    if !w.has_room(wrs, notify) {
                        continue;
                    }
                    if let Some(s) = slot {
                        if w.slot_busy(slot_tag(s)) {
                            continue;
                        }
                        assert!(flying.iter().all(|c| c.3 != Some(s)), "slot {s} restaged");
                    }
                    let entry = notify.then(|| w.next_notification().1);
                    if let Some(e) = entry {
                        assert!(flying.iter().all(|c| c.2 != Some(e)), "entry {e} restaged");
                        staged_checks += 1;
                    }
                    seq += 1;
                    let id = encode(3, kind, seq);
                    w.posted(id, wrs, wrs, entry);
                    flying.push((id, wrs, entry, slot));
                } else if !flying.is_empty() {
                    // any request of any chain completes next
                    let i = rng.gen_range(0..flying.len());
                    let (id, left, _, _) = flying[i];
                    let (peer, _, sq) = decode(id);
                    let part = encode(peer, WrKind::Part, sq);
                    let which = if rng.gen_bool(0.5) { id } else { part };
                    let got = w.completed(which, false);
                    if left == 1 {
                        assert_eq!(got, Some(false));
                        flying.swap_remove(i);
                    } else {
                        assert_eq!(got, None, "retired before its last completion");
                        flying[i].1 -= 1;
                    }
                }
                assert_eq!(w.in_flight(), flying.len());
            }
        }
        assert!(staged_checks > 10_000, "{staged_checks}");
        // a failed part is said when its chain is retired
        let mut w = SendWindow::default();
        let id = encode(1, WrKind::Write(0), 7);
        w.posted(id, 3, 3, None);
        assert_eq!(w.completed(encode(1, WrKind::Part, 7), true), None);
        assert_eq!(w.completed(id, false), None);
        assert_eq!(w.completed(encode(1, WrKind::Part, 7), false), Some(true));
    }

    /// Out of order, the oldest chain's notification entry still in flight keeps the next
    /// chain that would reuse it waiting, though far fewer than 64 chains are in flight.
    #[test]
    fn an_entry_in_flight_is_not_restaged_whatever_the_count() {
        let mut w = SendWindow::default();
        let mut ids = Vec::new();
        for seq in 0..STAGED_ENTRIES as u64 {
            let (_, entry) = w.next_notification();
            let id = encode(1, WrKind::Notify, seq);
            w.posted(id, 1, 1, Some(entry));
            ids.push(id);
        }
        // every chain but the first (entry 0) completes
        for id in &ids[1..] {
            assert_eq!(w.completed(*id, false), Some(false));
        }
        assert_eq!(w.in_flight(), 1);
        assert!(!w.has_room(1, true), "entry 0 is still read");
        assert!(
            w.has_room(1, false),
            "a chain without a notification may go"
        );
        assert_eq!(w.completed(ids[0], false), Some(false));
        assert!(w.has_room(1, true));
    }
}
