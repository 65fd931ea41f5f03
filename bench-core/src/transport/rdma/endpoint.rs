//! The ring transport over RDMA: a receive region per node (a notification queue and a slot
//! ring per sender), a connected queue pair and a staging region per peer. Made in two typed
//! steps: [`RdmaEndpoint::create`] gives a [`PreparedEndpoint`] and the address to publish;
//! [`PreparedEndpoint::connect`] with every node's address gives the [`RdmaEndpoint`] that
//! moves messages.

use super::async_events::{describe, Owned};
use super::completion::CompletionQueue;
use super::hardware::*;
use super::memory::MemoryRegion;
use super::queue_pair::{ConnectedQp, PreparedQp};
use super::{err, RdmaDevice, QUEUE};
use crate::error::{CoreError, Result};
use crate::transport::one_sided::layout::read_region_slot;
pub use crate::transport::one_sided::layout::RegionEntry;
use crate::transport::one_sided::send_tracker::{Chain, SendTracker};
use crate::transport::one_sided::send_window::STAGED_ENTRIES;
use crate::transport::one_sided::slot_write::{length_word, payload_checksum, slot_write_plan};
use crate::transport::region::{entry_offset, slot_stride, ENTRY_WORDS};
use crate::transport::ring::poll_with_backoff;
use crate::transport::{
    AlignedWords, Completion, Endpoint, NodeId, Notification, SlotRead, IMM_WORDS,
};
use ibverbs_sys as ffi;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// What a node publishes so that its peers can connect and write to it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RdmaAddress {
    pub(super) lid: u16,
    pub(super) gid: [u8; 16],
    /// The port's active MTU (verbs enum value): each connection uses the smaller end's.
    pub(super) mtu: u32,
    /// Queue pair number this node made for each peer.
    pub(super) qpn: HashMap<NodeId, u32>,
    /// Initial send PSN of each of those queue pairs.
    pub(super) psn: HashMap<NodeId, u32>,
    /// The receive region: address, key and per-sender layout.
    pub(super) addr: u64,
    pub(super) rkey: u32,
    pub(super) region: HashMap<NodeId, RegionEntry>,
}

/// Per peer: the connected queue pair, and what this node writes there. The queue pair is
/// the first field, so it is destroyed before the staging region it reads from. What is in
/// flight to the peer, and whether it failed, is the send tracker's.
pub(super) struct Peer {
    pub(super) qp: ConnectedQp,
    /// Where this node writes at the peer.
    pub(super) remote: Option<(u64, u32, RegionEntry)>,
    pub(super) staging: MemoryRegion,
}

/// What create makes and connect needs: the verbs objects of one node before its queue
/// pairs know their peers.
pub struct PreparedEndpoint {
    /// Per peer: its queue pair and staging region.
    pub(super) peers: HashMap<NodeId, (PreparedQp, MemoryRegion)>,
    pub(super) node: NodeId,
    pub(super) dev: Arc<RdmaDevice>,
    pub(super) send_cq: Arc<CompletionQueue>,
    pub(super) recv_cq: Arc<CompletionQueue>,
    pub(super) region: MemoryRegion,
    pub(super) senders: HashMap<NodeId, RegionEntry>,
}

/// One node's endpoint on an RDMA fabric, connected. Fields drop in order: queue pairs (with
/// their staging regions) first, then the completion queues and the receive region.
pub struct RdmaEndpoint {
    pub(super) peers: HashMap<NodeId, Peer>,
    pub(super) node: NodeId,
    pub(super) send_cq: Arc<CompletionQueue>,
    pub(super) recv_cq: Arc<CompletionQueue>,
    pub(super) region: MemoryRegion,
    /// Senders with a ring here.
    pub(super) senders: HashMap<NodeId, RegionEntry>,
    /// Next entry to consume per sender.
    pub(super) heads: HashMap<NodeId, u64>,
    pub(super) by_qpn: HashMap<u32, NodeId>,
    /// The send side's bookkeeping: chains in flight per peer and the staging they read,
    /// finished writes, peers given up, and every failure noticed ([`SendTracker`]).
    pub(super) sends: SendTracker,
    /// The device, whose asynchronous events health() reads.
    pub(super) dev: Arc<RdmaDevice>,
}

impl std::fmt::Debug for RdmaEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RdmaEndpoint(node {}, {} peers)",
            self.node,
            self.peers.len()
        )
    }
}

