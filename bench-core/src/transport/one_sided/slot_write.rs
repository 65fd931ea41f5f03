//! The RDMA WRITEs of one slot write, in posting order: the seqlock's header word alone, then
//! the length and payload, then the footer word. Bytes inside one WRITE may be placed at the
//! responder in any order, so each word the seqlock orders goes in a WRITE of its own; the
//! WRITEs of one queue pair are placed in posting order (no relaxed ordering, see
//! [`super`]), so a reader never sees a payload byte of version v + 1 before its header.
//!
//! The staged copy mirrors the remote slot's layout ([`crate::transport::ring::slot_words`]:
//! header, length, `capacity` payload words, footer), so one word offset names a segment in
//! both.

/// One RDMA WRITE of a slot write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WriteSegment {
    /// Offset in words from the slot's start, in the staged copy and in the remote slot alike.
    pub word: usize,
    /// Bytes written.
    pub bytes: u32,
}

impl WriteSegment {
    /// Offset in bytes from the slot's start.
    pub(crate) fn byte_offset(&self) -> u64 {
        (self.word * 8) as u64
    }
}

/// Requests in a slot write's chain before its notification, if any: one per segment of
/// [`slot_write_plan`].
pub(crate) const SLOT_WRITE_WRS: u32 = 3;

/// The WRITEs of a write of `len` payload words into a slot of `capacity` words, in the order
/// they are posted: the header (version) word, the length word and payload, the footer
/// (version) word. A zero-length payload still writes its length word.
pub(crate) fn slot_write_plan(capacity: usize, len: usize) -> [WriteSegment; 3] {
    debug_assert!(len <= capacity, "{len} words into a slot of {capacity}");
    [
        WriteSegment { word: 0, bytes: 8 },
        WriteSegment {
            word: 1,
            bytes: ((1 + len) * 8) as u32,
        },
        WriteSegment {
            word: capacity + 2,
            bytes: 8,
        },
    ]
}

/// The checksum of a payload, carried in the high half of the slot's length word (the low half
/// is the length): a reader that polls a slot without waiting for a notification (ASAP's
/// receive-buffer reduce) takes a payload only when it matches, so a payload partly of a later
/// write is caught even where the responder places bytes out of order. Position-mixed and
/// summed with wrapping arithmetic, which vectorises: any one word changed changes it; a mix of
/// two payloads passes with a chance of about 2^-32.
pub(crate) fn payload_checksum(words: impl IntoIterator<Item = u64>) -> u32 {
    let h = words
        .into_iter()
        .zip(0u64..)
        .fold(0x9E37_79B9_7F4A_7C15u64, |h, (w, i)| {
            h.wrapping_add((w ^ i).wrapping_mul(0xD6E8_FEB8_6659_FD93))
        });
    ((h >> 32) ^ h) as u32
}

/// The length word of a slot: the payload's length in words, and its checksum above it.
pub(crate) fn length_word(len: usize, checksum: u32) -> u64 {
    debug_assert!(len <= u32::MAX as usize, "a payload of {len} words");
    len as u64 | (u64::from(checksum) << 32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::ring::slot_words;

    #[test]
    fn the_header_goes_alone_and_first_then_length_and_payload_then_the_footer() {
        for (capacity, len) in [(4, 3), (4, 4), (1, 1), (1000, 17)] {
            let [header, body, footer] = slot_write_plan(capacity, len);
            assert_eq!(header, WriteSegment { word: 0, bytes: 8 });
            assert_eq!(
                body,
                WriteSegment {
                    word: 1,
                    bytes: ((1 + len) * 8) as u32,
                }
            );
            assert_eq!(
                footer,
                WriteSegment {
                    word: capacity + 2,
                    bytes: 8,
                }
            );
            assert_eq!(footer.byte_offset(), ((capacity + 2) * 8) as u64);
            // Posting order is slot order, and no two segments overlap.
            assert!(header.word < body.word && body.word < footer.word);
            assert!(header.byte_offset() + u64::from(header.bytes) <= body.byte_offset());
            assert!(body.byte_offset() + u64::from(body.bytes) <= footer.byte_offset());
            // Everything stays inside the slot.
            assert!(footer.byte_offset() + 8 <= (slot_words(capacity) * 8) as u64);
        }
    }

    #[test]
    fn a_zero_length_write_still_writes_its_length_word_between_header_and_footer() {
        let [header, body, footer] = slot_write_plan(8, 0);
        assert_eq!((header.word, header.bytes), (0, 8));
        assert_eq!((body.word, body.bytes), (1, 8));
        assert_eq!((footer.word, footer.bytes), (10, 8));
        assert_eq!(SLOT_WRITE_WRS as usize, slot_write_plan(8, 0).len());
    }

    #[test]
    fn a_payload_partly_of_a_later_write_fails_its_checksum() {
        let old: Vec<u64> = (0..257u64)
            .map(|i| i.wrapping_mul(0x0123_4567_89AB_CDEF))
            .collect();
        let new: Vec<u64> = old.iter().map(|w| w ^ 0x55).collect();
        let sum = payload_checksum(old.iter().copied());
        assert_eq!(payload_checksum(old.iter().copied()), sum);
        assert_ne!(payload_checksum(new.iter().copied()), sum);
        // Any one word changed, and every split of the two payloads, is caught.
        for k in 0..old.len() {
            let mut one = old.clone();
            one[k] = one[k].wrapping_add(1);
            assert_ne!(payload_checksum(one), sum, "word {k} changed");
            let mixed: Vec<u64> = new[..k].iter().chain(&old[k..]).copied().collect();
            if k > 0 {
                assert_ne!(
                    payload_checksum(mixed),
                    sum,
                    "first {k} words of the later write"
                );
            }
        }
        // Swapped words are caught too (the sum is position-mixed).
        let mut swapped = old.clone();
        swapped.swap(3, 4);
        assert_ne!(payload_checksum(swapped), sum);
        assert_eq!(length_word(5, 0xABCD_0123), 0xABCD_0123_0000_0005);
        assert_eq!(length_word(0, 0), 0);
    }
}
