//! Page-aligned arrays of 64-bit atomic words: the registered memory of the threads transport.
//!
//! Concurrent one-sided writes and reads of the same slot are real data races in the protocol
//! sense (that is what torn buffers are), so every access goes through word-sized atomics with
//! relaxed ordering plus explicit fences: no undefined behaviour, tearing still observable.
//! Page alignment matters: this VM copies 15-30x slower when source and destination page
//! offsets nearly coincide, so every buffer starts on a page boundary.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// Page size used for alignment.
pub const PAGE: usize = 4096;

/// A zero-initialised, page-aligned array of `AtomicU64`.
pub struct AlignedWords {
    ptr: NonNull<AtomicU64>,
    len: usize,
    layout: Layout,
}

// SAFETY: the memory is owned, and only ever accessed through `&[AtomicU64]`, which is Sync.
unsafe impl Send for AlignedWords {}
// SAFETY: as above; all shared access is atomic.
unsafe impl Sync for AlignedWords {}

impl AlignedWords {
    /// `len` zeroed words starting on a page boundary.
    ///
    /// # Panics
    /// When the allocation fails (as `Vec` does).
    pub fn zeroed(len: usize) -> Self {
        let bytes = (len.max(1) * 8).next_multiple_of(PAGE);
        let layout = Layout::from_size_align(bytes, PAGE).expect("valid layout");
        // SAFETY: layout has non-zero size.
        let raw = unsafe { alloc_zeroed(layout) } as *mut AtomicU64;
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedWords { ptr, len, layout }
    }

    /// A page-aligned copy of `words`.
    pub fn from_words(words: &[u64]) -> Self {
        let a = Self::zeroed(words.len());
        for (d, &s) in a.as_slice().iter().zip(words) {
            d.store(s, Ordering::Relaxed);
        }
        a
    }

    /// The words.
    pub fn as_slice(&self) -> &[AtomicU64] {
        // SAFETY: ptr is valid for len zero-initialised AtomicU64s (all-zero is a valid
        // AtomicU64) for the lifetime of self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The words as bytes (native order), for backends that hand them to a socket.
    ///
    /// The words must not be written while the returned slice lives: [`super::Endpoint`]
    /// requires a posted source to stay unchanged until its completion, and that is the only
    /// use. Reading them as plain bytes then races with nothing.
    pub fn bytes_unchanging(&self) -> &[u8] {
        // SAFETY: the allocation holds `len` initialised u64 words (AtomicU64 has u64's layout);
        // any bit pattern is a valid u8; no write happens while the slice lives (see above).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr() as *const u8, self.len * 8) }
    }

    /// Address of the first word (for alignment checks).
    pub fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }
}

impl Drop for AlignedWords {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout.
        unsafe { dealloc(self.ptr.as_ptr() as *mut u8, self.layout) }
    }
}

impl std::fmt::Debug for AlignedWords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedWords({} words @ {:#x})", self.len, self.addr())
    }
}

/// Words from which a copy goes through the vector copy instead of word by word.
const BULK_WORDS: usize = 64;
// The vector copy's loop needs at least one 64-byte block.
const _: () = assert!(BULK_WORDS >= 8);

/// Copies `n` words from `src` to `dst`: 64-byte blocks through four unaligned 16-byte SSE2
/// moves, then the last `n % 8` words with `rep movsb`, all in one assembly block.
///
/// The buffers may be read or written by other threads or processes meanwhile (that is what a
/// torn buffer is); the copy is inline assembly, which the language's memory model treats as
/// an opaque operation of the hardware, so such a race is the hardware's byte-wise behaviour
/// and not undefined behaviour, as with word-sized atomics. It runs at memcpy speed, which a
/// loop of atomic word moves (never vectorised) does not reach. A plain `rep movsb` did only
/// when source and destination shared their offset in a cache line: slot payloads sit 16 bytes
/// into a line and posted sources at its start, and there it took 108-126 us for 4 MiB where
/// memcpy and this loop took 87-91 us (AMD EPYC dev VM, one thread, in cache).
///
/// # Safety
/// `src` must be valid for reads and `dst` for writes of `n` words, and `n >= 8`.
#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn vector_copy(dst: *mut u64, src: *const u64, n: usize) {
    debug_assert!(n >= 8);
    // SAFETY: the caller guarantees both ranges and at least one block; the loop moves n / 8
    // blocks of 64 bytes, rep movsb the (n % 8) * 8 bytes after them, so exactly n * 8 bytes
    // of each range are touched. SSE2 is part of x86_64. Clobbers are declared (flags by add
    // and dec, hence no preserves_flags); the direction flag is clear by the ABI.
    unsafe {
        std::arch::asm!(
            "2:",
            "movdqu xmm0, [rsi]",
            "movdqu xmm1, [rsi + 16]",
            "movdqu xmm2, [rsi + 32]",
            "movdqu xmm3, [rsi + 48]",
            "movdqu [rdi], xmm0",
            "movdqu [rdi + 16], xmm1",
            "movdqu [rdi + 32], xmm2",
            "movdqu [rdi + 48], xmm3",
            "add rsi, 64",
            "add rdi, 64",
            "dec {blocks}",
            "jnz 2b",
            "rep movsb",
            blocks = inout(reg) n / 8 => _,
            inout("rcx") (n % 8) * 8 => _,
            inout("rdi") dst => _,
            inout("rsi") src => _,
            out("xmm0") _,
            out("xmm1") _,
            out("xmm2") _,
            out("xmm3") _,
            options(nostack)
        );
    }
}

