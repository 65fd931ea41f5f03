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

/// The entries a completion queue needs (`wanted`), checked against the device's `max_cqe`:
/// a queue that could overrun loses completions silently, so a configuration that needs more
/// is refused.
///
/// # Errors
/// `wanted` above `max_cqe`, naming the queue (`what`).
pub(super) fn checked_entries(wanted: usize, max_cqe: usize, what: &str) -> Result<usize> {
    let wanted = wanted.max(1);
    if wanted > max_cqe {
        return Err(err(format!(
            "the {what} completion queue needs {wanted} entries and the device allows {max_cqe}: run fewer peers per node"
        )));
    }
    Ok(wanted)
}

/// A completion status by its verbs name (`IBV_WC_RETRY_EXC_ERR` reads "transport retry
/// counter exceeded"), with its number.
pub(super) fn status_name(status: u32) -> String {
    // SAFETY: ibv_wc_status_str returns a pointer to a static string for any value.
    let name = unsafe {
        let p = ffi::ibv_wc_status_str(status);
        if p.is_null() {
            "unknown status".to_string()
        } else {
            std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    format!("{name} ({status})")
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_that_could_overrun_are_refused_and_statuses_have_names() {
        assert_eq!(checked_entries(192, 4_194_303, "send").unwrap(), 192);
        assert_eq!(checked_entries(0, 16, "send").unwrap(), 1);
        let e = checked_entries(5000, 4096, "receive")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("receive completion queue needs 5000 entries") && e.contains("4096"),
            "{e}"
        );
        assert!(status_name(0).contains("success"), "{}", status_name(0));
        assert!(status_name(12).contains("(12)"), "{}", status_name(12));
    }
}
