//! The ring transport over RDMA: a receive region per node (a notification queue and a slot
//! ring per sender), a connected queue pair and a staging region per peer. Made in two typed
//! steps: [`RdmaEndpoint::create`] gives a [`PreparedEndpoint`] and the address to publish;
//! [`PreparedEndpoint::connect`] with every node's address gives the [`RdmaEndpoint`] that
//! moves messages.

use super::async_events::{describe, Owned};
use super::completion::{checked_entries, status_name, CompletionQueue};
use super::memory::{self, MemoryRegion};
use super::queue_pair::{ConnectedQp, PreparedQp, RemoteQp};
use super::send_tracker::{Chain, PostError, SendTracker, SendVerbs, Wc};
use super::send_window::STAGED_ENTRIES;
use super::slot_write::{length_word, payload_checksum, slot_write_plan, SLOT_WRITE_WRS};
use super::{err, RdmaDevice, QUEUE};
use crate::error::{CoreError, Result, TransportFault};
use crate::transport::ring::{poll_with_backoff, read_slot_with_check, slot_words};
use crate::transport::{
    AlignedWords, Completion, Endpoint, NodeId, Notification, RingShape, SlotRead, IMM_WORDS,
};
use ibverbs_sys as ffi;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

const PAGE_WORDS: usize = crate::transport::aligned::PAGE / 8;
const ENTRY_WORDS: usize = 8;
const QUEUE_WORDS: usize = 8 + QUEUE * ENTRY_WORDS;

/// The largest node id a work-request id can name ([`super::wr_id`]).
const MAX_NODE: NodeId = 0xFFFF;

fn round_page(words: usize) -> usize {
    words.next_multiple_of(PAGE_WORDS)
}

/// Where a sender's queue and ring are in a receiver's region (word offsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RegionEntry {
    queue: usize,
    ring: usize,
    capacity: usize,
    depth: usize,
}

/// What a node publishes so that its peers can connect and write to it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RdmaAddress {
    lid: u16,
    gid: [u8; 16],
    /// The port's active MTU (verbs enum value): each connection uses the smaller end's.
    mtu: u32,
    /// Queue pair number this node made for each peer.
    qpn: HashMap<NodeId, u32>,
    /// Initial send PSN of each of those queue pairs.
    psn: HashMap<NodeId, u32>,
    /// The receive region: address, key and per-sender layout.
    addr: u64,
    rkey: u32,
    region: HashMap<NodeId, RegionEntry>,
}

/// Per peer: the connected queue pair, and what this node writes there. The queue pair is
/// the first field, so it is destroyed before the staging region it reads from. What is in
/// flight to the peer, and whether it failed, is the send tracker's.
struct Peer {
    qp: ConnectedQp,
    /// Where this node writes at the peer.
    remote: Option<(u64, u32, RegionEntry)>,
    staging: MemoryRegion,
}

/// What create makes and connect needs: the verbs objects of one node before its queue
/// pairs know their peers.
pub struct PreparedEndpoint {
    /// Per peer: its queue pair and staging region.
    peers: HashMap<NodeId, (PreparedQp, MemoryRegion)>,
    node: NodeId,
    dev: Arc<RdmaDevice>,
    send_cq: Arc<CompletionQueue>,
    recv_cq: Arc<CompletionQueue>,
    region: MemoryRegion,
    senders: HashMap<NodeId, RegionEntry>,
}

