//! An RC queue pair, typed by state: a [`PreparedQp`] (created, in RESET, its number known to
//! publish) becomes a [`ConnectedQp`] (INIT -> RTR -> RTS towards one remote queue pair) by
//! [`PreparedQp::connect`], which consumes it; only a connected queue pair can post work.

use super::addressing;
use super::completion::CompletionQueue;
use super::{err, RdmaDevice};
use crate::error::Result;
use crate::transport::one_sided::send_window::SEND_WRS;
use ibverbs_sys as ffi;
use std::ptr::NonNull;
use std::sync::Arc;

/// The owned verbs queue pair, destroyed in Drop before the completion queues it uses.
struct QpHandle {
    qp: NonNull<ffi::ibv_qp>,
    _send_cq: Arc<CompletionQueue>,
    _recv_cq: Arc<CompletionQueue>,
    _dev: Arc<RdmaDevice>,
}

// SAFETY: a queue pair handle may be used from any thread (libibverbs is thread-safe); its
// owner uses it from one thread at a time.
unsafe impl Send for QpHandle {}

impl Drop for QpHandle {
    fn drop(&mut self) {
        // SAFETY: created in PreparedQp::create, destroyed once here; the completion queues
        // and the device outlive it (their Arcs drop after this body).
        unsafe {
            ffi::ibv_destroy_qp(self.qp.as_ptr());
        }
    }
}

/// Where the remote end of a queue pair is.
#[derive(Debug, Clone, Copy)]
pub(super) struct RemoteQp {
    /// The remote port's LID (0 on RoCE: routed by GID).
    pub lid: u16,
    /// The remote port's GID.
    pub gid: [u8; 16],
    /// The remote queue pair's number.
    pub qpn: u32,
    /// The remote queue pair's initial send PSN (our receive PSN).
    pub psn: u32,
    /// The remote port's active MTU (verbs enum value).
    pub mtu: u32,
}

/// A queue pair created and not yet connected.
pub(super) struct PreparedQp {
    handle: QpHandle,
    /// Initial send PSN, random ([`addressing::initial_psn`]), published with the number.
    psn: u32,
}

impl PreparedQp {
    /// An RC queue pair on `dev` with `SEND_WRS` send and `recv_wrs` receive requests, one
    /// scatter entry each, completing into `send_cq` and `recv_cq`.
    ///
    /// # Errors
    /// [`crate::error::CoreError::Transport`] when the device cannot make one.
    pub fn create(
        dev: &Arc<RdmaDevice>,
        send_cq: &Arc<CompletionQueue>,
        recv_cq: &Arc<CompletionQueue>,
        recv_wrs: u32,
    ) -> Result<Self> {
        let mut init = ffi::ibv_qp_init_attr {
            send_cq: send_cq.raw(),
            recv_cq: recv_cq.raw(),
            qp_type: ffi::ibv_qp_type::IBV_QPT_RC,
            sq_sig_all: 0,
            ..Default::default()
        };
        init.cap.max_send_wr = SEND_WRS;
        init.cap.max_recv_wr = recv_wrs;
        init.cap.max_send_sge = 1;
        init.cap.max_recv_sge = 1;
        // SAFETY: the protection domain and both completion queues are valid (held by Arcs
        // that the queue pair keeps); the attributes are initialised above.
        let qp = unsafe { ffi::ibv_create_qp(dev.pd(), &mut init) };
        let qp = NonNull::new(qp).ok_or_else(|| {
            err(format!(
                "cannot create a queue pair on {}: {}",
                dev.name(),
                std::io::Error::last_os_error()
            ))
        })?;
        Ok(PreparedQp {
            handle: QpHandle {
                qp,
                _send_cq: send_cq.clone(),
                _recv_cq: recv_cq.clone(),
                _dev: dev.clone(),
            },
            psn: addressing::initial_psn(rand::random()),
        })
    }

    /// The initial send PSN peers must expect from this queue pair.
    pub fn psn(&self) -> u32 {
        self.psn
    }

    /// The number peers address this queue pair by.
    pub fn number(&self) -> u32 {
        // SAFETY: the queue pair is valid until its handle drops.
        unsafe { self.handle.qp.as_ref().qp_num }
    }

