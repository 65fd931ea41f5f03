//! The RDMA verbs backend (cargo feature `rdma`): RC queue pairs, a registered receive region per
//! node laid out as the shm backend's segment (a notification queue and a slot ring per sender),
//! one-sided RDMA WRITEs into remote slots, and RDMA WRITE_WITH_IMM for notifications.
//!
//! A write posts, on the queue pair to the receiver, (1) the header, length and payload staged in
//! a registered buffer into the remote slot, (2) the footer word into the slot's footer, and with
//! a notification (3) a WRITE_WITH_IMM of the 64-byte queue entry into the receiver's queue, whose
//! receive completion tells the receiver that the entry, and every write before it on that
//! queue pair, has landed (the RC ordering rule). The seqlock of the slot is the same as every
//! backend's, so a reader overlapping a later write sees a torn buffer, as in ASAP. Receivers
//! post one receive request per queue entry and repost after consuming it, so a sender can
//! never overrun a queue: the hardware holds it back (receiver-not-ready retries).
//!
//! Devices: `SYNCBENCH_RDMA_DEVICE` names one (else the first), `SYNCBENCH_RDMA_GID` the GID
//! index (default 0; RoCE v2 usually needs the index of the IPv4-mapped GID). With no device,
//! [`RdmaDevice::open`] returns a [`CoreError::Transport`] saying so; nothing panics.
//!
//! The `ibverbs` crate lists devices; its `-sys` layer (same project) provides the verbs that
//! the safe crate does not wrap (RDMA WRITE, WRITE_WITH_IMM, queue pair transitions by hand).

use super::ring::{poll_with_backoff, read_slot, slot_words};
use super::{
    AlignedWords, Completion, Endpoint, NodeId, Notification, RingShape, SlotRead, IMM_WORDS,
};
use crate::error::{CoreError, Result, TransportFault};
use ibverbs_sys as ffi;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const PAGE_WORDS: usize = super::aligned::PAGE / 8;
/// Entries per notification queue (and receive requests per queue pair).
pub const QUEUE: usize = 256;
const ENTRY_WORDS: usize = 8;
const QUEUE_WORDS: usize = 8 + QUEUE * ENTRY_WORDS;
/// Send requests per queue pair.
const SEND_WRS: u32 = 1024;
/// Posts whose entries are staged at once per peer.
const STAGED_ENTRIES: usize = 64;

fn round_page(words: usize) -> usize {
    words.next_multiple_of(PAGE_WORDS)
}

fn err(what: impl std::fmt::Display) -> CoreError {
    CoreError::transport(TransportFault::Device, format!("rdma: {what}"))
}

/// An opened RDMA device: context, protection domain, port 1 and its addressing.
pub struct RdmaDevice {
    ctx: *mut ffi::ibv_context,
    pd: *mut ffi::ibv_pd,
    name: String,
    lid: u16,
    gid: [u8; 16],
    gid_index: u8,
    mtu: ffi::ibv_mtu,
}

// SAFETY: verbs objects may be used from any thread (libibverbs is thread-safe); the pointers
// are only freed in Drop.
unsafe impl Send for RdmaDevice {}
// SAFETY: as above.
unsafe impl Sync for RdmaDevice {}

impl std::fmt::Debug for RdmaDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "RdmaDevice({}, lid {}, gid index {})",
            self.name, self.lid, self.gid_index
        )
    }
}

impl RdmaDevice {
    /// Names of the RDMA devices present.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when the verbs library finds no RDMA subsystem.
    pub fn names() -> Result<Vec<String>> {
        let list = ibverbs::devices().map_err(|e| {
            err(format!(
                "no RDMA devices ({e}); on a machine without RDMA hardware, SoftRoCE (modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0) provides one"
            ))
        })?;
        Ok(list
            .iter()
            .filter_map(|d| d.name().map(|n| n.to_string_lossy().into_owned()))
            .collect())
    }

