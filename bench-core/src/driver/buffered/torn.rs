//! What a read of a receive buffer returns while writes land in it: the simulator's model of a
//! torn buffer's contents, for a reduce that averages whatever its buffers hold (ASYNC without
//! the consistency check, [`super::AsyncReads::AsRead`]).
//!
//! A write lands front to back, its first byte at `start` and its last at `end`; a read goes
//! front to back too, over `[read_start, read_end]`. The word at fraction `f` of the buffer
//! (word `c` of `dim` sits at `f = (c + 0.5) / dim`) lands at `start + f (end - start)` and is
//! read at `read_start + f (read_end - read_start)`; the reader sees, at each word, the newest
//! write whose byte there landed before the reader got there. A buffer torn by one write is
//! thus a prefix of the new model and a suffix of the old one (or the reverse, when the write
//! is faster than the read), which is what a seqlock check would have rejected.

/// One write into a buffer: when its first and last bytes land, and the model it carries.
#[derive(Debug, Clone, Copy)]
pub struct LandingSpan<'a> {
    /// First byte lands, ns.
    pub start: u64,
    /// Last byte lands, ns.
    pub end: u64,
    /// The model written.
    pub data: &'a [f32],
}

/// The words a read over `[read_start, read_end]` returns from a buffer of `dim` words into
/// which `writes` (oldest first) land; words no write reached before the reader hold 0, as a
/// buffer never written does. `None` when no write reached any word (nothing to average).
pub fn as_read(
    read_start: u64,
    read_end: u64,
    writes: &[LandingSpan<'_>],
    dim: usize,
) -> Option<Vec<f32>> {
    let mut out = vec![0.0f32; dim];
    let mut filled = vec![false; dim];
    let mut left = dim;
    let read_len = read_end.saturating_sub(read_start) as f64;
    for w in writes.iter().rev() {
        if w.start >= read_end {
            continue;
        }
        let write_len = w.end.saturating_sub(w.start) as f64;
        let whole = w.end <= read_start;
        for c in 0..dim {
            if filled[c] {
                continue;
            }
            let f = (c as f64 + 0.5) / dim as f64;
            let landed = w.start as f64 + f * write_len;
            let read = read_start as f64 + f * read_len;
            if whole || landed <= read {
                out[c] = w.data[c];
                filled[c] = true;
                left -= 1;
            }
        }
        if left == 0 || whole {
            break;
        }
    }
    (left < dim).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: u64, end: u64, data: &[f32]) -> LandingSpan<'_> {
        LandingSpan { start, end, data }
    }

    #[test]
    fn a_write_that_landed_before_the_read_is_read_whole() {
        let (old, new) = ([1.0; 4], [2.0; 4]);
        let got = as_read(100, 140, &[span(0, 40, &old), span(50, 90, &new)], 4).unwrap();
        assert_eq!(got, vec![2.0; 4]);
    }

    #[test]
    fn a_write_landing_during_the_read_tears_it_into_new_prefix_and_old_suffix() {
        // The write lands over [100, 140] and the read runs over [120, 160]: the write is ahead
        // of the reader from the start, so every word read holds... the new word where it
        // landed before the read: at f, landed 100 + 40 f <= read 120 + 40 f, always.
        let (old, new) = ([1.0; 4], [2.0; 4]);
        let got = as_read(120, 160, &[span(0, 40, &old), span(100, 140, &new)], 4).unwrap();
        assert_eq!(got, vec![2.0; 4]);
        // A slower write (over [100, 260]) overtaken by the read: the front is new, the back old.
        // Word c at f = (c + 0.5) / 4: landed 100 + 160 f, read 120 + 40 f; new while f <= 1/6.
        let got = as_read(120, 160, &[span(0, 40, &old), span(100, 260, &new)], 4).unwrap();
        assert_eq!(got, vec![2.0, 1.0, 1.0, 1.0]);
        // The reader started first and the write catches up from behind: the front is old.
        // landed 130 + 10 f, read 100 + 60 f: new once f >= 0.6, words 2 and 3.
        let got = as_read(100, 160, &[span(0, 40, &old), span(130, 140, &new)], 4).unwrap();
        assert_eq!(got, vec![1.0, 1.0, 2.0, 2.0]);
    }

    #[test]
    fn words_no_write_reached_read_as_zero_and_an_unwritten_buffer_reads_nothing() {
        let new = [2.0; 4];
        // The first write ever, overtaken by the read: its back half is still the zero buffer.
        let got = as_read(120, 160, &[span(100, 260, &new)], 4).unwrap();
        assert_eq!(got, vec![2.0, 0.0, 0.0, 0.0]);
        assert_eq!(as_read(0, 40, &[span(50, 90, &new)], 4), None);
        assert_eq!(as_read(0, 40, &[], 4), None);
    }

    #[test]
    fn the_newest_landed_write_wins_each_word() {
        let (a, b, c) = ([1.0; 2], [2.0; 2], [3.0; 2]);
        // b landed whole before the read; c lands after it ended.
        let got = as_read(
            100,
            120,
            &[span(0, 10, &a), span(20, 30, &b), span(130, 140, &c)],
            2,
        )
        .unwrap();
        assert_eq!(got, vec![2.0, 2.0]);
    }
}