    /// Brings the queue pair through INIT, ready-to-receive and ready-to-send towards
    /// `remote`, with the attribute masks the verbs specification requires at each step;
    /// `what` names the link in errors ("node 0: queue pair to node 1").
    ///
    /// # Errors
    /// [`crate::error::CoreError::Transport`] naming the state the queue pair refused; it is
    /// destroyed.
    pub fn connect(self, dev: &RdmaDevice, remote: RemoteQp, what: &str) -> Result<ConnectedQp> {
        let qp = self.handle.qp.as_ptr();
        use ffi::ibv_qp_attr_mask as M;
        let mut a = ffi::ibv_qp_attr {
            qp_state: ffi::ibv_qp_state::IBV_QPS_INIT,
            pkey_index: 0,
            port_num: dev.port(),
            qp_access_flags: (ffi::ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
                | ffi::ibv_access_flags::IBV_ACCESS_REMOTE_WRITE)
                .0,
            ..Default::default()
        };
        let mask = M::IBV_QP_STATE | M::IBV_QP_PKEY_INDEX | M::IBV_QP_PORT | M::IBV_QP_ACCESS_FLAGS;
        // SAFETY (this and the two calls below): the queue pair is valid; `a` is initialised
        // and carries every attribute its mask names.
        // ibv_modify_qp returns the error number itself (errno is not set).
        let rc = unsafe { ffi::ibv_modify_qp(qp, &mut a, mask.0 as i32) };
        if rc != 0 {
            return Err(err(format!(
                "{what} refused INIT on port {}: {}",
                dev.port(),
                std::io::Error::from_raw_os_error(rc)
            )));
        }
        let mut a = ffi::ibv_qp_attr {
            qp_state: ffi::ibv_qp_state::IBV_QPS_RTR,
            path_mtu: addressing::path_mtu(dev.mtu(), remote.mtu),
            dest_qp_num: remote.qpn,
            rq_psn: remote.psn,
            max_dest_rd_atomic: 1,
            // 12 (0.64 ms), as rc_pingpong and perftest use.
            min_rnr_timer: 12,
            ..Default::default()
        };
        a.ah_attr.dlid = remote.lid;
        a.ah_attr.port_num = dev.port();
        if addressing::is_global(dev.link_layer()) {
            // RoCE (decided by the local port's link layer): routed by GID, with the traffic
            // class and hop limit of SYNCBENCH_RDMA_TCLASS / SYNCBENCH_RDMA_HOP_LIMIT.
            let (_, gid_index) = dev.gid();
            a.ah_attr.is_global = 1;
            a.ah_attr.grh.dgid.raw = remote.gid;
            a.ah_attr.grh.sgid_index = gid_index;
            a.ah_attr.grh.hop_limit = dev.hop_limit();
            a.ah_attr.grh.traffic_class = dev.traffic_class();
        }
        let mask = M::IBV_QP_STATE
            | M::IBV_QP_AV
            | M::IBV_QP_PATH_MTU
            | M::IBV_QP_DEST_QPN
            | M::IBV_QP_RQ_PSN
            | M::IBV_QP_MAX_DEST_RD_ATOMIC
            | M::IBV_QP_MIN_RNR_TIMER;
        let rc = unsafe { ffi::ibv_modify_qp(qp, &mut a, mask.0 as i32) };
        if rc != 0 {
            return Err(err(format!(
                "{what} refused ready-to-receive: {} (path MTU {}, GID index {}, traffic class {}, hop limit {}: check SYNCBENCH_RDMA_GID and that both ends are on the same network)",
                std::io::Error::from_raw_os_error(rc),
                addressing::path_mtu(dev.mtu(), remote.mtu),
                dev.gid().1,
                dev.traffic_class(),
                dev.hop_limit()
            )));
        }
        // rnr_retry 7: retry forever while the receiver has no receive request posted, which
        // is the queue's backpressure.
        let mut a = ffi::ibv_qp_attr {
            qp_state: ffi::ibv_qp_state::IBV_QPS_RTS,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            sq_psn: self.psn,
            max_rd_atomic: 1,
            ..Default::default()
        };
        let mask = M::IBV_QP_STATE
            | M::IBV_QP_TIMEOUT
            | M::IBV_QP_RETRY_CNT
            | M::IBV_QP_RNR_RETRY
            | M::IBV_QP_SQ_PSN
            | M::IBV_QP_MAX_QP_RD_ATOMIC;
        let rc = unsafe { ffi::ibv_modify_qp(qp, &mut a, mask.0 as i32) };
        if rc != 0 {
            return Err(err(format!(
                "{what} refused ready-to-send: {}",
                std::io::Error::from_raw_os_error(rc)
            )));
        }
        Ok(ConnectedQp {
            handle: self.handle,
        })
    }
}

/// A queue pair in ready-to-send: it posts sends and receives.
pub(super) struct ConnectedQp {
    handle: QpHandle,
}

impl ConnectedQp {
    /// The queue pair's number (completions name it).
    pub fn number(&self) -> u32 {
        // SAFETY: valid until the handle drops.
        unsafe { self.handle.qp.as_ref().qp_num }
    }