    /// Opens `name` (else `$SYNCBENCH_RDMA_DEVICE`, else the first device), port 1.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when there is no device, none of that name, or the device
    /// cannot be opened or queried.
    pub fn open(name: Option<&str>) -> Result<Arc<Self>> {
        let wanted = name
            .map(str::to_string)
            .or_else(|| std::env::var("SYNCBENCH_RDMA_DEVICE").ok());
        let names = Self::names()?;
        if names.is_empty() {
            return Err(err("no RDMA devices present (SoftRoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0)"));
        }
        let index = match &wanted {
            Some(w) => names.iter().position(|n| n == w).ok_or_else(|| {
                err(format!(
                    "no RDMA device named '{w}' (present: {})",
                    names.join(", ")
                ))
            })?,
            None => 0,
        };
        let gid_index: u8 = match std::env::var("SYNCBENCH_RDMA_GID") {
            Ok(g) => g
                .trim()
                .parse()
                .map_err(|_| err(format!("SYNCBENCH_RDMA_GID={g:?} is not a GID index")))?,
            Err(_) => 0,
        };
        // SAFETY: plain verbs calls; every pointer is checked before use and freed in Drop (or
        // here on failure).
        unsafe {
            let mut n = 0;
            let list = ffi::ibv_get_device_list(&mut n);
            if list.is_null() || index >= n as usize {
                return Err(err("the device list changed while opening"));
            }
            let ctx = ffi::ibv_open_device(*list.add(index));
            ffi::ibv_free_device_list(list);
            if ctx.is_null() {
                return Err(err(format!(
                    "cannot open device {}: {}",
                    names[index],
                    std::io::Error::last_os_error()
                )));
            }
            let mut port: ffi::ibv_port_attr = Default::default();
            if ffi::ibv_query_port(
                ctx,
                1,
                &mut port as *mut ffi::ibv_port_attr as *mut ffi::_compat_ibv_port_attr,
            ) != 0
            {
                ffi::ibv_close_device(ctx);
                return Err(err(format!("cannot query port 1 of {}", names[index])));
            }
            let mut gid: ffi::ibv_gid = Default::default();
            if ffi::ibv_query_gid(ctx, 1, gid_index as i32, &mut gid) != 0 {
                ffi::ibv_close_device(ctx);
                return Err(err(format!(
                    "cannot read GID {gid_index} of {}",
                    names[index]
                )));
            }
            let pd = ffi::ibv_alloc_pd(ctx);
            if pd.is_null() {
                ffi::ibv_close_device(ctx);
                return Err(err(format!(
                    "cannot allocate a protection domain on {}",
                    names[index]
                )));
            }
            Ok(Arc::new(RdmaDevice {
                ctx,
                pd,
                name: names[index].clone(),
                lid: port.lid,
                gid: gid.raw,
                gid_index,
                mtu: port.active_mtu.min(ffi::IBV_MTU_4096),
            }))
        }
    }

    /// Registers `words` for local and remote writes.
    fn register(&self, words: &AlignedWords, remote: bool) -> Result<*mut ffi::ibv_mr> {
        let mut access = ffi::ibv_access_flags::IBV_ACCESS_LOCAL_WRITE;
        if remote {
            access |= ffi::ibv_access_flags::IBV_ACCESS_REMOTE_WRITE;
        }
        // SAFETY: the buffer outlives the registration (the endpoint deregisters before
        // dropping it).
        let mr = unsafe {
            ffi::ibv_reg_mr(
                self.pd,
                words.addr() as *mut std::ffi::c_void,
                (words.len().max(1) * 8).next_multiple_of(super::aligned::PAGE),
                access.0 as i32,
            )
        };
        if mr.is_null() {
            return Err(err(format!(
                "cannot register {} bytes on {}: {}",
                words.len() * 8,
                self.name,
                std::io::Error::last_os_error()
            )));
        }
        Ok(mr)
    }
}

impl Drop for RdmaDevice {
    fn drop(&mut self) {
        // SAFETY: created in open; endpoints hold an Arc to the device, so none is left.
        unsafe {
            ffi::ibv_dealloc_pd(self.pd);
            ffi::ibv_close_device(self.ctx);
        }
    }
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
    /// Queue pair number this node made for each peer.
    qpn: HashMap<NodeId, u32>,
    /// The receive region: address, key and per-sender layout.
    addr: u64,
    rkey: u32,
    region: HashMap<NodeId, RegionEntry>,
}

