//! The ring transport over RDMA: a receive region per node (a notification queue and a slot
//! ring per sender), a connected queue pair and a staging region per peer. Made in two typed
//! steps: [`RdmaEndpoint::create`] gives a [`PreparedEndpoint`] and the address to publish;
//! [`PreparedEndpoint::connect`] with every node's address gives the [`RdmaEndpoint`] that
//! moves messages.

use super::async_events::{describe, Owned};
use super::completion::{checked_entries, status_name, CompletionQueue};
use super::memory::{self, MemoryRegion};
use super::queue_pair::{ConnectedQp, PreparedQp, RemoteQp};
use super::send_window::{SendWindow, STAGED_ENTRIES};
use super::slot_write::{slot_write_plan, SLOT_WRITE_WRS};
use super::wr_id::{decode, encode, slot_tag, WrKind};
use super::{err, RdmaDevice, QUEUE};
use crate::error::{CoreError, Result, TransportFault};
use crate::transport::ring::{poll_with_backoff, read_slot, slot_words};
use crate::transport::{
    AlignedWords, Completion, Endpoint, NodeId, Notification, RingShape, SlotRead, IMM_WORDS,
};
use ibverbs_sys as ffi;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
/// the first field, so it is destroyed before the staging region it reads from.
struct Peer {
    qp: ConnectedQp,
    /// Where this node writes at the peer.
    remote: Option<(u64, u32, RegionEntry)>,
    staging: MemoryRegion,
    /// Chains in flight and the staging they read.
    window: SendWindow,
    /// The connection failed (a refused post or a failed completion): the queue pair is in
    /// the error state, and writes to this peer are refused.
    dead: bool,
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
    cq: VecDeque<Completion>,
    next_wr: u64,
    failures: Vec<(TransportFault, String)>,
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
            cq: VecDeque::new(),
            next_wr: 0,
            failures: Vec::new(),
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
                    window: SendWindow::default(),
                    dead: false,
                },
            );
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

    /// Polls the send completion queue once; retires final work requests.
    fn poll_send(&mut self) {
        let mut wc = [ffi::ibv_wc::default(); 16];
        let n = self.send_cq.poll(&mut wc);
        for c in wc.iter().take(n) {
            let id = c.wr_id();
            let (peer, kind, seq) = decode(id);
            let failed = c.error();
            let first_failure = failed.is_some()
                && self
                    .peers
                    .get_mut(&peer)
                    .is_some_and(|p| !std::mem::replace(&mut p.dead, true));
            if let (true, Some((status, vendor))) = (first_failure, failed) {
                let what = match kind {
                    WrKind::Write(_) => "a write",
                    WrKind::Notify => "a notification",
                    WrKind::Part => "part of a write",
                };
                self.failures.push((TransportFault::PeerLost, format!(
                    "node {}: {what} to node {peer} (request {seq}) failed: {}, vendor error {vendor}: peer lost or unreachable",
                    self.node,
                    status_name(status)
                )));
            }
            // Parts of a chain are unsignaled: they complete only on error, and are no
            // finished write. A failed final request is reported through health(), not as a
            // completion.
            let finished = match self.peers.get_mut(&peer) {
                Some(p) if kind != WrKind::Part => p.window.completed(id),
                _ => false,
            };
            if finished && failed.is_none() {
                self.cq.push_back(Completion { wr_id: seq });
            }
        }
    }

    /// Waits (polling completions) until a chain of `wrs` requests to `to` may be staged and
    /// posted: room in the send queue and fewer than [`STAGED_ENTRIES`] chains in flight, so
    /// that the staging entry about to be written is no longer read by the device.
    fn wait_for_room(&mut self, to: NodeId, wrs: u32) -> Result<()> {
        if self.peers[&to].dead {
            return Err(CoreError::transport(
                TransportFault::PeerLost,
                format!(
                    "rdma: node {}: the connection to node {to} failed earlier",
                    self.node
                ),
            ));
        }
        let started = Instant::now();
        while !self.peers[&to].window.has_room(wrs) {
            self.poll_send();
            if started.elapsed() > Duration::from_secs(30) {
                return Err(err(format!(
                    "node {}: no send completions from node {to} for 30 s",
                    self.node
                )));
            }
        }
        Ok(())
    }

    /// Posts `wrs` (linked) on the queue pair to `to`, waiting for room.
    ///
    /// # Safety
    /// As [`ConnectedQp::post_send`]: the scatter entries name this endpoint's staging region
    /// of `to`, unchanged until the chain's final request completes.
    unsafe fn post(
        &mut self,
        to: NodeId,
        wrs: &mut [ffi::ibv_send_wr],
        final_id: u64,
    ) -> Result<()> {
        let n = wrs.len() as u32;
        self.wait_for_room(to, n)?;
        let node = self.node;
        let p = self.peers.get_mut(&to).expect("peer");
        // SAFETY: the caller's obligation (above).
        if let Err((rc, posted)) = unsafe { p.qp.post_send(wrs) } {
            // The connection is given up: to the error state (what was posted is flushed),
            // and later writes to this peer are refused rather than staged over a chain the
            // device may still read.
            p.qp.enter_error_state();
            p.dead = true;
            return Err(err(format!(
                "node {node}: posting to node {to} failed after {posted} of {} requests: {}",
                wrs.len(),
                std::io::Error::from_raw_os_error(rc)
            )));
        }
        let p = self.peers.get_mut(&to).expect("peer");
        p.window.posted(final_id, n);
        Ok(())
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
            self.failures.push((
                TransportFault::PeerLost,
                format!(
                    "node {}: the connection from node {from} failed: {}, vendor error {vendor}",
                    self.node,
                    status_name(status)
                ),
            ));
            return None;
        }
        let e = *self.senders.get(&from)?;
        let h = self.heads.get_mut(&from)?;
        // The entry is the one the immediate names (the sender's notification number t, whose
        // entry holds t + 1): a number the sender skipped (a post it gave up) does not shift
        // every later notification onto its predecessor's entry.
        let t = c.imm_data().map(u32::from_be);
        let index = t.map_or(*h as usize, |t| t as usize);
        let at = e.queue + 8 + (index % QUEUE) * ENTRY_WORDS;
        let w = &self.region.words().as_slice()[at..at + ENTRY_WORDS];
        let v = |j: usize| w[j].load(Ordering::Acquire);
        let expected = match t {
            Some(t) => v(0) as u32 == t.wrapping_add(1),
            None => v(0) == *h + 1,
        };
        *h = if expected { v(0) } else { *h + 1 };
        if !expected {
            self.failures.push((
                TransportFault::Malformed,
                format!(
                "node {}: notification {} from node {from} arrived out of order (entry holds {})",
                self.node,
                *h,
                v(0)
            ),
            ));
            // The receive request was consumed all the same: repost it, or the sender would
            // eventually stall on a queue with no receive posted.
            if let Err(e) = self.post_recv(from) {
                self.failures.push((TransportFault::Device, e.to_string()));
            }
            return None;
        }
        let note = Notification {
            from,
            slot: v(1) as usize,
            version: v(2),
            imm: [v(3), v(4)],
        };
        if let Err(e) = self.post_recv(from) {
            self.failures.push((TransportFault::Device, e.to_string()));
        }
        Some(note)
    }
}

