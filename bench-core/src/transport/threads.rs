//! The in-process backend: a copy-engine thread per endpoint carries out posted writes
//! asynchronously into the receiver's registered slots, like a NIC, then delivers the
//! notification and the completion.

use super::inbox::Inbox;
use super::ring::{read_registered, Ring, RingTable};
use super::{AlignedWords, Completion, Endpoint, NodeId, Notification, SlotRead, IMM_WORDS};
use crate::error::{CoreError, Result, TransportFault};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

struct WorkRequest {
    wr_id: u64,
    ring: Option<Arc<Ring>>,
    slot: usize,
    version: u64,
    data: Option<Arc<AlignedWords>>,
    len: usize,
    notify: Option<(Arc<Inbox>, Notification)>,
}

/// Builder of an in-process fabric: register rings, then take the endpoints.
#[derive(Debug)]
pub struct ThreadsFabric {
    rings: RingTable,
}

impl ThreadsFabric {
    /// A fabric of `nodes` endpoints with no rings yet.
    pub fn new(nodes: usize) -> Self {
        ThreadsFabric {
            rings: RingTable::new(nodes),
        }
    }

    /// Receiver `to` registers a ring of `depth` slots of `capacity` payload words for `from`.
    ///
    /// # Errors
    /// [`CoreError::Transport`] for a node out of range or a zero depth.
    pub fn register(
        &mut self,
        from: NodeId,
        to: NodeId,
        capacity: usize,
        depth: usize,
    ) -> Result<()> {
        self.rings.register(from, to, capacity, depth)
    }

    /// One endpoint per node, each with its copy engine running.
    pub fn endpoints(self) -> Vec<ThreadsEndpoint> {
        let n = self.rings.nodes();
        let inboxes: Vec<Arc<Inbox>> = (0..n).map(|_| Arc::new(Inbox::default())).collect();
        // One ring object per registered pair, shared by its sender and its receiver.
        let rings: HashMap<(NodeId, NodeId), Arc<Ring>> = (0..n)
            .flat_map(|to| {
                self.rings
                    .local(to)
                    .into_iter()
                    .map(move |(from, s)| ((from, to), Arc::new(Ring::new(s.capacity, s.depth))))
            })
            .collect();
        (0..n)
            .map(|node| {
                let remote = rings
                    .iter()
                    .filter(|((f, _), _)| *f == node)
                    .map(|((_, t), r)| (*t, r.clone()))
                    .collect();
                let local = rings
                    .iter()
                    .filter(|((_, t), _)| *t == node)
                    .map(|((f, _), r)| (*f, r.clone()))
                    .collect();
                ThreadsEndpoint::start(node, remote, local, inboxes.clone())
            })
            .collect()
    }
}

/// One node's endpoint on a [`ThreadsFabric`].
pub struct ThreadsEndpoint {
    node: NodeId,
    remote: HashMap<NodeId, Arc<Ring>>,
    local: HashMap<NodeId, Arc<Ring>>,
    inboxes: Vec<Arc<Inbox>>,
    tx: Option<Sender<WorkRequest>>,
    /// Completions of the copy engine's work requests, pushed by the engine.
    cq: Arc<Mutex<VecDeque<Completion>>>,
    /// Completions the engine pushed and this endpoint has not yet taken out of `cq`: polling
    /// reads this instead of locking, as most polls find nothing there.
    engine_done: Arc<AtomicUsize>,
    /// Engine completions taken out of `cq`, in order.
    engine_cq: VecDeque<Completion>,
    /// Completions of the requests this thread carried out itself (inline), in order.
    inline_cq: VecDeque<Completion>,
    engine: Option<JoinHandle<()>>,
    next_wr: u64,
    /// Work requests handed to the copy engine and not yet carried out.
    outstanding: Arc<AtomicU64>,
}

/// Writes of at most this many words are carried out by the posting thread itself when the copy
/// engine is idle (verbs' inline sends): no thread hand-off on the latency path, same order.
const INLINE_WORDS: usize = 512;