/// Per peer: the queue pair, and what this node writes there.
struct Peer {
    qp: *mut ffi::ibv_qp,
    /// Where this node writes at the peer (after connect).
    remote: Option<(u64, u32, RegionEntry)>,
    staging: AlignedWords,
    staging_mr: *mut ffi::ibv_mr,
    /// Notifications sent to this peer so far.
    sent: u64,
    /// Final work requests in flight: wr id -> send queue entries it covers.
    inflight: HashMap<u64, u32>,
    outstanding: u32,
}

/// One node's endpoint on an RDMA fabric.
pub struct RdmaEndpoint {
    node: NodeId,
    dev: Arc<RdmaDevice>,
    send_cq: *mut ffi::ibv_cq,
    recv_cq: *mut ffi::ibv_cq,
    region: AlignedWords,
    region_mr: *mut ffi::ibv_mr,
    /// Senders with a ring here.
    senders: HashMap<NodeId, RegionEntry>,
    /// Next entry to consume per sender.
    heads: HashMap<NodeId, u64>,
    peers: HashMap<NodeId, Peer>,
    by_qpn: HashMap<u32, NodeId>,
    cq: VecDeque<Completion>,
    next_wr: u64,
    failures: Vec<(TransportFault, String)>,
}

// SAFETY: the endpoint is used by one thread at a time (Endpoint: Send only); verbs objects may
// move between threads.
unsafe impl Send for RdmaEndpoint {}

impl RdmaEndpoint {
    /// Creates node `node`'s endpoint: its receive region (a ring of the given shape per sender
    /// in `local`), a queue pair per peer (`local` senders and `remote` receivers), and the
    /// address peers connect with.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when a verbs object cannot be created.
    pub fn create(
        dev: Arc<RdmaDevice>,
        node: NodeId,
        local: &HashMap<NodeId, RingShape>,
        remote: &HashMap<NodeId, RingShape>,
    ) -> Result<(Self, RdmaAddress)> {
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
        let region = AlignedWords::zeroed(offset.max(PAGE_WORDS));
        let region_mr = dev.register(&region, true)?;
        // SAFETY: verbs calls on the opened device; failures are checked and everything made so
        // far is released by Drop (the endpoint is assembled before any early return below).
        let (send_cq, recv_cq) = unsafe {
            let entries = (SEND_WRS as usize * (local.len() + remote.len()).max(1)) as i32;
            let s = ffi::ibv_create_cq(
                dev.ctx,
                entries,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
            );
            let r = ffi::ibv_create_cq(
                dev.ctx,
                (QUEUE * local.len().max(1)) as i32,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
            );
            (s, r)
        };
        let mut ep = RdmaEndpoint {
            node,
            dev: dev.clone(),
            send_cq,
            recv_cq,
            region,
            region_mr,
            heads: layout.keys().map(|&k| (k, 0)).collect(),
            senders: layout.clone(),
            peers: HashMap::new(),
            by_qpn: HashMap::new(),
            cq: VecDeque::new(),
            next_wr: 0,
            failures: Vec::new(),
        };
        if send_cq.is_null() || recv_cq.is_null() {
            return Err(err(format!("node {node}: cannot create completion queues")));
        }
        let mut all: Vec<NodeId> = local.keys().chain(remote.keys()).copied().collect();
        all.sort_unstable();
        all.dedup();
        let mut qpn = HashMap::new();
        for peer in all {
            let cap = remote.get(&peer).map_or(1, |s| s.capacity);
            let staging = AlignedWords::zeroed(
                STAGED_ENTRIES * ENTRY_WORDS
                    + remote
                        .get(&peer)
                        .map_or(0, |s| s.depth * (round_page(slot_words(cap)) + 8)),
            );
            let staging_mr = dev.register(&staging, false)?;
            let mut init = ffi::ibv_qp_init_attr {
                send_cq,
                recv_cq,
                qp_type: ffi::ibv_qp_type::IBV_QPT_RC,
                sq_sig_all: 0,
                ..Default::default()
            };
            init.cap.max_send_wr = SEND_WRS;
            init.cap.max_recv_wr = QUEUE as u32;
            init.cap.max_send_sge = 1;
            init.cap.max_recv_sge = 1;
            // SAFETY: pd and CQs are valid; the attributes are initialised above.
            let qp = unsafe { ffi::ibv_create_qp(dev.pd, &mut init) };
            if qp.is_null() {
                // SAFETY: registered just above.
                unsafe { ffi::ibv_dereg_mr(staging_mr) };
                return Err(err(format!(
                    "node {node}: cannot create a queue pair for node {peer}: {}",
                    std::io::Error::last_os_error()
                )));
            }
            // SAFETY: qp is valid.
            let num = unsafe { (*qp).qp_num };
            qpn.insert(peer, num);
            ep.by_qpn.insert(num, peer);
            ep.peers.insert(
                peer,
                Peer {
                    qp,
                    remote: None,
                    staging,
                    staging_mr,
                    sent: 0,
                    inflight: HashMap::new(),
                    outstanding: 0,
                },
            );
        }
        // SAFETY: region_mr is valid.
        let rkey = unsafe { (*region_mr).rkey };
        let address = RdmaAddress {
            lid: dev.lid,
            gid: dev.gid,
            qpn,
            addr: ep.region.addr() as u64,
            rkey,
            region: layout,
        };
        Ok((ep, address))
    }