impl RdmaEndpoint {
    /// Bytes this endpoint has registered (pinned): its receive region and the staging region
    /// of each peer.
    pub fn pinned_bytes(&self) -> u64 {
        let staging: u64 = self.peers.values().map(|p| p.staging.bytes()).sum();
        self.region.bytes() + staging
    }

    pub(super) fn post_recv(&mut self, peer: NodeId) -> Result<()> {
        let node = self.node;
        let p = self
            .peers
            .get_mut(&peer)
            .ok_or_else(|| err(format!("node {node}: no queue pair to node {peer}")))?;
        p.qp.post_recv(peer as u64).map_err(|rc| {
            err(format!(
                "node {node}: cannot post a receive request for node {peer} (errno {rc})"
            ))
        })
    }

    /// The send bookkeeping and the verbs it drives, borrowed together.
    pub(super) fn send_side(&mut self) -> (&mut SendTracker, Hardware<'_>) {
        (
            &mut self.sends,
            Hardware {
                peers: &mut self.peers,
                send_cq: &self.send_cq,
            },
        )
    }

    pub(super) fn write_wr(
        sge: &mut ffi::ibv_sge,
        remote_addr: u64,
        rkey: u32,
        opcode: ffi::ibv_wr_opcode::Type,
        id: u64,
        signaled: bool,
    ) -> ffi::ibv_send_wr {
        let mut wr = ffi::ibv_send_wr {
            wr_id: id,
            sg_list: sge,
            num_sge: 1,
            opcode,
            send_flags: if signaled {
                ffi::ibv_send_flags::IBV_SEND_SIGNALED.0
            } else {
                0
            },
            ..Default::default()
        };
        wr.wr.rdma = ffi::ibv_send_wr__bindgen_ty_2__bindgen_ty_1 { remote_addr, rkey };
        wr
    }

    pub(super) fn target(&self, to: NodeId) -> Result<(u64, u32, RegionEntry)> {
        self.peers.get(&to).and_then(|p| p.remote).ok_or_else(|| {
            err(format!(
                "node {}: no ring registered at node {to}",
                self.node
            ))
        })
    }
}

/// Teardown: the chains still in flight are reaped first (up to 2 s), so that a final write
/// (a DONE or STOP) whose packet was lost is retransmitted rather than destroyed with its
/// queue pair; then every queue pair goes to the error state, flushing what is left, and the
/// fields drop (queue pairs before the staging they read, completion queues after).
impl Drop for RdmaEndpoint {
    fn drop(&mut self) {
        let (sends, mut hw) = self.send_side();
        sends.teardown(&mut hw, Duration::from_secs(2));
    }
}

impl Endpoint for RdmaEndpoint {
    fn node(&self) -> NodeId {
        self.node
    }