impl ThreadsEndpoint {
    fn start(
        node: NodeId,
        remote: HashMap<NodeId, Arc<Ring>>,
        local: HashMap<NodeId, Arc<Ring>>,
        inboxes: Vec<Arc<Inbox>>,
    ) -> Self {
        let (tx, rx) = channel::<WorkRequest>();
        let cq: Arc<Mutex<VecDeque<Completion>>> = Arc::default();
        let cq_engine = cq.clone();
        let engine_done = Arc::new(AtomicUsize::new(0));
        let done_engine = engine_done.clone();
        let outstanding = Arc::new(AtomicU64::new(0));
        let out_engine = outstanding.clone();
        let engine = std::thread::Builder::new()
            .name(format!("copy-engine-{node}"))
            .spawn(move || {
                for wr in rx {
                    if let Some(ring) = &wr.ring {
                        ring.write(wr.slot, wr.version, wr.data.as_deref(), wr.len);
                    }
                    if let Some((inbox, n)) = wr.notify {
                        inbox.push(n);
                    }
                    {
                        let mut cq = cq_engine.lock().expect("cq lock");
                        cq.push_back(Completion { wr_id: wr.wr_id });
                        // Counted under the lock (so it equals the queue's length there) and
                        // before `outstanding` drops: an inline post that sees the engine idle
                        // also sees every earlier completion counted.
                        done_engine.fetch_add(1, std::sync::atomic::Ordering::Release);
                    }
                    out_engine.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
                }
            })
            .expect("spawn copy engine");
        ThreadsEndpoint {
            node,
            remote,
            local,
            inboxes,
            tx: Some(tx),
            cq,
            engine_done,
            engine_cq: VecDeque::new(),
            inline_cq: VecDeque::new(),
            engine: Some(engine),
            next_wr: 0,
            outstanding,
        }
    }

    /// Payload capacity in words of the ring `to` registered for this node.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when no such ring exists.
    pub fn remote_capacity(&self, to: NodeId) -> Result<usize> {
        self.ring_to(to).map(|r| r.capacity())
    }

    /// True when a write of `len` words may be carried out by the posting thread now: it is
    /// small and the engine is idle, so nothing queued is overtaken.
    fn can_inline(&self, len: usize) -> bool {
        len <= INLINE_WORDS && self.outstanding.load(std::sync::atomic::Ordering::Acquire) == 0
    }

    /// Records the completion of a request carried out inline (no lock: only this thread
    /// touches it).
    fn complete(&mut self, wr_id: u64) {
        self.inline_cq.push_back(Completion { wr_id });
    }

    /// Queues `wr` for the copy engine.
    fn dispatch(&mut self, wr: WorkRequest) -> Result<()> {
        use std::sync::atomic::Ordering;
        self.outstanding.fetch_add(1, Ordering::AcqRel);
        self.tx
            .as_ref()
            .and_then(|tx| tx.send(wr).ok())
            .ok_or_else(|| {
                self.outstanding.fetch_sub(1, Ordering::AcqRel);
                CoreError::transport(
                    TransportFault::PeerLost,
                    format!("copy engine of node {} is gone", self.node),
                )
            })
    }

    fn ring_to(&self, to: NodeId) -> Result<&Arc<Ring>> {
        self.remote.get(&to).ok_or_else(|| {
            CoreError::transport(
                TransportFault::NoSuchPeer,
                format!("node {to} registered no ring for node {}", self.node),
            )
        })
    }
}

impl Endpoint for ThreadsEndpoint {
    fn node(&self) -> NodeId {
        self.node
    }

    fn remote_depth(&self, to: NodeId) -> Result<usize> {
        self.ring_to(to).map(|r| r.depth())
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
        let remote = &self.remote;
        let ring = remote.get(&to).ok_or_else(|| {
            CoreError::transport(
                TransportFault::NoSuchPeer,
                format!("node {to} registered no ring for node {}", self.node),
            )
        })?;
        if slot >= ring.depth() {
            return Err(CoreError::transport(
                TransportFault::RingOverrun,
                format!(
                    "slot {slot} out of range: node {to} registered {} slots for node {}",
                    ring.depth(),
                    self.node
                ),
            ));
        }
        let src_len = data.as_ref().map_or(0, |d| d.len());
        if len > ring.capacity() || len > src_len {
            return Err(CoreError::transport(TransportFault::RingOverrun, format!(
                "write of {len} words from node {} to node {to} exceeds the slot ({} words) or the source ({src_len} words)",
                self.node, ring.capacity()
            )));
        }
        if to >= self.inboxes.len() {
            return Err(CoreError::transport(
                TransportFault::NoSuchPeer,
                format!("no node {to} on this fabric"),
            ));
        }
        self.next_wr += 1;
        if self.can_inline(len) {
            // No Arc is cloned on this path: reference counts share cache lines with the
            // receiver's inbox, and touching them costs the latency being measured.
            ring.write(slot, version, data.as_deref(), len);
            if let Some(imm) = notify {
                self.inboxes[to].push(Notification {
                    from: self.node,
                    slot,
                    version,
                    imm,
                });
            }
            self.complete(self.next_wr);
            return Ok(self.next_wr);
        }
        let inbox = self.inboxes[to].clone();
        let wr = WorkRequest {
            wr_id: self.next_wr,
            ring: Some(ring.clone()),
            slot,
            version,
            data,
            len,
            notify: notify.map(|imm| {
                (
                    inbox,
                    Notification {
                        from: self.node,
                        slot,
                        version,
                        imm,
                    },
                )
            }),
        };
        self.dispatch(wr)?;
        Ok(self.next_wr)
    }