    /// Connects every queue pair to its peer's (`table[j]` is node `j`'s address), posts the
    /// receive requests, and records where this node writes.
    ///
    /// # Errors
    /// [`CoreError::Transport`] naming the peer whose address lacks this node or whose queue
    /// pair cannot be brought to ready-to-send.
    pub fn connect(&mut self, table: &[RdmaAddress]) -> Result<()> {
        let node = self.node;
        let peers: Vec<NodeId> = self.peers.keys().copied().collect();
        for peer in peers {
            let theirs = table
                .get(peer)
                .ok_or_else(|| err(format!("node {node}: no address for node {peer}")))?;
            let dest = *theirs
                .qpn
                .get(&node)
                .ok_or_else(|| err(format!("node {peer} made no queue pair for node {node}")))?;
            let qp = self.peers[&peer].qp;
            // SAFETY: qp is valid; attributes follow the RC state machine RESET -> INIT -> RTR
            // -> RTS with the masks the verbs specification requires for each step.
            unsafe {
                let mut a = ffi::ibv_qp_attr {
                    qp_state: ffi::ibv_qp_state::IBV_QPS_INIT,
                    pkey_index: 0,
                    port_num: 1,
                    qp_access_flags: (ffi::ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
                        | ffi::ibv_access_flags::IBV_ACCESS_REMOTE_WRITE)
                        .0,
                    ..Default::default()
                };
                use ffi::ibv_qp_attr_mask as M;
                let mask = M::IBV_QP_STATE
                    | M::IBV_QP_PKEY_INDEX
                    | M::IBV_QP_PORT
                    | M::IBV_QP_ACCESS_FLAGS;
                if ffi::ibv_modify_qp(qp, &mut a, mask.0 as i32) != 0 {
                    return Err(err(format!(
                        "node {node}: queue pair to node {peer} refused INIT"
                    )));
                }
                let mut a = ffi::ibv_qp_attr {
                    qp_state: ffi::ibv_qp_state::IBV_QPS_RTR,
                    path_mtu: self.dev.mtu,
                    dest_qp_num: dest,
                    rq_psn: 0,
                    max_dest_rd_atomic: 1,
                    min_rnr_timer: 1,
                    ..Default::default()
                };
                a.ah_attr.dlid = theirs.lid;
                a.ah_attr.port_num = 1;
                if theirs.lid == 0 {
                    // RoCE: routed by GID.
                    a.ah_attr.is_global = 1;
                    a.ah_attr.grh.dgid.raw = theirs.gid;
                    a.ah_attr.grh.sgid_index = self.dev.gid_index;
                    a.ah_attr.grh.hop_limit = 64;
                }
                let mask = M::IBV_QP_STATE
                    | M::IBV_QP_AV
                    | M::IBV_QP_PATH_MTU
                    | M::IBV_QP_DEST_QPN
                    | M::IBV_QP_RQ_PSN
                    | M::IBV_QP_MAX_DEST_RD_ATOMIC
                    | M::IBV_QP_MIN_RNR_TIMER;
                if ffi::ibv_modify_qp(qp, &mut a, mask.0 as i32) != 0 {
                    return Err(err(format!(
                        "node {node}: queue pair to node {peer} refused ready-to-receive: {}",
                        std::io::Error::last_os_error()
                    )));
                }
                // rnr_retry 7: retry forever while the receiver has no receive request
                // posted, which is the queue's backpressure.
                let mut a = ffi::ibv_qp_attr {
                    qp_state: ffi::ibv_qp_state::IBV_QPS_RTS,
                    timeout: 14,
                    retry_cnt: 7,
                    rnr_retry: 7,
                    sq_psn: 0,
                    max_rd_atomic: 1,
                    ..Default::default()
                };
                let mask = M::IBV_QP_STATE
                    | M::IBV_QP_TIMEOUT
                    | M::IBV_QP_RETRY_CNT
                    | M::IBV_QP_RNR_RETRY
                    | M::IBV_QP_SQ_PSN
                    | M::IBV_QP_MAX_QP_RD_ATOMIC;
                if ffi::ibv_modify_qp(qp, &mut a, mask.0 as i32) != 0 {
                    return Err(err(format!(
                        "node {node}: queue pair to node {peer} refused ready-to-send"
                    )));
                }
            }
            if self.senders.contains_key(&peer) {
                for _ in 0..QUEUE {
                    self.post_recv(peer)?;
                }
            }
            if let Some(entry) = theirs.region.get(&node) {
                self.peers.get_mut(&peer).expect("peer").remote =
                    Some((theirs.addr, theirs.rkey, *entry));
            }
        }
        Ok(())
    }