/// Teardown: the chains still in flight are reaped first (up to 2 s), so that a final write
/// (a DONE or STOP) whose packet was lost is retransmitted rather than destroyed with its
/// queue pair; then every queue pair goes to the error state, flushing what is left, and the
/// fields drop (queue pairs before the staging they read, completion queues after).
impl Drop for RdmaEndpoint {
    fn drop(&mut self) {
        let started = Instant::now();
        while self
            .peers
            .values()
            .any(|p| !p.dead && p.window.in_flight() > 0)
            && started.elapsed() < Duration::from_secs(2)
        {
            self.poll_send();
            std::thread::yield_now();
        }
        for p in self.peers.values_mut() {
            p.qp.enter_error_state();
        }
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
        // Room first, so that no staging entry is written while a chain in flight reads it;
        // then the staging slot's previous write must have completed.
        self.wait_for_room(to, SLOT_WRITE_WRS + u32::from(notify.is_some()))?;
        let started = Instant::now();
        while self.peers[&to].window.slot_busy(slot_tag(slot)) {
            self.poll_send();
            if started.elapsed() > Duration::from_secs(30) {
                return Err(err(format!(
                    "node {}: a write to node {to} never completed",
                    self.node
                )));
            }
        }
        self.next_wr += 1;
        let id = self.next_wr;
        let final_id = encode(to, WrKind::Write(slot_tag(slot)), id);
        let part_id = encode(to, WrKind::Part, id);
        let stride = round_page(slot_words(e.capacity));
        let p = self.peers.get_mut(&to).expect("peer");
        let lkey = p.staging.lkey();
        let st = p.staging.words().as_slice();
        // The staged copy of the slot, laid out as the remote slot.
        let base = STAGED_ENTRIES * ENTRY_WORDS + slot * stride;
        st[base].store(version, Ordering::Relaxed);
        st[base + 1].store(len as u64, Ordering::Relaxed);
        if let Some(d) = &data {
            crate::transport::aligned::copy_words(
                &st[base + 2..base + 2 + len],
                &d.as_slice()[..len],
            );
        }
        st[base + e.capacity + 2].store(version, Ordering::Relaxed);
        let saddr = p.staging.addr();
        let remote_slot = addr + ((e.ring + slot * stride) * 8) as u64;
        // Header, then length and payload, then footer: three WRITEs, placed in this order
        // (slot_write), so that a reader polling the slot never takes a payload of v + 1
        // between a header and a footer of v. Unsignaled but for the chain's last request.
        let plan = slot_write_plan(e.capacity, len);
        let mut sges = plan.map(|seg| ffi::ibv_sge {
            addr: saddr + ((base + seg.word) * 8) as u64,
            length: seg.bytes,
            lkey,
        });
        let mut wrs = Vec::with_capacity(plan.len() + 1);
        let last = plan.len() - 1;
        for (i, (sge, seg)) in sges.iter_mut().zip(plan).enumerate() {
            let final_request = i == last && notify.is_none();
            wrs.push(Self::write_wr(
                sge,
                remote_slot + seg.byte_offset(),
                rkey,
                ffi::ibv_wr_opcode::IBV_WR_RDMA_WRITE,
                if final_request { final_id } else { part_id },
                final_request,
            ));
        }
        let mut note_sge = ffi::ibv_sge {
            addr: 0,
            length: (ENTRY_WORDS * 8) as u32,
            lkey,
        };
        if let Some(imm) = notify {
            let (t, entry) = p.window.next_notification();
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
            let mut w = Self::write_wr(
                &mut note_sge,
                remote_entry,
                rkey,
                ffi::ibv_wr_opcode::IBV_WR_RDMA_WRITE_WITH_IMM,
                final_id,
                true,
            );
            w.__bindgen_anon_1.imm_data = (t as u32).to_be();
            wrs.push(w);
        }
        // SAFETY: every scatter entry names the staging region of `to` with its lkey; the
        // entry and slot staged above were free (this write waited, before staging, for fewer
        // than STAGED_ENTRIES chains in flight, so the entry's previous chain had completed,
        // and for the slot's previous write), and neither is rewritten before this chain
        // completes (SendWindow; its property test).
        unsafe { self.post(to, &mut wrs, final_id)? };
        Ok(id)
    }

