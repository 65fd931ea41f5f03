//! A completion queue: where a device reports finished send and receive work requests.

use super::{err, RdmaDevice};
use crate::error::Result;
use ibverbs_sys as ffi;
use std::ptr::NonNull;
use std::sync::Arc;

/// An owned completion queue; queue pairs hold an `Arc` to the ones they use, so it is
/// destroyed after them.
pub(super) struct CompletionQueue {
    cq: NonNull<ffi::ibv_cq>,
    _dev: Arc<RdmaDevice>,
}

// SAFETY: a completion queue handle may be used from any thread (libibverbs is thread-safe);
// the endpoint polls it from one thread at a time.
unsafe impl Send for CompletionQueue {}
// SAFETY: as above.
unsafe impl Sync for CompletionQueue {}

impl CompletionQueue {
    /// A queue with room for `entries` completions.
    ///
    /// # Errors
    /// [`crate::error::CoreError::Transport`] when the device cannot make one.
    pub fn create(dev: &Arc<RdmaDevice>, entries: usize) -> Result<Self> {
        // SAFETY: the context is valid while `dev` lives (kept by the Arc); no channel or
        // context pointer is attached.
        let cq = unsafe {
            ffi::ibv_create_cq(
                dev.context(),
                entries.max(1) as i32,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
            )
        };
        let cq = NonNull::new(cq).ok_or_else(|| {
            err(format!(
                "cannot create a completion queue of {entries} entries on {}: {}",
                dev.name(),
                std::io::Error::last_os_error()
            ))
        })?;
        Ok(CompletionQueue {
            cq,
            _dev: dev.clone(),
        })
    }

    /// Polls up to `wc.len()` completions into `wc`; returns how many arrived.
    pub fn poll(&self, wc: &mut [ffi::ibv_wc]) -> usize {
        // SAFETY: the queue is valid until Drop; `wc` has room for `wc.len()` completions;
        // poll_cq is an inline verbs call reached through the context's ops table.
        let n = unsafe {
            let cq = self.cq.as_ptr();
            let ctx = (*cq).context;
            (*ctx).ops.poll_cq.expect("poll_cq")(cq, wc.len() as i32, wc.as_mut_ptr())
        };
        n.max(0) as usize
    }

    /// The raw queue, for creating queue pairs.
    pub(super) fn raw(&self) -> *mut ffi::ibv_cq {
        self.cq.as_ptr()
    }
}

impl Drop for CompletionQueue {
    fn drop(&mut self) {
        // SAFETY: created in `create`, destroyed once; every queue pair using it held an Arc
        // and is gone.
        unsafe {
            ffi::ibv_destroy_cq(self.cq.as_ptr());
        }
    }
}
