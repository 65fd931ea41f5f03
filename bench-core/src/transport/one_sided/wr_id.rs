//! Work-request ids: every request posted names its peer and what it is, so that a completion
//! (an error one above all: unsignaled requests complete only when they fail) is attributed
//! to the right peer and never taken for a finished write.
//!
//! Layout: bits 48-63 the peer, bits 40-47 the kind (a write's slot tag, a notification, or a
//! non-final part of a chain), bits 0-39 the endpoint's request sequence number.

use crate::transport::NodeId;

/// What a request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WrKind {
    /// The final request of a write chain into a slot with this tag ([`slot_tag`]).
    Write(u8),
    /// A notification alone (post_notify).
    Notify,
    /// A request before the final one of a chain (unsignaled: it completes only on error).
    Part,
}

const NOTIFY: u64 = 0xFE;
const PART: u64 = 0xFF;
/// Slot tags take the kind values below [`NOTIFY`].
const SLOT_TAGS: usize = 0xFE;
const SEQ_BITS: u32 = 40;

/// The tag of `slot`: writes to slots with one tag wait for each other's staging (never a
/// notification's, whose kind no slot shares).
pub(crate) fn slot_tag(slot: usize) -> u8 {
    (slot % SLOT_TAGS) as u8
}

/// The id of request `seq` of kind `kind` to `peer` (peers below 2^16).
pub(crate) fn encode(peer: NodeId, kind: WrKind, seq: u64) -> u64 {
    let k = match kind {
        WrKind::Write(tag) => u64::from(tag).min(SLOT_TAGS as u64 - 1),
        WrKind::Notify => NOTIFY,
        WrKind::Part => PART,
    };
    ((peer as u64 & 0xFFFF) << 48) | (k << SEQ_BITS) | (seq & ((1 << SEQ_BITS) - 1))
}

/// The peer, kind and sequence number of id `id`.
pub(crate) fn decode(id: u64) -> (NodeId, WrKind, u64) {
    let kind = match (id >> SEQ_BITS) & 0xFF {
        NOTIFY => WrKind::Notify,
        PART => WrKind::Part,
        tag => WrKind::Write(tag as u8),
    };
    ((id >> 48) as NodeId, kind, id & ((1 << SEQ_BITS) - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_notifications_never_share_a_slot_tag() {
        for peer in [0usize, 1, 17, 65_535] {
            for slot in [0usize, 1, 253, 254, 255, 256, 10_000] {
                for seq in [0u64, 1, (1 << 40) - 1] {
                    let k = WrKind::Write(slot_tag(slot));
                    assert_eq!(decode(encode(peer, k, seq)), (peer, k, seq));
                }
            }
            assert_eq!(
                decode(encode(peer, WrKind::Notify, 9)),
                (peer, WrKind::Notify, 9)
            );
            assert_eq!(
                decode(encode(peer, WrKind::Part, 9)),
                (peer, WrKind::Part, 9)
            );
        }
        for slot in 0..100_000 {
            let t = slot_tag(slot);
            assert!(
                u64::from(t) != NOTIFY && u64::from(t) != PART,
                "slot {slot}"
            );
        }
        // A part of a chain to peer 3 is blamed on peer 3, not on node 0.
        assert_eq!(decode(encode(3, WrKind::Part, 0)).0, 3);
    }
}