    fn post_notify(&mut self, to: NodeId, imm: [u64; IMM_WORDS]) -> Result<u64> {
        let (addr, rkey, e) = self.target(to)?;
        // Room first: the notification's staging entry must not be read by a chain in flight.
        self.wait_for_room(to, 1)?;
        self.next_wr += 1;
        let id = self.next_wr;
        let final_id = encode(to, WrKind::Notify, id);
        let p = self.peers.get_mut(&to).expect("peer");
        let lkey = p.staging.lkey();
        let (t, entry) = p.window.next_notification();
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
        let mut w = Self::write_wr(
            &mut sge,
            remote_entry,
            rkey,
            ffi::ibv_wr_opcode::IBV_WR_RDMA_WRITE_WITH_IMM,
            final_id,
            true,
        );
        w.__bindgen_anon_1.imm_data = (t as u32).to_be();
        // SAFETY: the scatter entry names the staging region of `to` with its lkey (see
        // post_write).
        unsafe { self.post(to, &mut [w], final_id)? };
        Ok(id)
    }

    fn poll_completion(&mut self) -> Option<Completion> {
        if self.cq.is_empty() {
            self.poll_send();
        }
        self.cq.pop_front()
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
        Ok(read_slot(s, e.capacity, out))
    }

    /// The first failure this endpoint noticed (a refused post, a failed completion, an
    /// out-of-order notification), else the first fatal asynchronous event of the device that
    /// concerns it: one of its queue pairs (naming the peer), its completion queues, its port,
    /// or the whole device.
    fn health(&self) -> Result<()> {
        if let Some((fault, message)) = self.failures.first() {
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