    fn post_recv(&mut self, peer: NodeId) -> Result<()> {
        let qp = self.peers[&peer].qp;
        let mut wr = ffi::ibv_recv_wr {
            wr_id: peer as u64,
            next: std::ptr::null_mut(),
            sg_list: std::ptr::null_mut(),
            num_sge: 0,
        };
        let mut bad = std::ptr::null_mut();
        // SAFETY: qp valid; a zero-SGE receive request (WRITE_WITH_IMM places no data through
        // it); post_recv is an inline verbs call reached through the context's ops.
        let rc = unsafe {
            let ctx = (*qp).context;
            (*ctx).ops.post_recv.expect("post_recv")(qp, &mut wr, &mut bad)
        };
        if rc != 0 {
            return Err(err(format!(
                "node {}: cannot post a receive request for node {peer} (errno {rc})",
                self.node
            )));
        }
        Ok(())
    }

    /// Polls the send completion queue once; retires final work requests.
    fn poll_send(&mut self) {
        let mut wc = [ffi::ibv_wc::default(); 16];
        // SAFETY: send_cq valid; wc has room for 16 completions.
        let n = unsafe {
            let ctx = (*self.send_cq).context;
            (*ctx).ops.poll_cq.expect("poll_cq")(self.send_cq, 16, wc.as_mut_ptr())
        };
        for c in wc.iter().take(n.max(0) as usize) {
            let id = c.wr_id();
            let peer = (id >> 48) as NodeId;
            if let Some((status, vendor)) = c.error() {
                self.failures.push((TransportFault::PeerLost, format!(
                    "node {}: a write to node {peer} failed (status {status}, vendor error {vendor}): peer lost or unreachable",
                    self.node
                )));
            }
            if let Some(p) = self.peers.get_mut(&peer) {
                if let Some(wrs) = p.inflight.remove(&id) {
                    p.outstanding = p.outstanding.saturating_sub(wrs);
                }
            }
            self.cq.push_back(Completion {
                wr_id: id & ((1 << 40) - 1),
            });
        }
    }