/// Copies the words of `src` (which others may write meanwhile) into `out` (resized).
#[inline]
pub fn load_words(src: &[AtomicU64], out: &mut Vec<u64>) {
    out.clear();
    #[cfg(target_arch = "x86_64")]
    if src.len() >= BULK_WORDS {
        out.reserve(src.len());
        // SAFETY: `out` has room for src.len() words; src is valid for as many; AtomicU64 has
        // u64's layout. The words are initialised by the copy before the length is set.
        unsafe {
            vector_copy(out.as_mut_ptr(), src.as_ptr() as *const u64, src.len());
            out.set_len(src.len());
        }
        return;
    }
    out.extend(src.iter().map(|w| w.load(Ordering::Relaxed)));
}

/// Copies `src` into `dst`; either may be accessed concurrently by others (see
/// [`load_words`]): large copies use the vector copy, small ones relaxed atomics.
#[inline]
pub fn copy_words(dst: &[AtomicU64], src: &[AtomicU64]) {
    let n = dst.len().min(src.len());
    let (dst, src) = (&dst[..n], &src[..n]);
    #[cfg(target_arch = "x86_64")]
    if n >= BULK_WORDS {
        // SAFETY: both slices hold n words; AtomicU64 has u64's layout, and concurrent access
        // is what the assembly copy permits (see vector_copy).
        unsafe { vector_copy(dst.as_ptr() as *mut u64, src.as_ptr() as *const u64, n) };
        return;
    }
    // Unrolled by 8 so the loop is load/store bound rather than loop-overhead bound.
    let mut d8 = dst.chunks_exact(8);
    let mut s8 = src.chunks_exact(8);
    for (d, s) in (&mut d8).zip(&mut s8) {
        let v: [u64; 8] = std::array::from_fn(|i| s[i].load(Ordering::Relaxed));
        for (w, x) in d.iter().zip(v) {
            w.store(x, Ordering::Relaxed);
        }
    }
    for (d, s) in d8.remainder().iter().zip(s8.remainder()) {
        d.store(s.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        let a = AlignedWords::zeroed(1000);
        assert_eq!(a.addr() % PAGE, 0);
        assert!(a.as_slice().iter().all(|w| w.load(Ordering::Relaxed) == 0));
        let words: Vec<u64> = (1..=21).collect();
        let b = AlignedWords::from_words(&words);
        let c = AlignedWords::zeroed(21);
        copy_words(c.as_slice(), b.as_slice());
        let got: Vec<u64> = c
            .as_slice()
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .collect();
        assert_eq!(got, words);
    }

    #[test]
    fn bulk_copies_match_word_copies() {
        for n in [0usize, 1, 63, 64, 65, 1000, 4097] {
            let words: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
            let src = AlignedWords::from_words(&words);
            let dst = AlignedWords::zeroed(n);
            copy_words(dst.as_slice(), src.as_slice());
            let mut out = vec![1, 2, 3];
            load_words(dst.as_slice(), &mut out);
            assert_eq!(out, words, "{n}");
        }
    }

    #[test]
    fn bulk_copies_at_every_offset_touch_exactly_their_words() {
        let pattern = |i: usize| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let src = AlignedWords::from_words(&(0..200).map(pattern).collect::<Vec<_>>());
        for n in 64..=81 {
            for (so, doff) in [(0, 0), (0, 2), (2, 0), (3, 5), (7, 1)] {
                let dst = AlignedWords::zeroed(200);
                copy_words(&dst.as_slice()[doff..doff + n], &src.as_slice()[so..so + n]);
                for (i, w) in dst.as_slice().iter().enumerate() {
                    let want = if (doff..doff + n).contains(&i) {
                        pattern(i - doff + so)
                    } else {
                        0
                    };
                    assert_eq!(
                        w.load(Ordering::Relaxed),
                        want,
                        "n {n} src +{so} dst +{doff} word {i}"
                    );
                }
                let mut out = Vec::new();
                load_words(&src.as_slice()[so..so + n], &mut out);
                assert_eq!(out, (so..so + n).map(pattern).collect::<Vec<_>>());
            }
        }
    }
}