    fn remote_depth(&self, to: NodeId) -> Result<usize> {
        self.target(to).map(|t| t.2.depth)
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
        let (addr, rkey, e) = self.target(to)?;
        if slot >= e.depth || len > e.capacity || data.as_ref().map_or(len > 0, |d| d.len() < len) {
            return Err(err(format!(
                "node {}: write of {len} words into slot {slot} of node {to}'s ring of {} slots of {} words",
                self.node, e.depth, e.capacity
            )));
        }
        // Admitted first (SendTracker::admit), so that no staging entry is written while a
        // chain in flight reads it: room in the window, then the slot's previous write
        // completed.
        let chain = Chain::Write {
            slot,
            notify: notify.is_some(),
        };
        let (sends, mut hw) = self.send_side();
        let admitted = sends.admit(&mut hw, to, chain)?;
        let stride = slot_stride(e.capacity);
        let p = self.peers.get_mut(&to).expect("peer");
        let lkey = p.staging.lkey();
        let st = p.staging.words().as_slice();
        // The staged copy of the slot, laid out as the remote slot.
        let base = STAGED_ENTRIES * ENTRY_WORDS + slot * stride;
        st[base].store(version, Ordering::Relaxed);
        if let Some(d) = &data {
            crate::transport::aligned::copy_words(
                &st[base + 2..base + 2 + len],
                &d.as_slice()[..len],
            );
        }
        // The payload's checksum rides above its length (slot_write::payload_checksum).
        let payload = st[base + 2..base + 2 + len]
            .iter()
            .map(|w| w.load(Ordering::Relaxed));
        st[base + 1].store(
            length_word(len, payload_checksum(payload)),
            Ordering::Relaxed,
        );
        st[base + e.capacity + 2].store(version, Ordering::Relaxed);
        let saddr = p.staging.addr();
        let remote_slot = addr + ((e.ring + slot * stride) * 8) as u64;
        // Header, then length and payload, then footer: three WRITEs, placed in this order
        // (slot_write), so that a reader polling the slot never takes a payload of v + 1
        // between a header and a footer of v. Unsignaled but for the chain's last request
        // (Admitted::request).
        let plan = slot_write_plan(e.capacity, len);
        let mut sges = plan.map(|seg| ffi::ibv_sge {
            addr: saddr + ((base + seg.word) * 8) as u64,
            length: seg.bytes,
            lkey,
        });
        let mut wrs = Vec::with_capacity(plan.len() + 1);
        for (i, (sge, seg)) in sges.iter_mut().zip(plan).enumerate() {
            let (id, signaled) = admitted.request(i);
            wrs.push(Self::write_wr(
                sge,
                remote_slot + seg.byte_offset(),
                rkey,
                ffi::ibv_wr_opcode::IBV_WR_RDMA_WRITE,
                id,
                signaled,
            ));
        }
        let mut note_sge = ffi::ibv_sge {
            addr: 0,
            length: (ENTRY_WORDS * 8) as u32,
            lkey,
        };
        if let (Some(imm), Some((t, entry))) = (notify, admitted.notification) {
            let ent = entry * ENTRY_WORDS;
            for (i, v) in [t + 1, slot as u64, version, imm[0], imm[1]]
                .into_iter()
                .enumerate()
            {
                st[ent + i].store(v, Ordering::Relaxed);
            }
            note_sge.addr = saddr + (ent * 8) as u64;
            let remote_entry = addr + (entry_offset(e.queue, t as usize % QUEUE) * 8) as u64;
            let (id, signaled) = admitted.request(wrs.len());
            let mut w = Self::write_wr(
                &mut note_sge,
                remote_entry,
                rkey,
                ffi::ibv_wr_opcode::IBV_WR_RDMA_WRITE_WITH_IMM,
                id,
                signaled,
            );
            w.__bindgen_anon_1.imm_data = (t as u32).to_be();
            wrs.push(w);
        }
        let (sends, mut hw) = self.send_side();
        // SAFETY: every scatter entry names the staging region of `to` with its lkey, which
        // outlives the queue pair; the entry and slot staged above were free (admitted: fewer
        // than STAGED_ENTRIES chains in flight, so the entry's previous chain had completed,
        // and no write to the slot's tag in flight), and neither is restaged before this
        // chain's final completion is polled (SendTracker; its property test against a mock
        // of the verbs).
        unsafe { sends.post(&mut hw, &admitted, wrs.as_mut_slice())? };
        Ok(admitted.id)
    }

    fn post_notify(&mut self, to: NodeId, imm: [u64; IMM_WORDS]) -> Result<u64> {
        let (addr, rkey, e) = self.target(to)?;
        // Admitted first: the notification's staging entry must not be read by a chain in
        // flight.
        let (sends, mut hw) = self.send_side();
        let admitted = sends.admit(&mut hw, to, Chain::Notify)?;
        let (t, entry) = admitted
            .notification
            .expect("a notification is staged in an entry");
        let p = self.peers.get_mut(&to).expect("peer");
        let lkey = p.staging.lkey();
        let ent = entry * ENTRY_WORDS;
        let st = p.staging.words().as_slice();
        for (i, v) in [t + 1, 0, 0, imm[0], imm[1]].into_iter().enumerate() {
            st[ent + i].store(v, Ordering::Relaxed);
        }
        let mut sge = ffi::ibv_sge {
            addr: p.staging.addr() + (ent * 8) as u64,
            length: (ENTRY_WORDS * 8) as u32,
            lkey,
        };
        let remote_entry = addr + (entry_offset(e.queue, t as usize % QUEUE) * 8) as u64;
        let (id, signaled) = admitted.request(0);
        let mut w = Self::write_wr(
            &mut sge,
            remote_entry,
            rkey,
            ffi::ibv_wr_opcode::IBV_WR_RDMA_WRITE_WITH_IMM,
            id,
            signaled,
        );
        w.__bindgen_anon_1.imm_data = (t as u32).to_be();
        let (sends, mut hw) = self.send_side();
        // SAFETY: the scatter entry names the staging region of `to` with its lkey, and the
        // entry was admitted (see post_write).
        unsafe { sends.post(&mut hw, &admitted, std::slice::from_mut(&mut w))? };
        Ok(admitted.id)
    }

