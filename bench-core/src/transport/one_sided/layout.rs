//! Where things are in a one-sided backend's registered memory: the receive region (a
//! notification queue and a slot ring per sender, placed as [`crate::transport::region`]
//! places the shm segment), the staging a sender writes from (notification entries, then a
//! copy of each remote slot laid out as the remote ring), and reading a slot of the region.

use crate::transport::one_sided::send_window::STAGED_ENTRIES;
use crate::transport::one_sided::slot_write::payload_checksum;
use crate::transport::region::{place, slot_stride, ENTRY_WORDS, PAGE_WORDS};
use crate::transport::ring::{read_slot_with_check, slot_words};
use crate::transport::{NodeId, RingShape, SlotRead};
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;

/// Where a sender's queue and ring are in a receiver's region (word offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RegionEntry {
    pub(crate) queue: usize,
    pub(crate) ring: usize,
    pub(crate) capacity: usize,
    pub(crate) depth: usize,
}

/// The receive region of a node with a ring of the given shape per sender in `local`, each
/// with a queue of `queue` entries: every sender's entry, and the region's length in words
/// (at least a page).
pub(crate) fn region_layout(
    local: &HashMap<NodeId, RingShape>,
    queue: usize,
) -> (HashMap<NodeId, RegionEntry>, usize) {
    let mut senders: Vec<(NodeId, RingShape)> = local.iter().map(|(&f, &s)| (f, s)).collect();
    senders.sort_by_key(|s| s.0);
    let (placed, offset) = place(&senders, 0, queue);
    let layout = placed
        .into_iter()
        .zip(&senders)
        .map(|((_, p), &(from, shape))| {
            (
                from,
                RegionEntry {
                    queue: p.queue,
                    ring: p.ring,
                    capacity: shape.capacity,
                    depth: shape.depth,
                },
            )
        })
        .collect();
    (layout, offset.max(PAGE_WORDS))
}

/// Words of the staging a sender writes to a receiver from (`shape`: its ring there, if any):
/// the notification entries, then a copy of each remote slot laid out as the remote ring (the
/// same stride), so that one word offset names a segment in both.
pub(crate) fn staging_words(shape: Option<RingShape>) -> usize {
    STAGED_ENTRIES * ENTRY_WORDS + shape.map_or(0, |s| s.depth * slot_stride(s.capacity))
}

/// Reads slot `slot` of sender `from`'s ring in `region` (laid out as `e`), checking the
/// payload's checksum ([`payload_checksum`]).
pub(crate) fn read_region_slot(
    region: &[AtomicU64],
    e: &RegionEntry,
    slot: usize,
    out: &mut Vec<u64>,
) -> SlotRead {
    let start = e.ring + slot * slot_stride(e.capacity);
    let s = &region[start..start + slot_words(e.capacity)];
    let (mut read, checksum) = read_slot_with_check(s, e.capacity, out);
    read.checksum_ok = payload_checksum(out.iter().copied()) == checksum;
    read
}
