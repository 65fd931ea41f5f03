//! The bridge from the send bookkeeping ([`SendTracker`], pure and tested against a mock) to
//! the hardware: posting chains of work requests on a peer's queue pair, polling the send
//! completion queue, and moving a queue pair to the error state.

use super::completion::{status_name, CompletionQueue};
use super::endpoint::*;
use crate::transport::one_sided::send_tracker::{PostError, SendVerbs, Wc};
use crate::transport::NodeId;
use ibverbs_sys as ffi;
use std::collections::HashMap;

/// The send verbs on an endpoint's queue pairs and send completion queue, which its send
/// bookkeeping ([`SendTracker`]) drives.
pub(super) struct Hardware<'a> {
    pub(super) peers: &'a mut HashMap<NodeId, Peer>,
    pub(super) send_cq: &'a CompletionQueue,
}

impl SendVerbs for Hardware<'_> {
    type Wr = ffi::ibv_send_wr;

    fn status_text(&self, status: u32, vendor_err: u32) -> String {
        format!("{}, vendor error {vendor_err}", status_name(status))
    }

    unsafe fn post_send(
        &mut self,
        peer: NodeId,
        chain: &mut [ffi::ibv_send_wr],
    ) -> std::result::Result<(), PostError> {
        let Some(p) = self.peers.get_mut(&peer) else {
            return Err(PostError {
                errno: libc::EINVAL,
                posted: 0,
            });
        };
        // SAFETY: the caller's obligation (SendVerbs::post_send), which is
        // ConnectedQp::post_send's.
        unsafe { p.qp.post_send(chain) }.map_err(|(errno, posted)| PostError { errno, posted })
    }

    fn poll_send(&mut self, out: &mut [Wc]) -> usize {
        let mut wc = [ffi::ibv_wc::default(); 16];
        let room = out.len().min(wc.len());
        let n = self.send_cq.poll(&mut wc[..room]).min(room);
        for (o, c) in out.iter_mut().zip(&wc[..n]) {
            let (status, vendor_err) = c.error().unwrap_or((0, 0));
            *o = Wc {
                wr_id: c.wr_id(),
                status,
                vendor_err,
            };
        }
        n
    }

    fn enter_error_state(&mut self, peer: NodeId) {
        if let Some(p) = self.peers.get_mut(&peer) {
            p.qp.enter_error_state();
        }
    }
}
