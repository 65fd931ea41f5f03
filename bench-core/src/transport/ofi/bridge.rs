//! The bridge from the send bookkeeping ([`SendTracker`], shared with the verbs backend and
//! tested against a mock) to libfabric: a chain is posted as one `fi_writemsg` per request,
//! and send completions are the ones the progress thread read.
//!
//! [`SendTracker`]: crate::transport::one_sided::send_tracker::SendTracker

use super::domain::Domain;
use super::ffi;
use super::progress::{Inbox, CREDIT_CONTEXT};
use crate::transport::one_sided::send_tracker::{PostError, SendVerbs, Wc};
use crate::transport::NodeId;
use std::time::{Duration, Instant};

/// How long a post retries a provider that is out of room (-FI_EAGAIN) before it fails.
const POST_PATIENCE: Duration = Duration::from_secs(30);

/// One RMA write as the bridge posts it: where from, where to, its id (the context), and
/// whether it is signaled or carries remote data.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Write {
    pub(crate) local: *mut std::ffi::c_void,
    pub(crate) desc: *mut std::ffi::c_void,
    pub(crate) bytes: usize,
    pub(crate) remote: u64,
    pub(crate) key: u64,
    pub(crate) to: ffi::fi_addr_t,
    pub(crate) id: u64,
    pub(crate) signaled: bool,
    pub(crate) data: Option<u64>,
}

/// Posts one write, retrying while the provider is out of room; returns the provider's
/// code (0, or a negative errno).
///
/// # Safety
/// The memory `w` names stays registered and unchanged until its completion (or, unsignaled,
/// the completion of a later signaled request of the same chain) has been read.
pub(crate) unsafe fn post_write(ep: *mut ffi::fid_ep, w: &Write) -> isize {
    let iov = ffi::iovec {
        iov_base: w.local,
        iov_len: w.bytes,
    };
    let mut desc = w.desc;
    let rma = ffi::fi_rma_iov {
        addr: w.remote,
        len: w.bytes,
        key: w.key,
    };
    let msg = ffi::fi_msg_rma {
        msg_iov: &iov,
        desc: &mut desc,
        iov_count: 1,
        addr: w.to,
        rma_iov: &rma,
        rma_iov_count: 1,
        context: w.id as *mut std::ffi::c_void,
        data: w.data.unwrap_or(0),
    };
    let mut flags = 0u64;
    if w.signaled {
        flags |= u64::from(ffi::FI_COMPLETION);
    }
    if w.data.is_some() {
        flags |= u64::from(ffi::FI_REMOTE_CQ_DATA);
    }
    let started = Instant::now();
    loop {
        // SAFETY: msg and what it points to live across the call (the provider copies
        // them); the buffers it names are the caller's obligation.
        let rc = unsafe { ffi::writemsg(ep, &msg, flags) };
        if rc != -(libc::EAGAIN as isize) || started.elapsed() > POST_PATIENCE {
            return rc;
        }
        // The progress thread frees room as it reads completions.
        std::thread::yield_now();
    }
}

/// The send verbs on an endpoint: its domain's endpoint and the send completions its
/// progress thread read.
pub(crate) struct Provider<'a> {
    pub(crate) domain: &'a Domain,
    pub(crate) inbox: &'a Inbox,
    /// Failures of credit returns, which belong to no chain: (peer, text).
    pub(crate) credit_failures: &'a mut Vec<String>,
    /// Each peer's fi_addr, by node.
    pub(crate) addrs: &'a [ffi::fi_addr_t],
}

impl SendVerbs for Provider<'_> {
    type Wr = Write;

    fn status_text(&self, status: u32, vendor_err: u32) -> String {
        format!(
            "{}, provider error {vendor_err}",
            ffi::strerror(-i64::from(status))
        )
    }

    unsafe fn post_send(
        &mut self,
        peer: NodeId,
        chain: &mut [Write],
    ) -> std::result::Result<(), PostError> {
        if self.addrs.get(peer).is_none() {
            return Err(PostError {
                errno: libc::EINVAL,
                posted: 0,
            });
        }
        for (i, w) in chain.iter().enumerate() {
            // SAFETY: the caller's obligation (SendVerbs::post_send).
            let rc = unsafe { post_write(self.domain.ep, w) };
            if rc != 0 {
                return Err(PostError {
                    errno: rc.unsigned_abs() as i32,
                    posted: i,
                });
            }
        }
        Ok(())
    }

    fn poll_send(&mut self, out: &mut [Wc]) -> usize {
        let mut q = self.inbox.sends.lock().expect("inbox");
        let mut n = 0;
        while n < out.len() {
            let Some(c) = q.pop_front() else { break };
            if c.wr_id == CREDIT_CONTEXT {
                self.credit_failures.push(format!(
                    "returning credits failed: {}",
                    self.status_text(c.status, c.vendor_err)
                ));
                continue;
            }
            out[n] = c;
            n += 1;
        }
        if n == 0 {
            drop(q);
            // Nothing yet: let the progress thread run (this machine may have few cores).
            std::thread::yield_now();
        }
        n
    }

    /// A reliable-datagram endpoint has no connection per peer to move to an error state:
    /// the tracker refuses later posts to the peer, and what is in flight completes (failed
    /// or not) or is abandoned at teardown.
    fn enter_error_state(&mut self, _peer: NodeId) {}
}
