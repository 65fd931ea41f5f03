//! A registered buffer that owns its memory, so that a registration never outlives it:
//! `fi_mr_reg` on a domain, closed on drop before the memory is freed.

use super::err;
use super::ffi;
use crate::error::Result;
use crate::transport::AlignedWords;

/// Words registered with a domain for one kind of access.
pub(crate) struct Registered {
    mr: *mut ffi::fid_mr,
    words: AlignedWords,
    /// Where peers address this buffer: its virtual address when the provider asks
    /// FI_MR_VIRT_ADDR, else 0 (offsets).
    base: u64,
}

// SAFETY: the registration is a handle of a FI_THREAD_SAFE domain; the words are atomics.
unsafe impl Send for Registered {}
// SAFETY: as above.
unsafe impl Sync for Registered {}

impl Registered {
    /// Registers `words` with `domain` for `access` (FI_WRITE, FI_REMOTE_WRITE), with
    /// `requested_key` unless the provider picks keys (FI_MR_PROV_KEY).
    ///
    /// # Errors
    /// `fi_mr_reg` failed (naming `what`).
    pub(crate) fn register(
        domain: &super::domain::Domain,
        words: AlignedWords,
        access: u64,
        requested_key: u64,
        what: &str,
    ) -> Result<Registered> {
        let mut mr: *mut ffi::fid_mr = std::ptr::null_mut();
        let bytes = words.len() * 8;
        // SAFETY: the words stay allocated, at this address, until Drop closes the
        // registration first.
        let rc = unsafe {
            ffi::mr_reg(
                domain.domain,
                words.addr() as *const std::ffi::c_void,
                bytes,
                access,
                requested_key,
                &mut mr,
            )
        };
        if rc != 0 {
            return Err(err(format!(
                "cannot register the {what} ({bytes} bytes): {}",
                ffi::strerror(i64::from(rc))
            )));
        }
        let base = if domain.mr_mode() & ffi::FI_MR_VIRT_ADDR != 0 {
            words.addr() as u64
        } else {
            0
        };
        Ok(Registered { mr, words, base })
    }

    /// The words.
    pub(crate) fn words(&self) -> &AlignedWords {
        &self.words
    }

    /// The key a peer writes with.
    pub(crate) fn key(&self) -> u64 {
        // SAFETY: mr is a registration this value owns.
        unsafe { ffi::mr_key(self.mr) }
    }

    /// The descriptor a local request names this buffer with (FI_MR_LOCAL).
    pub(crate) fn desc(&self) -> *mut std::ffi::c_void {
        // SAFETY: as above.
        unsafe { ffi::mr_desc(self.mr) }
    }

    /// Where a peer addresses word 0.
    pub(crate) fn base(&self) -> u64 {
        self.base
    }

    /// The local address of word `w`.
    pub(crate) fn local(&self, w: usize) -> *mut std::ffi::c_void {
        (self.words.addr() + w * 8) as *mut std::ffi::c_void
    }

    /// Bytes registered.
    pub(crate) fn bytes(&self) -> u64 {
        (self.words.len() * 8) as u64
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        // SAFETY: mr was opened by register and is closed once, before the words drop.
        unsafe { ffi::close(self.mr.cast::<ffi::fid>()) };
    }
}