    /// Posts `wrs` (linked) on the queue pair to `to`, waiting for room.
    fn post(&mut self, to: NodeId, wrs: &mut [ffi::ibv_send_wr], final_id: u64) -> Result<()> {
        let n = wrs.len() as u32;
        let started = Instant::now();
        while self.peers[&to].outstanding + n > SEND_WRS
            || self.peers[&to].inflight.len() >= STAGED_ENTRIES
        {
            self.poll_send();
            if started.elapsed() > Duration::from_secs(30) {
                return Err(err(format!(
                    "node {}: no send completions from node {to} for 30 s",
                    self.node
                )));
            }
        }
        for i in 0..wrs.len().saturating_sub(1) {
            let next: *mut ffi::ibv_send_wr = &mut wrs[i + 1];
            wrs[i].next = next;
        }
        let qp = self.peers[&to].qp;
        let mut bad = std::ptr::null_mut();
        // SAFETY: qp valid; the work requests and their scatter lists live until the call
        // returns (the verbs copy them into the send queue).
        let rc = unsafe {
            let ctx = (*qp).context;
            (*ctx).ops.post_send.expect("post_send")(qp, wrs.as_mut_ptr(), &mut bad)
        };
        if rc != 0 {
            return Err(err(format!(
                "node {}: posting to node {to} failed (errno {rc})",
                self.node
            )));
        }
        let p = self.peers.get_mut(&to).expect("peer");
        p.outstanding += n;
        p.inflight.insert(final_id, n);
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
        // SAFETY: recv_cq valid; room for one completion.
        let n = unsafe {
            let ctx = (*self.recv_cq).context;
            (*ctx).ops.poll_cq.expect("poll_cq")(self.recv_cq, 1, wc.as_mut_ptr())
        };
        if n <= 0 {
            return None;
        }
        let c = wc[0];
        let from = *self.by_qpn.get(&c.qp_num)?;
        if let Some((status, vendor)) = c.error() {
            self.failures.push((TransportFault::PeerLost, format!(
                "node {}: the connection from node {from} failed (status {status}, vendor error {vendor})",
                self.node
            )));
            return None;
        }
        let e = *self.senders.get(&from)?;
        let h = self.heads.get_mut(&from)?;
        let at = e.queue + 8 + (*h as usize % QUEUE) * ENTRY_WORDS;
        *h += 1;
        let w = &self.region.as_slice()[at..at + ENTRY_WORDS];
        let v = |j: usize| w[j].load(Ordering::Acquire);
        if v(0) != *h {
            self.failures.push((
                TransportFault::Malformed,
                format!(
                "node {}: notification {} from node {from} arrived out of order (entry holds {})",
                self.node,
                *h,
                v(0)
            ),
            ));
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
        // Wait until the staging slot's previous write completed.
        let started = Instant::now();
        while self.peers[&to]
            .inflight
            .keys()
            .any(|k| ((k >> 40) & 0xFF) as usize == slot % 256)
        {
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
        let final_id = ((to as u64) << 48) | (((slot % 256) as u64) << 40) | (id & ((1 << 40) - 1));
        let stride = round_page(slot_words(e.capacity));
        let p = self.peers.get_mut(&to).expect("peer");
        let lkey = // SAFETY: staging_mr valid.
            unsafe { (*p.staging_mr).lkey };
        let st = p.staging.as_slice();
        let base = STAGED_ENTRIES * ENTRY_WORDS + slot * (stride + 8);
        st[base].store(version, Ordering::Relaxed);
        st[base + 1].store(len as u64, Ordering::Relaxed);
        if let Some(d) = &data {
            super::aligned::copy_words(&st[base + 2..base + 2 + len], &d.as_slice()[..len]);
        }
        let footer = base + stride;
        st[footer].store(version, Ordering::Relaxed);
        let saddr = p.staging.addr() as u64;
        let remote_slot = addr + ((e.ring + slot * stride) * 8) as u64;
        let mut sges = [
            ffi::ibv_sge {
                addr: saddr + (base * 8) as u64,
                length: ((2 + len) * 8) as u32,
                lkey,
            },
            ffi::ibv_sge {
                addr: saddr + (footer * 8) as u64,
                length: 8,
                lkey,
            },
            ffi::ibv_sge {
                addr: 0,
                length: (ENTRY_WORDS * 8) as u32,
                lkey,
            },
        ];
        let mut wrs = Vec::with_capacity(3);
        let [s0, s1, s2] = &mut sges;
        wrs.push(Self::write_wr(
            s0,
            remote_slot,
            rkey,
            ffi::ibv_wr_opcode::IBV_WR_RDMA_WRITE,
            0,
            false,
        ));
        wrs.push(Self::write_wr(
            s1,
            remote_slot + ((e.capacity + 2) * 8) as u64,
            rkey,
            ffi::ibv_wr_opcode::IBV_WR_RDMA_WRITE,
            final_id,
            notify.is_none(),
        ));
        if let Some(imm) = notify {
            let t = p.sent;
            p.sent += 1;
            let ent = (t as usize % STAGED_ENTRIES) * ENTRY_WORDS;
            for (i, v) in [t + 1, slot as u64, version, imm[0], imm[1]]
                .into_iter()
                .enumerate()
            {
                st[ent + i].store(v, Ordering::Relaxed);
            }
            s2.addr = saddr + (ent * 8) as u64;
            let remote_entry =
                addr + ((e.queue + 8 + (t as usize % QUEUE) * ENTRY_WORDS) * 8) as u64;
            wrs[1].wr_id = 0;
            wrs[1].send_flags = 0;
            let mut w = Self::write_wr(
                s2,
                remote_entry,
                rkey,
                ffi::ibv_wr_opcode::IBV_WR_RDMA_WRITE_WITH_IMM,
                final_id,
                true,
            );
            w.__bindgen_anon_1.imm_data = (t as u32).to_be();
            wrs.push(w);
        }
        self.post(to, &mut wrs, final_id)?;
        Ok(id)
    }

    fn post_notify(&mut self, to: NodeId, imm: [u64; IMM_WORDS]) -> Result<u64> {
        let (addr, rkey, e) = self.target(to)?;
        self.next_wr += 1;
        let id = self.next_wr;
        let final_id = ((to as u64) << 48) | (0xFF << 40) | (id & ((1 << 40) - 1));
        let p = self.peers.get_mut(&to).expect("peer");
        // SAFETY: staging_mr valid.
        let lkey = unsafe { (*p.staging_mr).lkey };
        let t = p.sent;
        p.sent += 1;
        let ent = (t as usize % STAGED_ENTRIES) * ENTRY_WORDS;
        let st = p.staging.as_slice();
        for (i, v) in [t + 1, 0, 0, imm[0], imm[1]].into_iter().enumerate() {
            st[ent + i].store(v, Ordering::Relaxed);
        }
        let mut sge = ffi::ibv_sge {
            addr: p.staging.addr() as u64 + (ent * 8) as u64,
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
        self.post(to, &mut [w], final_id)?;
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
        let s = &self.region.as_slice()[start..start + slot_words(e.capacity)];
        Ok(read_slot(s, e.capacity, out))
    }

    fn health(&self) -> Result<()> {
        match self.failures.first() {
            Some((fault, message)) => Err(CoreError::transport(*fault, message.clone())),
            None => Ok(()),
        }
    }
}

impl Drop for RdmaEndpoint {
    fn drop(&mut self) {
        // SAFETY: every object was created by this endpoint and is destroyed once, queue pairs
        // before the completion queues they use, registrations before their buffers are freed.
        unsafe {
            for p in self.peers.values() {
                ffi::ibv_destroy_qp(p.qp);
                ffi::ibv_dereg_mr(p.staging_mr);
            }
            if !self.send_cq.is_null() {
                ffi::ibv_destroy_cq(self.send_cq);
            }
            if !self.recv_cq.is_null() {
                ffi::ibv_destroy_cq(self.recv_cq);
            }
            ffi::ibv_dereg_mr(self.region_mr);
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
        let (mut a, aa) = RdmaEndpoint::create(
            dev.clone(),
            0,
            &HashMap::from([(1, shape)]),
            &HashMap::from([(1, shape)]),
        )
        .unwrap();
        let (mut b, ba) = RdmaEndpoint::create(
            dev,
            1,
            &HashMap::from([(0, shape)]),
            &HashMap::from([(0, shape)]),
        )
        .unwrap();
        let table = vec![aa, ba];
        a.connect(&table).unwrap();
        b.connect(&table).unwrap();
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