    /// Moves the queue pair to the error state: work still queued is flushed (completes with
    /// a flush error) instead of being torn down with the queue pair. Best effort (teardown).
    pub fn enter_error_state(&mut self) {
        let mut a = ffi::ibv_qp_attr {
            qp_state: ffi::ibv_qp_state::IBV_QPS_ERR,
            ..Default::default()
        };
        // SAFETY: the queue pair is valid; the mask names only the state, which `a` carries.
        unsafe {
            ffi::ibv_modify_qp(
                self.handle.qp.as_ptr(),
                &mut a,
                ffi::ibv_qp_attr_mask::IBV_QP_STATE.0 as i32,
            );
        }
    }

    /// Posts a zero-SGE receive request (a WRITE_WITH_IMM places no data through it).
    ///
    /// # Errors
    /// The verbs errno when the receive queue is full or the queue pair broken.
    pub fn post_recv(&mut self, wr_id: u64) -> std::result::Result<(), i32> {
        let mut wr = ffi::ibv_recv_wr {
            wr_id,
            next: std::ptr::null_mut(),
            sg_list: std::ptr::null_mut(),
            num_sge: 0,
        };
        let mut bad = std::ptr::null_mut();
        // SAFETY: the queue pair is valid; the request names no memory; post_recv is an
        // inline verbs call reached through the context's ops table.
        let rc = unsafe {
            let qp = self.handle.qp.as_ptr();
            let ctx = (*qp).context;
            (*ctx).ops.post_recv.expect("post_recv")(qp, &mut wr, &mut bad)
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(rc)
        }
    }

    /// Posts the work requests `wrs`, linked in order, as one chain.
    ///
    /// # Errors
    /// The verbs errno when the send queue is full or the queue pair broken, with how many of
    /// the requests (from the first) were posted before the one refused (`bad_wr`): those are
    /// in flight and their memory stays the caller's obligation.
    ///
    /// # Safety
    /// Every scatter entry of `wrs` must name memory of a [`super::memory::MemoryRegion`]
    /// with its `lkey`, and that memory must stay registered and unchanged until the
    /// completion of the signaled request that ends the chain has been polled (the device
    /// reads it while the request is in flight); every remote address and key must be one the
    /// peer registered for remote writes.
    pub unsafe fn post_send(
        &mut self,
        wrs: &mut [ffi::ibv_send_wr],
    ) -> std::result::Result<(), (i32, usize)> {
        for i in 0..wrs.len().saturating_sub(1) {
            let next: *mut ffi::ibv_send_wr = &mut wrs[i + 1];
            wrs[i].next = next;
        }
        let mut bad = std::ptr::null_mut();
        // SAFETY: the queue pair is valid; the requests and their scatter lists live until the
        // call returns (the verbs copy them into the send queue); the memory they name is the
        // caller's obligation (above).
        let rc = unsafe {
            let qp = self.handle.qp.as_ptr();
            let ctx = (*qp).context;
            (*ctx).ops.post_send.expect("post_send")(qp, wrs.as_mut_ptr(), &mut bad)
        };
        if rc == 0 {
            return Ok(());
        }
        let posted = requests_posted(
            wrs.as_ptr() as usize,
            bad as usize,
            std::mem::size_of::<ffi::ibv_send_wr>(),
            wrs.len(),
        );
        Err((rc, posted))
    }
}

/// How many requests of a refused chain went out: those before the one `ibv_post_send` named
/// in `bad_wr` (`bad`, an address; the chain starts at `first` and holds `len` requests of
/// `size` bytes), never more than the chain; all of them when it named none (`bad` 0), the
/// safe side for memory in flight.
fn requests_posted(first: usize, bad: usize, size: usize, len: usize) -> usize {
    if bad == 0 {
        len
    } else {
        (bad.saturating_sub(first) / size.max(1)).min(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_post_counts_the_requests_before_bad_wr_and_all_when_none_is_named() {
        let wrs = [ffi::ibv_send_wr::default(); 4];
        let size = std::mem::size_of::<ffi::ibv_send_wr>();
        let first = wrs.as_ptr() as usize;
        for (i, wr) in wrs.iter().enumerate() {
            let bad: *const ffi::ibv_send_wr = wr;
            assert_eq!(requests_posted(first, bad as usize, size, wrs.len()), i);
        }
        // None named: every request counts as posted (its memory stays in use).
        assert_eq!(requests_posted(first, 0, size, 4), 4);
        // An address inside a request counts those wholly before it.
        assert_eq!(requests_posted(first, first + size + 8, size, 4), 1);
        // An address outside the chain counts neither more than the chain nor wraps.
        assert_eq!(requests_posted(first, first + 10 * size, size, 4), 4);
        assert_eq!(requests_posted(first, first - size, size, 4), 0);
    }
}