/// One node's endpoint on an RDMA fabric, connected. Fields drop in order: queue pairs (with
/// their staging regions) first, then the completion queues and the receive region.
pub struct RdmaEndpoint {
    peers: HashMap<NodeId, Peer>,
    node: NodeId,
    send_cq: Arc<CompletionQueue>,
    recv_cq: Arc<CompletionQueue>,
    region: MemoryRegion,
    /// Senders with a ring here.
    senders: HashMap<NodeId, RegionEntry>,
    /// Next entry to consume per sender.
    heads: HashMap<NodeId, u64>,
    by_qpn: HashMap<u32, NodeId>,
    /// The send side's bookkeeping: chains in flight per peer and the staging they read,
    /// finished writes, peers given up, and every failure noticed ([`SendTracker`]).
    sends: SendTracker,
    /// The device, whose asynchronous events health() reads.
    dev: Arc<RdmaDevice>,
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
    /// Creates node `node`'s verbs objects: its receive region (a ring of the given shape per
    /// sender in `local`), a queue pair and staging region per peer (`local` senders and
    /// `remote` receivers), and the address peers connect with.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when a verbs object cannot be created (what was made is
    /// released).
    pub fn create(
        dev: Arc<RdmaDevice>,
        node: NodeId,
        local: &HashMap<NodeId, RingShape>,
        remote: &HashMap<NodeId, RingShape>,
    ) -> Result<(PreparedEndpoint, RdmaAddress)> {
        if let Some(&big) = local.keys().chain(remote.keys()).chain([&node]).max() {
            if big > MAX_NODE {
                return Err(err(format!(
                    "node ids up to {MAX_NODE} (work-request ids carry 16 bits of peer), got node {big}"
                )));
            }
        }
        let mut senders: Vec<(NodeId, RingShape)> = local.iter().map(|(&f, &s)| (f, s)).collect();
        senders.sort_by_key(|s| s.0);
        let mut offset = 0;
        let mut layout = HashMap::new();
        for &(from, shape) in &senders {
            let queue = offset;
            offset += round_page(QUEUE_WORDS);
            let ring = offset;
            offset += shape.depth * round_page(slot_words(shape.capacity));
            layout.insert(
                from,
                RegionEntry {
                    queue,
                    ring,
                    capacity: shape.capacity,
                    depth: shape.depth,
                },
            );
        }
        let region =
            MemoryRegion::register(&dev, AlignedWords::zeroed(offset.max(PAGE_WORDS)), true)?;
        // Send completions: per peer at most STAGED_ENTRIES chains in flight, each of at most
        // SLOT_WRITE_WRS + 1 requests (header, length and payload, footer, notification),
        // every one of which completes when it fails (parts are unsignaled).
        // Receive completions: one per posted receive request.
        let chain = SLOT_WRITE_WRS as usize + 1;
        let send_cq = Arc::new(CompletionQueue::create(
            &dev,
            checked_entries(chain * STAGED_ENTRIES * remote.len(), dev.max_cqe(), "send")?,
        )?);
        let recv_cq = Arc::new(CompletionQueue::create(
            &dev,
            checked_entries(QUEUE * local.len(), dev.max_cqe(), "receive")?,
        )?);
        let mut all: Vec<NodeId> = local.keys().chain(remote.keys()).copied().collect();
        all.sort_unstable();
        all.dedup();
        let mut qpn = HashMap::new();
        let mut psn = HashMap::new();
        let mut peers = HashMap::new();
        for peer in all {
            // Notification entries, then a copy of each remote slot, laid out as the remote
            // ring (the same stride), so that one word offset names a segment in both.
            let cap = remote.get(&peer).map_or(1, |s| s.capacity);
            let staging = AlignedWords::zeroed(
                STAGED_ENTRIES * ENTRY_WORDS
                    + remote
                        .get(&peer)
                        .map_or(0, |s| s.depth * round_page(slot_words(cap))),
            );
            let staging = MemoryRegion::register(&dev, staging, false)?;
            let qp = PreparedQp::create(&dev, &send_cq, &recv_cq, QUEUE as u32)
                .map_err(|e| err(format!("node {node}: queue pair for node {peer}: {e}")))?;
            qpn.insert(peer, qp.number());
            psn.insert(peer, qp.psn());
            peers.insert(peer, (qp, staging));
        }
        let (gid, _) = dev.gid();
        let address = RdmaAddress {
            lid: dev.lid(),
            gid,
            mtu: dev.mtu(),
            qpn,
            psn,
            addr: region.addr(),
            rkey: region.rkey(),
            region: layout.clone(),
        };
        let ep = PreparedEndpoint {
            peers,
            node,
            dev,
            send_cq,
            recv_cq,
            region,
            senders: layout,
        };
        Ok((ep, address))
    }
}