    fn post_notify(&mut self, to: NodeId, imm: [u64; IMM_WORDS]) -> Result<u64> {
        if to >= self.inboxes.len() {
            return Err(CoreError::transport(
                TransportFault::NoSuchPeer,
                format!("no node {to} on this fabric"),
            ));
        }
        self.next_wr += 1;
        if self.can_inline(0) {
            self.inboxes[to].push(Notification {
                from: self.node,
                slot: 0,
                version: 0,
                imm,
            });
            self.complete(self.next_wr);
            return Ok(self.next_wr);
        }
        let inbox = self.inboxes[to].clone();
        let wr = WorkRequest {
            wr_id: self.next_wr,
            ring: None,
            slot: 0,
            version: 0,
            data: None,
            len: 0,
            notify: Some((
                inbox,
                Notification {
                    from: self.node,
                    slot: 0,
                    version: 0,
                    imm,
                },
            )),
        };
        self.dispatch(wr)?;
        Ok(self.next_wr)
    }

    /// The oldest completion, inline or the engine's: work request ids grow with every post,
    /// and each queue holds its own in order, so the smaller head is the older one.
    fn poll_completion(&mut self) -> Option<Completion> {
        use std::sync::atomic::Ordering;
        if self.engine_done.load(Ordering::Acquire) > 0 {
            let mut cq = self.cq.lock().expect("cq lock");
            self.engine_done.fetch_sub(cq.len(), Ordering::AcqRel);
            self.engine_cq.extend(cq.drain(..));
        }
        match (self.inline_cq.front(), self.engine_cq.front()) {
            (Some(i), Some(e)) if e.wr_id < i.wr_id => self.engine_cq.pop_front(),
            (Some(_), _) => self.inline_cq.pop_front(),
            (None, _) => self.engine_cq.pop_front(),
        }
    }

    fn wait_notification(&mut self, timeout: Duration) -> Option<Notification> {
        self.inboxes[self.node].wait(timeout)
    }

    fn read_slot(&self, from: NodeId, slot: usize, out: &mut Vec<u64>) -> Result<SlotRead> {
        read_registered(&self.local, self.node, from, slot, out)
    }
}

impl Drop for ThreadsEndpoint {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(h) = self.engine.take() {
            let _ = h.join();
        }
    }
}

