//! Moving bytes between nodes with one-sided writes, shaped like RDMA verbs.
//!
//! A receiver registers, per sender, a ring of `depth` slots. A sender posts a write of a
//! page-aligned source buffer into one remote slot and later reaps a completion; a small
//! notification (RDMA's write-with-immediate) can follow the data and is delivered after it.
//! Every slot holds `[header version, length, payload..., footer version]`: the writer stores the
//! header first and the footer last, the reader loads the footer first and the header last
//! (a seqlock), so a reader can tell a torn (partly overwritten) buffer from a whole one, as
//! ASAP does over RDMA. Backends: [`threads`] (in-process copy engines) and [`tcp`] (a
//! connection per peer pair, frames landed into the slots by receiver threads); shm and rdma
//! implement the same [`Endpoint`].

mod aligned;
mod inbox;
#[cfg(feature = "ofi")]
pub mod ofi;
#[cfg(any(feature = "rdma", feature = "ofi"))]
mod one_sided;
pub mod perf;
#[cfg(feature = "rdma")]
pub mod rdma;
mod region;
mod ring;
pub mod shm;
pub mod tcp;
pub mod threads;

pub use aligned::AlignedWords;

use crate::error::Result;
use std::sync::Arc;
use std::time::Duration;

pub use crate::node_id::NodeId;

/// Shape of a ring a receiver registered for a sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingShape {
    /// Payload words per slot.
    pub capacity: usize,
    /// Slots.
    pub depth: usize,
}

/// Words of inline control data a notification carries.
pub const IMM_WORDS: usize = 2;

/// A small message delivered to the receiver after the data of the write it follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notification {
    /// Sender.
    pub from: NodeId,
    /// Slot the preceding write landed in (meaningless for notification-only posts).
    pub slot: usize,
    /// Version written into that slot (0 for notification-only posts).
    pub version: u64,
    /// Inline control words (the protocol message).
    pub imm: [u64; IMM_WORDS],
}

/// Completion of a posted work request at the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// The id [`Endpoint::post_write`] returned.
    pub wr_id: u64,
}

/// Outcome of reading a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotRead {
    /// Version in the header (loaded last).
    pub header: u64,
    /// Version in the footer (loaded first).
    pub footer: u64,
    /// Payload words copied out.
    pub len: usize,
    /// False when the payload disagrees with the checksum written with it (the rdma backend,
    /// whose polling readers cannot rely on the order bytes land in); true where a backend
    /// writes none.
    pub checksum_ok: bool,
}

impl SlotRead {
    /// True when no write overlapped the read and the payload is all of one version.
    pub fn consistent(&self) -> bool {
        self.header == self.footer && self.checksum_ok
    }
}

/// One node's access to the fabric.
pub trait Endpoint: Send {
    /// This endpoint's node.
    fn node(&self) -> NodeId;
    /// Slots in the ring `to` registered for this node.
    fn remote_depth(&self, to: NodeId) -> Result<usize>;
    /// Posts a one-sided write of `data` (or nothing) tagged `version` into slot `slot` of the
    /// ring `to` registered for this node, followed by `notify` if given. Returns the work
    /// request id its completion will carry. The source must not change until completion.
    ///
    /// # Errors
    /// [`crate::CoreError::Transport`] for an unregistered peer, a slot out of range, a payload
    /// larger than the slot, or a peer that is gone.
    fn post_write(
        &mut self,
        to: NodeId,
        slot: usize,
        version: u64,
        data: Option<Arc<AlignedWords>>,
        len: usize,
        notify: Option<[u64; IMM_WORDS]>,
    ) -> Result<u64>;
    /// Posts a notification alone (a zero-length write-with-immediate: no slot is touched),
    /// delivered after every write this endpoint posted to `to` before it.
    ///
    /// # Errors
    /// [`crate::CoreError::Transport`] for a node not on the fabric or a peer that is gone.
    fn post_notify(&mut self, to: NodeId, imm: [u64; IMM_WORDS]) -> Result<u64>;
    /// Next completion of this endpoint's posted writes, if any.
    fn poll_completion(&mut self) -> Option<Completion>;
    /// Waits up to `timeout` for the next notification addressed to this node.
    fn wait_notification(&mut self, timeout: Duration) -> Option<Notification>;
    /// Copies slot `slot` of the ring registered for sender `from` into `out` (resized).
    ///
    /// # Errors
    /// [`crate::CoreError::Transport`] for an unregistered sender or a slot out of range.
    fn read_slot(&self, from: NodeId, slot: usize, out: &mut Vec<u64>) -> Result<SlotRead>;
    /// A failure the backend noticed by itself (a lost peer, a malformed frame), naming the
    /// peer; drivers ask when a wait comes back empty.
    ///
    /// # Errors
    /// [`crate::CoreError::Transport`] describing the first such failure.
    fn health(&self) -> Result<()> {
        Ok(())
    }
}