impl PreparedEndpoint {
    /// Connects every queue pair to its peer's (`table[j]` is node `j`'s address), posts the
    /// receive requests, and records where this node writes.
    ///
    /// # Errors
    /// [`CoreError::Transport`] naming the peer whose address lacks this node or whose queue
    /// pair cannot be brought to ready-to-send.
    pub fn connect(self, table: &[RdmaAddress]) -> Result<RdmaEndpoint> {
        let node = self.node;
        let mut ep = RdmaEndpoint {
            peers: HashMap::new(),
            node,
            send_cq: self.send_cq,
            recv_cq: self.recv_cq,
            region: self.region,
            heads: self.senders.keys().map(|&k| (k, 0)).collect(),
            senders: self.senders,
            by_qpn: HashMap::new(),
            sends: SendTracker::new(node),
            dev: self.dev.clone(),
        };
        let mut prepared: Vec<(NodeId, (PreparedQp, MemoryRegion))> =
            self.peers.into_iter().collect();
        prepared.sort_by_key(|p| p.0);
        for (peer, (qp, staging)) in prepared {
            let theirs = table
                .get(peer)
                .ok_or_else(|| err(format!("node {node}: no address for node {peer}")))?;
            let dest = *theirs
                .qpn
                .get(&node)
                .ok_or_else(|| err(format!("node {peer} made no queue pair for node {node}")))?;
            let psn = *theirs
                .psn
                .get(&node)
                .ok_or_else(|| err(format!("node {peer} published no PSN for node {node}")))?;
            let remote = RemoteQp {
                lid: theirs.lid,
                gid: theirs.gid,
                qpn: dest,
                psn,
                mtu: theirs.mtu,
            };
            let qp = qp.connect(
                &self.dev,
                remote,
                &format!("node {node}: queue pair to node {peer}"),
            )?;
            ep.by_qpn.insert(qp.number(), peer);
            ep.peers.insert(
                peer,
                Peer {
                    qp,
                    remote: theirs
                        .region
                        .get(&node)
                        .map(|entry| (theirs.addr, theirs.rkey, *entry)),
                    staging,
                },
            );
            ep.sends.add_peer(peer);
            if ep.senders.contains_key(&peer) {
                for _ in 0..QUEUE {
                    ep.post_recv(peer)?;
                }
            }
        }
        eprintln!(
            "rdma: node {node}: connected to {} peer(s) on {} port {}; {} pinned by this endpoint, {} by this process",
            ep.peers.len(),
            ep.dev.name(),
            ep.dev.port(),
            mib(ep.pinned_bytes()),
            mib(memory::pinned_bytes())
        );
        Ok(ep)
    }
}

/// `bytes` as MiB, with the exact count.
fn mib(bytes: u64) -> String {
    format!(
        "{:.1} MiB ({bytes} bytes)",
        bytes as f64 / f64::from(1u32 << 20)
    )
}

impl RdmaEndpoint {
    /// Bytes this endpoint has registered (pinned): its receive region and the staging region
    /// of each peer.
    pub fn pinned_bytes(&self) -> u64 {
        let staging: u64 = self.peers.values().map(|p| p.staging.bytes()).sum();
        self.region.bytes() + staging
    }

