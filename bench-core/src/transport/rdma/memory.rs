//! A buffer registered with a device. The region owns its buffer, so the registration can never
//! outlive the memory it names: deregistration runs in Drop, before the buffer is freed.

use super::{err, RdmaDevice};
use crate::error::Result;
use crate::transport::aligned::{AlignedWords, PAGE};
use ibverbs_sys as ffi;
use std::ptr::NonNull;
use std::sync::Arc;

/// A registered, page-aligned buffer of words.
pub(super) struct MemoryRegion {
    mr: NonNull<ffi::ibv_mr>,
    words: AlignedWords,
    _dev: Arc<RdmaDevice>,
}

// SAFETY: the registration is a handle the verbs library lets any thread use; the buffer is
// only accessed through atomics (AlignedWords is Send + Sync).
unsafe impl Send for MemoryRegion {}

impl MemoryRegion {
    /// Registers `words` (rounded up to whole pages) for local writes, and with `remote`, for
    /// RDMA writes from peers.
    ///
    /// # Errors
    /// [`crate::error::CoreError::Transport`] when the device refuses the registration (e.g.
    /// the locked-memory limit, `ulimit -l`).
    pub fn register(dev: &Arc<RdmaDevice>, words: AlignedWords, remote: bool) -> Result<Self> {
        let mut access = ffi::ibv_access_flags::IBV_ACCESS_LOCAL_WRITE;
        if remote {
            access |= ffi::ibv_access_flags::IBV_ACCESS_REMOTE_WRITE;
        }
        // SAFETY: the protection domain is valid while `dev` lives (the region keeps an Arc);
        // the address range is the buffer's own allocation, which is page-aligned and whole
        // pages long (AlignedWords), and the region owns it until after deregistration.
        let mr = unsafe {
            ffi::ibv_reg_mr(
                dev.pd(),
                words.addr() as *mut std::ffi::c_void,
                (words.len().max(1) * 8).next_multiple_of(PAGE),
                access.0 as i32,
            )
        };
        let mr = NonNull::new(mr).ok_or_else(|| {
            err(format!(
                "cannot register {} bytes on {}: {} (check the locked-memory limit, ulimit -l)",
                words.len() * 8,
                dev.name(),
                std::io::Error::last_os_error()
            ))
        })?;
        Ok(MemoryRegion {
            mr,
            words,
            _dev: dev.clone(),
        })
    }

    /// The registered buffer.
    pub fn words(&self) -> &AlignedWords {
        &self.words
    }

    /// The buffer's address, as work requests name it.
    pub fn addr(&self) -> u64 {
        self.words.addr() as u64
    }

    /// Key for local access (scatter/gather entries).
    pub fn lkey(&self) -> u32 {
        // SAFETY: the registration is valid until Drop.
        unsafe { self.mr.as_ref().lkey }
    }

    /// Key peers write with.
    pub fn rkey(&self) -> u32 {
        // SAFETY: as above.
        unsafe { self.mr.as_ref().rkey }
    }
}

impl Drop for MemoryRegion {
    fn drop(&mut self) {
        // SAFETY: registered in `register`, deregistered once here, before `words` is freed
        // (fields drop after this body). Queue pairs that might still read the buffer are
        // destroyed first by their owners (the endpoint drops its peers' queue pairs before
        // their staging regions).
        unsafe {
            ffi::ibv_dereg_mr(self.mr.as_ptr());
        }
    }
}