/// A boxed endpoint is an endpoint: drivers that pick the transport at run time hold
/// `Box<dyn Endpoint>`.
impl<E: Endpoint + ?Sized> Endpoint for Box<E> {
    fn node(&self) -> NodeId {
        (**self).node()
    }
    fn remote_depth(&self, to: NodeId) -> Result<usize> {
        (**self).remote_depth(to)
    }
    fn post_write(
        &mut self,
        to: NodeId,
        slot: usize,
        version: u64,
        data: Option<Arc<AlignedWords>>,
        len: usize,
        notify: Option<[u64; IMM_WORDS]>,
    ) -> Result<u64> {
        (**self).post_write(to, slot, version, data, len, notify)
    }
    fn post_notify(&mut self, to: NodeId, imm: [u64; IMM_WORDS]) -> Result<u64> {
        (**self).post_notify(to, imm)
    }
    fn poll_completion(&mut self) -> Option<Completion> {
        (**self).poll_completion()
    }
    fn wait_notification(&mut self, timeout: Duration) -> Option<Notification> {
        (**self).wait_notification(timeout)
    }
    fn read_slot(&self, from: NodeId, slot: usize, out: &mut Vec<u64>) -> Result<SlotRead> {
        (**self).read_slot(from, slot, out)
    }
    fn health(&self) -> Result<()> {
        (**self).health()
    }
}

/// Helpers the backends' tests share.
#[cfg(test)]
pub(crate) mod test_support {
    use super::{AlignedWords, Endpoint};
    use crate::TransportFault::{NoSuchPeer, RingOverrun};
    use std::sync::Arc;

    /// Requests every backend refuses, each with its kind: `a` is node 0 and `b` node 1 of a
    /// two-node fabric whose ring from 0 to 1 has one slot of 4 words.
    pub(crate) fn bad_requests_refused_by_kind(a: &mut dyn Endpoint, b: &dyn Endpoint) {
        let src = Arc::new(AlignedWords::zeroed(8));
        let slot_out_of_range = a.post_write(1, 1, 1, Some(src.clone()), 1, None);
        assert_eq!(fault(slot_out_of_range), Some(RingOverrun));
        let longer_than_slot = a.post_write(1, 0, 1, Some(src), 8, None);
        assert_eq!(fault(longer_than_slot), Some(RingOverrun));
        assert_eq!(
            fault(a.post_write(0, 0, 1, None, 0, None)),
            Some(NoSuchPeer)
        );
        let mut out = Vec::new();
        assert_eq!(fault(b.read_slot(1, 0, &mut out)), Some(NoSuchPeer));
    }

    /// The kind of transport failure `r` ended in (None: it succeeded, or failed otherwise).
    pub(crate) fn fault<T>(r: crate::Result<T>) -> Option<crate::TransportFault> {
        r.err().and_then(|e| e.transport_fault())
    }
}
