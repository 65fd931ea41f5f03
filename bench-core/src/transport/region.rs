//! The layout of a receive region, shared by the backends whose senders write into one block of
//! a receiver's memory (shm: a file-backed segment; rdma: a registered memory region): for each
//! sender in node order, a notification queue (its consumer index on a cache line of its own,
//! then one cache line per entry) on whole pages, then its ring of slots, each slot on whole
//! pages. Only the queue's entry count differs between the backends.

use super::ring::slot_words;
use super::{NodeId, RingShape};

/// Words in a page (slots and queues start on page boundaries).
pub(crate) const PAGE_WORDS: usize = super::aligned::PAGE / 8;
/// One cache line per queue entry.
pub(crate) const ENTRY_WORDS: usize = 8;

/// `words` rounded up to whole pages.
pub(crate) fn round_page(words: usize) -> usize {
    words.next_multiple_of(PAGE_WORDS)
}

/// Words of a queue of `entries` entries: the consumer index on its own line, then the entries.
pub(crate) const fn queue_words(entries: usize) -> usize {
    8 + entries * ENTRY_WORDS
}

/// Word offset of entry `index` of the queue that starts at `queue`.
pub(crate) const fn entry_offset(queue: usize, index: usize) -> usize {
    queue + 8 + index * ENTRY_WORDS
}

/// Words from one slot of a ring of `capacity`-word slots to the next (whole pages).
pub(crate) fn slot_stride(capacity: usize) -> usize {
    round_page(slot_words(capacity))
}

/// Where one sender's queue and ring start (word offsets in the region).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placement {
    pub(crate) queue: usize,
    pub(crate) ring: usize,
}

/// Places each sender's queue of `entries` entries and ring, in the order given, from word
/// `start` on; returns the placements and the word where the region ends.
pub(crate) fn place(
    senders: &[(NodeId, RingShape)],
    start: usize,
    entries: usize,
) -> (Vec<(NodeId, Placement)>, usize) {
    let mut offset = start;
    let mut out = Vec::with_capacity(senders.len());
    for &(from, shape) in senders {
        let queue = offset;
        offset += round_page(queue_words(entries));
        let ring = offset;
        offset += shape.depth * slot_stride(shape.capacity);
        out.push((from, Placement { queue, ring }));
    }
    (out, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_and_slots_start_on_pages_in_sender_order() {
        let shape = |capacity, depth| RingShape { capacity, depth };
        let (placed, end) = place(&[(3, shape(10, 2)), (5, shape(1000, 1))], 0, 4);
        assert_eq!(
            placed[0],
            (
                3,
                Placement {
                    queue: 0,
                    ring: PAGE_WORDS
                }
            )
        );
        // Sender 3's ring: two slots of 13 words, one page each.
        let q5 = PAGE_WORDS + 2 * PAGE_WORDS;
        assert_eq!(
            placed[1],
            (
                5,
                Placement {
                    queue: q5,
                    ring: q5 + PAGE_WORDS
                }
            )
        );
        assert_eq!(end, q5 + PAGE_WORDS + round_page(1003));
        assert_eq!(entry_offset(q5, 2), q5 + 8 + 16);
        assert_eq!(queue_words(4), 40);
    }
}