    fn post_recv(&mut self, peer: NodeId) -> Result<()> {
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
    fn send_side(&mut self) -> (&mut SendTracker, Hardware<'_>) {
        (
            &mut self.sends,
            Hardware {
                peers: &mut self.peers,
                send_cq: &self.send_cq,
            },
        )
    }

    fn write_wr(
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

    fn target(&self, to: NodeId) -> Result<(u64, u32, RegionEntry)> {
        self.peers.get(&to).and_then(|p| p.remote).ok_or_else(|| {
            err(format!(
                "node {}: no ring registered at node {to}",
                self.node
            ))
        })
    }

    fn pop(&mut self) -> Option<Notification> {
        let mut wc = [ffi::ibv_wc::default(); 1];
        if self.recv_cq.poll(&mut wc) == 0 {
            return None;
        }
        let c = wc[0];
        let from = *self.by_qpn.get(&c.qp_num)?;
        if let Some((status, vendor)) = c.error() {
            self.sends.record(
                TransportFault::PeerLost,
                format!(
                    "node {}: the connection from node {from} failed: {}, vendor error {vendor}",
                    self.node,
                    status_name(status)
                ),
            );
            return None;
        }
        let e = *self.senders.get(&from)?;
        let h = self.heads.get_mut(&from)?;
        let t = c.imm_data().map(u32::from_be);
        let at = e.queue + 8 + entry_index(t, *h) * ENTRY_WORDS;
        let w = &self.region.words().as_slice()[at..at + ENTRY_WORDS];
        let v = |j: usize| w[j].load(Ordering::Acquire);
        let (expected, next) = accept_entry(t, *h, v(0));
        *h = next;
        let note = expected.then(|| Notification {
            from,
            slot: v(1) as usize,
            version: v(2),
            imm: [v(3), v(4)],
        });
        if !expected {
            self.sends.record(
                TransportFault::Malformed,
                format!(
                    "node {}: notification {next} from node {from} arrived out of order (entry holds {})",
                    self.node,
                    v(0)
                ),
            );
        }
        // The receive request was consumed either way: repost it, or the sender would
        // eventually stall on a queue with no receive posted.
        if let Err(e) = self.post_recv(from) {
            self.sends.record(TransportFault::Device, e.to_string());
        }
        note
    }
}

/// The queue entry a notification's receive completion names: the one of its immediate (the
/// sender's notification number), else the next expected from the sender (`head`), so that a
/// number the sender skipped (a post it gave up) does not shift every later notification onto
/// its predecessor's entry.
fn entry_index(imm: Option<u32>, head: u64) -> usize {
    imm.map_or(head as usize, |t| t as usize) % QUEUE
}

/// Whether the queue entry whose first word is `word` holds the notification announced (the
/// entry of number t holds t + 1; without an immediate, the one after `head`), and the head
/// after it: the entry's number when it does; else `head + 1`, the entry skipped (an
/// out-of-order notification: reported, and its receive request reposted all the same).
fn accept_entry(imm: Option<u32>, head: u64, word: u64) -> (bool, u64) {
    let expected = match imm {
        Some(t) => word as u32 == t.wrapping_add(1),
        None => word == head + 1,
    };
    (expected, if expected { word } else { head + 1 })
}

/// The send verbs on an endpoint's queue pairs and send completion queue, which its send
/// bookkeeping ([`SendTracker`]) drives.
struct Hardware<'a> {
    peers: &'a mut HashMap<NodeId, Peer>,
    send_cq: &'a CompletionQueue,
}

impl SendVerbs for Hardware<'_> {
    type Wr = ffi::ibv_send_wr;

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
        let stride = round_page(slot_words(e.capacity));
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
            let remote_entry =
                addr + ((e.queue + 8 + (t as usize % QUEUE) * ENTRY_WORDS) * 8) as u64;
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
        let remote_entry = addr + ((e.queue + 8 + (t as usize % QUEUE) * ENTRY_WORDS) * 8) as u64;
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
        let start = e.ring + slot * round_page(slot_words(e.capacity));
        let s = &self.region.words().as_slice()[start..start + slot_words(e.capacity)];
        let (mut read, checksum) = read_slot_with_check(s, e.capacity, out);
        read.checksum_ok = payload_checksum(out.iter().copied()) == checksum;
        Ok(read)
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

    #[test]
    fn an_out_of_order_entry_is_skipped_and_the_head_moves_on_by_one() {
        // In order, by the immediate: notification 4 is in entry 4, which holds 5.
        assert_eq!(entry_index(Some(4), 0), 4);
        assert_eq!(accept_entry(Some(4), 4, 5), (true, 5));
        // A number the sender skipped (a post it gave up) does not shift the next one.
        assert_eq!(accept_entry(Some(6), 5, 7), (true, 7));
        // Without an immediate: the entry after the head.
        assert_eq!(entry_index(None, 9), 9);
        assert_eq!(accept_entry(None, 9, 10), (true, 10));
        // The entry holds something else: skipped, reported, and the head moves on by one
        // (pop reposts the receive request on both paths).
        assert_eq!(accept_entry(Some(4), 4, 3), (false, 5));
        assert_eq!(accept_entry(None, 9, 0), (false, 10));
        // Numbers wrap the queue's entries, and the immediate's 32 bits.
        assert_eq!(entry_index(Some(QUEUE as u32 + 3), 0), 3);
        assert_eq!(entry_index(None, QUEUE as u64 * 2 + 1), 1);
        assert_eq!(accept_entry(Some(u32::MAX), 7, 1 << 32), (true, 1 << 32));
    }

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