    fn poll_completion(&mut self) -> Option<Completion> {
        let (sends, mut hw) = self.send_side();
        sends.poll_completion(&mut hw)
    }

    fn wait_notification(&mut self, timeout: Duration) -> Option<Notification> {
        poll_with_backoff(timeout, || self.pop())
    }

    fn read_slot(&self, from: NodeId, slot: usize, out: &mut Vec<u64>) -> Result<SlotRead> {
        let e = self.senders.get(&from).ok_or_else(|| {
            err(format!(
                "node {}: no ring registered for node {from}",
                self.node
            ))
        })?;
        if slot >= e.depth {
            return Err(err(format!(
                "node {}: slot {slot} out of range for node {from}'s ring of {}",
                self.node, e.depth
            )));
        }
        Ok(read_region_slot(
            self.region.words().as_slice(),
            e,
            slot,
            out,
        ))
    }

    /// The first failure this endpoint noticed (a refused post, a failed completion, an
    /// out-of-order notification), else the first fatal asynchronous event of the device that
    /// concerns it: one of its queue pairs (naming the peer), its completion queues, its port,
    /// or the whole device.
    fn health(&self) -> Result<()> {
        if let Some((fault, message)) = self.sends.failures().first() {
            return Err(CoreError::transport(*fault, message.clone()));
        }
        let peer_of_qp = |qpn: u32| self.by_qpn.get(&qpn).copied();
        let owned = Owned {
            node: self.node,
            peer_of_qp: &peer_of_qp,
            cqs: &[self.send_cq.raw() as usize, self.recv_cq.raw() as usize],
            port: self.dev.port(),
        };
        let events = self.dev.async_failures();
        match events.iter().find_map(|f| describe(f, &owned)) {
            Some((fault, message)) => Err(CoreError::transport(fault, message)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::RingShape;

    #[test]
    fn a_missing_device_is_a_clear_error_not_a_panic() {
        let e = RdmaDevice::open(Some("no-such-rdma-device-0"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("transport: rdma:"), "{e}");
        assert!(
            e.contains("no-such-rdma-device-0") || e.contains("no RDMA devices"),
            "{e}"
        );
    }

    /// Needs an RDMA device (a testbed, or SoftRoCE): `SYNCBENCH_RDMA_DEVICE=rxe0 cargo test
    /// -p bench-core --features rdma -- --ignored rdma`.
    #[test]
    #[ignore = "needs an RDMA device (set SYNCBENCH_RDMA_DEVICE; SoftRoCE works)"]
    fn write_notify_and_read_through_a_device() {
        let dev = RdmaDevice::open(None).unwrap();
        let shape = RingShape {
            capacity: 4,
            depth: 2,
        };
        let (a, aa) = RdmaEndpoint::create(
            dev.clone(),
            0,
            &HashMap::from([(1, shape)]),
            &HashMap::from([(1, shape)]),
        )
        .unwrap();
        let (b, ba) = RdmaEndpoint::create(
            dev,
            1,
            &HashMap::from([(0, shape)]),
            &HashMap::from([(0, shape)]),
        )
        .unwrap();
        let table = vec![aa, ba];
        let mut a = a.connect(&table).unwrap();
        let mut b = b.connect(&table).unwrap();
        let src = Arc::new(AlignedWords::from_words(&[1, 2, 3]));
        a.post_write(1, 1, 7, Some(src), 3, Some([9, 8])).unwrap();
        let n = b.wait_notification(Duration::from_secs(5)).unwrap();
        assert_eq!((n.from, n.slot, n.version, n.imm), (0, 1, 7, [9, 8]));
        let mut out = Vec::new();
        let r = b.read_slot(0, 1, &mut out).unwrap();
        assert!(r.consistent());
        assert_eq!((r.header, out.as_slice()), (7, &[1u64, 2, 3][..]));
        b.post_notify(0, [5, 5]).unwrap();
        assert_eq!(
            a.wait_notification(Duration::from_secs(5)).unwrap().imm,
            [5, 5]
        );
        assert!(a.poll_completion().is_some());
        a.health().unwrap();
    }
}
