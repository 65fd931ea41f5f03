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

/// Copies `src` into `dst` word by word with relaxed atomics.
#[inline]
pub fn copy_words(dst: &[AtomicU64], src: &[AtomicU64]) {
    let n = dst.len().min(src.len());
    let (dst, src) = (&dst[..n], &src[..n]);
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
}