/// Atomic word used by the transport (re-exported for benchmarks).
pub type Word = AtomicU64;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::test_support::fault;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn pair(capacity: usize, depth: usize) -> (ThreadsEndpoint, ThreadsEndpoint) {
        let mut f = ThreadsFabric::new(2);
        f.register(0, 1, capacity, depth).unwrap();
        let mut eps = f.endpoints();
        let b = eps.pop().unwrap();
        let a = eps.pop().unwrap();
        (a, b)
    }

    #[test]
    fn write_then_notification_then_completion() {
        let (mut a, mut b) = pair(8, 2);
        let src = Arc::new(AlignedWords::from_words(&[10, 20, 30]));
        let id = a.post_write(1, 1, 7, Some(src), 3, Some([5, 6])).unwrap();
        let n = b.wait_notification(Duration::from_secs(5)).unwrap();
        assert_eq!((n.from, n.slot, n.version, n.imm), (0, 1, 7, [5, 6]));
        let mut out = Vec::new();
        let r = b.read_slot(0, 1, &mut out).unwrap();
        assert!(r.consistent());
        assert_eq!(
            (r.header, r.len, out.as_slice()),
            (7, 3, &[10u64, 20, 30][..])
        );
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let c = loop {
            if let Some(c) = a.poll_completion() {
                break c;
            }
            assert!(std::time::Instant::now() < deadline);
            std::thread::yield_now();
        };
        assert_eq!(c.wr_id, id);
    }

    #[test]
    fn inline_and_engine_posts_keep_their_order_in_notifications_and_completions() {
        // Small posts go inline while the engine is idle and through it while it is busy;
        // large writes always go through it. Whatever path each took, the receiver sees the
        // notifications in posting order and the sender its completions in wr_id order.
        let big = INLINE_WORDS * 64;
        let (mut a, mut b) = pair(big, 2);
        let src = Arc::new(AlignedWords::zeroed(big));
        let mut ids = Vec::new();
        for round in 0..50u64 {
            let k = round * 4;
            ids.push(a.post_notify(1, [k, 0]).unwrap());
            ids.push(
                a.post_write(1, 0, k + 1, Some(src.clone()), big, Some([k + 1, 0]))
                    .unwrap(),
            );
            ids.push(a.post_notify(1, [k + 2, 0]).unwrap());
            if round % 2 == 0 {
                // let the engine go idle, so the next small post is carried out inline
                while a.outstanding.load(std::sync::atomic::Ordering::Acquire) > 0 {
                    std::thread::yield_now();
                }
            }
            ids.push(a.post_notify(1, [k + 3, 0]).unwrap());
        }
        for want in 0..200u64 {
            let n = b.wait_notification(Duration::from_secs(5)).unwrap();
            assert_eq!(n.imm[0], want);
        }
        let mut got = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while got.len() < ids.len() {
            match a.poll_completion() {
                Some(c) => got.push(c.wr_id),
                None => {
                    assert!(
                        std::time::Instant::now() < deadline,
                        "{} completions",
                        got.len()
                    );
                    std::thread::yield_now();
                }
            }
        }
        assert_eq!(got, ids);
        assert!(a.poll_completion().is_none());
    }

    #[test]
    fn notification_alone_leaves_the_slot_untouched() {
        let (mut a, mut b) = pair(4, 1);
        let src = Arc::new(AlignedWords::from_words(&[9, 8]));
        a.post_write(1, 0, 3, Some(src), 2, None).unwrap();
        a.post_notify(1, [42, 0]).unwrap();
        let n = b.wait_notification(Duration::from_secs(5)).unwrap();
        assert_eq!((n.from, n.imm), (0, [42, 0]));
        let mut out = Vec::new();
        let r = b.read_slot(0, 0, &mut out).unwrap();
        assert_eq!((r.header, r.footer, out.as_slice()), (3, 3, &[9u64, 8][..]));
        assert_eq!(
            fault(a.post_notify(7, [0, 0])),
            Some(crate::TransportFault::NoSuchPeer)
        );
    }

    #[test]
    fn bad_requests_are_errors_of_their_kind() {
        let (mut a, b) = pair(4, 1);
        crate::transport::test_support::bad_requests_refused_by_kind(&mut a, &b);
    }

    #[test]
    fn concurrent_overwrite_tears_and_is_detected() {
        // A writer keeps overwriting one slot with new versions (each word = version) while a
        // reader copies it: some reads must be torn, every torn read must be flagged, and every
        // read flagged whole must hold one version throughout.
        let words = 64 * 1024;
        let (mut a, b) = pair(words, 1);
        let stop = Arc::new(AtomicBool::new(false));
        let stop_w = stop.clone();
        let writer = std::thread::spawn(move || {
            let bufs: Vec<Arc<AlignedWords>> = (1..=4u64)
                .map(|v| Arc::new(AlignedWords::from_words(&vec![v; words])))
                .collect();
            let mut v = 0u64;
            while !stop_w.load(Ordering::Relaxed) && v < 200_000 {
                v += 1;
                let buf = bufs[(v % 4) as usize].clone();
                // version v carries payload value (v % 4) + 1
                a.post_write(1, 0, v, Some(buf), words, None).unwrap();
                while a.poll_completion().is_none() {
                    std::hint::spin_loop();
                }
            }
        });
        let (mut torn, mut whole) = (0, 0);
        let mut out = Vec::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while (torn == 0 || whole == 0) && std::time::Instant::now() < deadline {
            let r = b.read_slot(0, 0, &mut out).unwrap();
            if r.len < words {
                continue;
            }
            let mixed = out.iter().any(|&w| w != out[0]);
            if r.consistent() {
                assert!(!mixed, "a read flagged whole held mixed versions");
                if r.header > 0 {
                    assert_eq!(out[0], r.header % 4 + 1);
                }
                whole += 1;
            } else {
                torn += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
        assert!(torn > 0, "no torn read provoked");
        assert!(whole > 0, "no whole read observed");
    }
}
