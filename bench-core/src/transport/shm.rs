//! The shared-memory backend: processes on one host. Every receiver creates one segment (a file
//! in `/dev/shm`, mapped shared) holding, per sender, a notification queue and the sender's
//! slot ring; a sender maps the receivers' segments and carries out a one-sided write by copying
//! into the remote slot itself (header first, footer last: the seqlock every backend uses), then
//! pushes the notification. The copy is done when `post_write` returns, so the completion is
//! immediate.
//!
//! Segment layout (64-bit words): a directory page `[magic, job token, owner, senders, (sender,
//! queue offset, ring offset, capacity, depth) per sender]`, then per sender a page-aligned
//! queue (consumer index, producer index on its own cache line, [`QUEUE`] entries of
//! `[slot, version, imm0, imm1]`) and page-aligned slots. Queues are single-producer
//! single-consumer: the sender's node thread produces, the receiver's consumes. A full queue
//! makes the sender wait (backpressure) up to [`FULL_TIMEOUT`], then fail naming the receiver.
//!
//! Waiting spins and then sleeps in growing steps (`poll_with_backoff`), as the queues live in
//! memory another process writes and there is no condition variable to wake.

use super::ring::{poll_with_backoff, read_slot, slot_words, write_slot, RingTable};
use super::{
    AlignedWords, Completion, Endpoint, NodeId, Notification, RingShape, SlotRead, IMM_WORDS,
};
use crate::error::{CoreError, Result, TransportFault};
use memmap2::MmapMut;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MAGIC: u64 = 0x5342_5348_4d00_0001; // "SBSHM", version 1
const PAGE_WORDS: usize = super::aligned::PAGE / 8;
/// Entries per notification queue.
pub const QUEUE: usize = 1024;
/// One cache line per entry.
const ENTRY_WORDS: usize = 8;
/// Queue words: the consumer index on its own line, then the entries.
const QUEUE_WORDS: usize = 8 + QUEUE * ENTRY_WORDS;
/// How long a sender waits for room in a full queue before it gives up.
pub const FULL_TIMEOUT: Duration = Duration::from_secs(30);

fn round_page(words: usize) -> usize {
    words.next_multiple_of(PAGE_WORDS)
}

/// Where a sender's queue and ring are in a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    queue: usize,
    ring: usize,
    shape: RingShape,
}

/// A mapped segment, seen as words.
struct Segment {
    map: MmapMut,
    path: PathBuf,
}

impl Segment {
    fn words(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is page-aligned, its length a multiple of 8, and lives as long as
        // self; all access to shared words is atomic (another process writes them too).
        unsafe {
            std::slice::from_raw_parts(self.map.as_ptr() as *const AtomicU64, self.map.len() / 8)
        }
    }

    /// Reads the directory, checking the header.
    fn directory(&self, token: u64) -> Result<HashMap<NodeId, Entry>> {
        parse_directory(self.words(), token, &self.path)
    }
}

/// Reads a segment's directory (`words`: the whole segment), checking the header and that every
/// entry's queue and ring lie inside the segment; another process wrote it, so every number is
/// checked, and arithmetic that would overflow is an error.
fn parse_directory(w: &[AtomicU64], token: u64, path: &Path) -> Result<HashMap<NodeId, Entry>> {
    let bad = |why: &str| {
        CoreError::transport(
            TransportFault::Malformed,
            format!("shared segment {}: {why}", path.display()),
        )
    };
    if w.len() < 4 || w[0].load(Ordering::Acquire) != MAGIC {
        return Err(bad("not a syncbench segment"));
    }
    if w[1].load(Ordering::Relaxed) != token {
        return Err(bad("belongs to another job (wrong token)"));
    }
    let n = w[3].load(Ordering::Relaxed);
    if n > (w.len() as u64 - 4) / 5 {
        return Err(bad("directory larger than the segment"));
    }
    let mut dir = HashMap::new();
    for k in 0..n as usize {
        let e = |i: usize| usize::try_from(w[4 + 5 * k + i].load(Ordering::Relaxed)).ok();
        let outside = || bad("directory entry outside the segment");
        let (node, queue, ring, capacity, depth) = (e(0), e(1), e(2), e(3), e(4));
        let (Some(node), Some(queue), Some(ring), Some(capacity), Some(depth)) =
            (node, queue, ring, capacity, depth)
        else {
            return Err(outside());
        };
        // A capacity within the segment's length cannot overflow a slot's size.
        let slot = Some(capacity)
            .filter(|&c| c <= w.len())
            .map(|c| round_page(slot_words(c)))
            .ok_or_else(outside)?;
        let end = depth
            .checked_mul(slot)
            .and_then(|b| b.checked_add(ring))
            .ok_or_else(outside)?;
        let queue_end = queue.checked_add(QUEUE_WORDS).ok_or_else(outside)?;
        if queue_end > w.len() || end > w.len() {
            return Err(outside());
        }
        dir.insert(
            node,
            Entry {
                queue,
                ring,
                shape: RingShape { capacity, depth },
            },
        );
    }
    Ok(dir)
}

fn io(path: &Path, e: std::io::Error) -> CoreError {
    CoreError::transport(
        TransportFault::Setup,
        format!("shared segment {}: {e}", path.display()),
    )
}

/// Directory for segments: `/dev/shm` where it exists, else the temporary directory.
pub fn default_dir() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// Path of node `node`'s segment for job token `token`.
pub fn segment_path(dir: &Path, token: u64, node: NodeId) -> PathBuf {
    dir.join(format!("syncbench-{token:016x}-{node}"))
}

/// One node's endpoint on a shared-memory fabric.
pub struct ShmEndpoint {
    node: NodeId,
    token: u64,
    own: Segment,
    /// Senders with a ring here, in a fixed order for fair polling.
    senders: Vec<(NodeId, Entry)>,
    /// Next entry to consume, per sender (same order).
    heads: Vec<u64>,
    next_sender: usize,
    /// Per receiver: next entry to produce, and the consumer index last seen there.
    tails: HashMap<NodeId, (u64, u64)>,
    /// Receivers' segments this node maps, with its entry there.
    remote: HashMap<NodeId, (Arc<Segment>, Entry)>,
    expected: HashMap<NodeId, RingShape>,
    cq: std::collections::VecDeque<Completion>,
    next_wr: u64,
    unlinked: bool,
}

impl ShmEndpoint {
    /// Creates node `node`'s segment at `path` with a ring of the given shape per sender
    /// (`local`); `remote` are the rings each receiver registered for this node, mapped by
    /// [`ShmEndpoint::connect`] once every segment exists.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when the file cannot be created (it exists already, say),
    /// sized or mapped.
    pub fn create(
        node: NodeId,
        token: u64,
        path: PathBuf,
        local: HashMap<NodeId, RingShape>,
        remote: HashMap<NodeId, RingShape>,
    ) -> Result<Self> {
        let mut senders: Vec<(NodeId, RingShape)> = local.into_iter().collect();
        senders.sort_by_key(|s| s.0);
        let mut offset = round_page(4 + 5 * senders.len());
        let mut entries = Vec::with_capacity(senders.len());
        for &(from, shape) in &senders {
            let queue = offset;
            offset += round_page(QUEUE_WORDS);
            let ring = offset;
            offset += shape.depth * round_page(slot_words(shape.capacity));
            entries.push((from, Entry { queue, ring, shape }));
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        let seg = (|| {
            file.set_len((offset.max(PAGE_WORDS) * 8) as u64)?;
            // SAFETY: the file is ours, freshly created and sized; other processes only ever
            // access it through atomics, as this one does.
            let map = unsafe { memmap2::MmapOptions::new().populate().map_mut(&file)? };
            Ok(Segment {
                map,
                path: path.clone(),
            })
        })()
        .map_err(|e| {
            let _ = std::fs::remove_file(&path);
            io(&path, e)
        })?;
        let w = seg.words();
        w[1].store(token, Ordering::Relaxed);
        w[2].store(node as u64, Ordering::Relaxed);
        w[3].store(entries.len() as u64, Ordering::Relaxed);
        for (k, (from, e)) in entries.iter().enumerate() {
            let vals = [*from, e.queue, e.ring, e.shape.capacity, e.shape.depth];
            for (i, v) in vals.iter().enumerate() {
                w[4 + 5 * k + i].store(*v as u64, Ordering::Relaxed);
            }
        }
        w[0].store(MAGIC, Ordering::Release);
        Ok(ShmEndpoint {
            node,
            token,
            own: seg,
            heads: vec![0; entries.len()],
            senders: entries,
            next_sender: 0,
            tails: HashMap::new(),
            remote: HashMap::new(),
            expected: remote,
            cq: Default::default(),
            next_wr: 0,
            unlinked: false,
        })
    }

    /// Maps every receiver's segment this node writes to (node `j`'s at `paths[j]`), checking
    /// token and ring shapes.
    ///
    /// # Errors
    /// [`CoreError::Transport`] naming the receiver whose segment is missing, of another job,
    /// or has no ring of the expected shape for this node.
    pub fn connect(&mut self, paths: &[PathBuf]) -> Result<()> {
        let mut targets: Vec<(NodeId, RingShape)> =
            self.expected.iter().map(|(&t, &s)| (t, s)).collect();
        targets.sort_by_key(|t| t.0);
        for (to, shape) in targets {
            let path = paths.get(to).cloned().ok_or_else(|| {
                CoreError::transport(
                    TransportFault::NoSuchPeer,
                    format!("no segment path for node {to}"),
                )
            })?;
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .map_err(|e| {
                    CoreError::transport(
                        TransportFault::Setup,
                        format!(
                            "node {}: cannot open node {to}'s segment {}: {e}",
                            self.node,
                            path.display()
                        ),
                    )
                })?;
            // SAFETY: as in create; the segment is shared and accessed atomically.
            let map = unsafe { memmap2::MmapOptions::new().populate().map_mut(&file) }
                .map_err(|e| io(&path, e))?;
            let seg = Segment { map, path };
            let dir = seg.directory(self.token)?;
            let entry = *dir.get(&self.node).ok_or_else(|| {
                CoreError::transport(
                    TransportFault::NoSuchPeer,
                    format!("node {to} registered no ring for node {}", self.node),
                )
            })?;
            if entry.shape != shape {
                return Err(CoreError::transport(
                    TransportFault::Malformed,
                    format!(
                        "node {to} registered a ring of {:?} for node {}, expected {shape:?}",
                        entry.shape, self.node
                    ),
                ));
            }
            self.remote.insert(to, (Arc::new(seg), entry));
        }
        Ok(())
    }

    /// Removes this node's segment file (mappings stay valid): call once every peer has
    /// connected, so a killed process leaves nothing behind in `/dev/shm`.
    pub fn unlink(&mut self) {
        if !self.unlinked {
            let _ = std::fs::remove_file(&self.own.path);
            self.unlinked = true;
        }
    }

    fn target(&self, to: NodeId) -> Result<&(Arc<Segment>, Entry)> {
        self.remote.get(&to).ok_or_else(|| {
            CoreError::transport(
                TransportFault::NoSuchPeer,
                format!(
                    "node {}: no ring registered at node {to} (or not connected)",
                    self.node
                ),
            )
        })
    }

    /// Appends a notification to `to`'s queue for this node, waiting while it is full.
    fn push(&mut self, to: NodeId, slot: usize, version: u64, imm: [u64; IMM_WORDS]) -> Result<()> {
        let node = self.node;
        let (seg, e) = self.target(to)?;
        let (seg, e) = (seg.clone(), *e);
        let w = &seg.words()[e.queue..e.queue + QUEUE_WORDS];
        let (tail, seen_head) = self.tails.entry(to).or_insert((0, 0));
        let t = *tail;
        if t - *seen_head >= QUEUE as u64 {
            let started = Instant::now();
            loop {
                *seen_head = w[0].load(Ordering::Acquire);
                if t - *seen_head < QUEUE as u64 {
                    break;
                }
                if started.elapsed() > FULL_TIMEOUT {
                    return Err(CoreError::transport(TransportFault::RingOverrun, format!(
                        "node {node}: node {to}'s queue stayed full for {} s (is it still running?)",
                        FULL_TIMEOUT.as_secs()
                    )));
                }
                std::thread::yield_now();
            }
        }
        let at = 8 + (t as usize % QUEUE) * ENTRY_WORDS;
        for (i, v) in [slot as u64, version, imm[0], imm[1]]
            .into_iter()
            .enumerate()
        {
            w[at + 1 + i].store(v, Ordering::Relaxed);
        }
        w[at].store(t + 1, Ordering::Release);
        *tail = t + 1;
        Ok(())
    }

    /// Takes the next notification of any sender, polling them in turn.
    fn pop(&mut self) -> Option<Notification> {
        let w = self.own.words();
        for k in 0..self.senders.len() {
            let i = (self.next_sender + k) % self.senders.len();
            let (from, e) = self.senders[i];
            let q = &w[e.queue..e.queue + QUEUE_WORDS];
            let h = self.heads[i];
            let at = 8 + (h as usize % QUEUE) * ENTRY_WORDS;
            if q[at].load(Ordering::Acquire) != h + 1 {
                continue;
            }
            let v = |j: usize| q[at + 1 + j].load(Ordering::Relaxed);
            let n = Notification {
                from,
                slot: v(0) as usize,
                version: v(1),
                imm: [v(2), v(3)],
            };
            self.heads[i] = h + 1;
            q[0].store(h + 1, Ordering::Release);
            self.next_sender = (i + 1) % self.senders.len();
            return Some(n);
        }
        None
    }
}

impl Drop for ShmEndpoint {
    fn drop(&mut self) {
        self.unlink();
    }
}

impl Endpoint for ShmEndpoint {
    fn node(&self) -> NodeId {
        self.node
    }

    fn remote_depth(&self, to: NodeId) -> Result<usize> {
        self.target(to).map(|(_, e)| e.shape.depth)
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
        let (seg, e) = self.target(to)?;
        if slot >= e.shape.depth || len > e.shape.capacity {
            return Err(CoreError::transport(TransportFault::RingOverrun, format!(
                "node {}: write of {len} words into slot {slot} of node {to}'s ring of {} slots of {} words",
                self.node, e.shape.depth, e.shape.capacity
            )));
        }
        if data.as_ref().is_some_and(|d| d.len() < len) {
            return Err(CoreError::transport(
                TransportFault::RingOverrun,
                format!("node {}: source buffer shorter than {len} words", self.node),
            ));
        }
        let stride = round_page(slot_words(e.shape.capacity));
        let start = e.ring + slot * stride;
        let s = &seg.words()[start..start + slot_words(e.shape.capacity)];
        write_slot(s, e.shape.capacity, version, data.as_deref(), len);
        if let Some(imm) = notify {
            self.push(to, slot, version, imm)?;
        }
        self.next_wr += 1;
        self.cq.push_back(Completion {
            wr_id: self.next_wr,
        });
        Ok(self.next_wr)
    }

    fn post_notify(&mut self, to: NodeId, imm: [u64; IMM_WORDS]) -> Result<u64> {
        self.push(to, 0, 0, imm)?;
        self.next_wr += 1;
        self.cq.push_back(Completion {
            wr_id: self.next_wr,
        });
        Ok(self.next_wr)
    }

    fn poll_completion(&mut self) -> Option<Completion> {
        self.cq.pop_front()
    }

    fn wait_notification(&mut self, timeout: Duration) -> Option<Notification> {
        poll_with_backoff(timeout, || self.pop())
    }

    fn read_slot(&self, from: NodeId, slot: usize, out: &mut Vec<u64>) -> Result<SlotRead> {
        let e = self
            .senders
            .iter()
            .find(|s| s.0 == from)
            .map(|s| s.1)
            .ok_or_else(|| {
                CoreError::transport(
                    TransportFault::NoSuchPeer,
                    format!("node {}: no ring registered for node {from}", self.node),
                )
            })?;
        if slot >= e.shape.depth {
            return Err(CoreError::transport(
                TransportFault::RingOverrun,
                format!(
                    "node {}: slot {slot} out of range for node {from}'s ring of {}",
                    self.node, e.shape.depth
                ),
            ));
        }
        let start = e.ring + slot * round_page(slot_words(e.shape.capacity));
        let s = &self.own.words()[start..start + slot_words(e.shape.capacity)];
        Ok(read_slot(s, e.shape.capacity, out))
    }
}

/// Builder of a shared-memory fabric whose endpoints all live in this process (tests,
/// benchmarks), the pattern each rank follows with its own nodes.
#[derive(Debug)]
pub struct ShmFabric {
    token: u64,
    dir: PathBuf,
    rings: RingTable,
}

impl ShmFabric {
    /// A fabric of `nodes` endpoints with segments in `dir` under job token `token`.
    pub fn new(nodes: usize, token: u64, dir: PathBuf) -> Self {
        ShmFabric {
            token,
            dir,
            rings: RingTable::new(nodes),
        }
    }

    /// Receiver `to` registers a ring of `depth` slots of `capacity` words for `from`.
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

    /// Creates every segment, connects every endpoint and unlinks the files; endpoints in
    /// node order.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when a segment cannot be created or mapped.
    pub fn endpoints(self) -> Result<Vec<ShmEndpoint>> {
        let paths: Vec<PathBuf> = (0..self.rings.nodes())
            .map(|n| segment_path(&self.dir, self.token, n))
            .collect();
        let mut eps = (0..self.rings.nodes())
            .map(|node| {
                ShmEndpoint::create(
                    node,
                    self.token,
                    paths[node].clone(),
                    self.rings.local(node),
                    self.rings.remote(node),
                )
            })
            .collect::<Result<Vec<_>>>()?;
        for e in &mut eps {
            e.connect(&paths)?;
        }
        for e in &mut eps {
            e.unlink();
        }
        Ok(eps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::test_support::fault;

    fn fabric(tag: u64) -> Vec<ShmEndpoint> {
        let mut f = ShmFabric::new(
            2,
            0xabc0 + tag + u64::from(std::process::id()) * 100,
            default_dir(),
        );
        f.register(0, 1, 4, 2).unwrap();
        f.register(1, 0, 4, 2).unwrap();
        f.endpoints().unwrap()
    }

    #[test]
    fn write_then_notification_then_read() {
        let mut e = fabric(1);
        let src = Arc::new(AlignedWords::from_words(&[1, 2, 3]));
        e[0].post_write(1, 1, 7, Some(src), 3, Some([9, 8]))
            .unwrap();
        assert!(e[0].poll_completion().is_some());
        let n = e[1].wait_notification(Duration::from_secs(1)).unwrap();
        assert_eq!((n.from, n.slot, n.version, n.imm), (0, 1, 7, [9, 8]));
        let mut out = Vec::new();
        let r = e[1].read_slot(0, 1, &mut out).unwrap();
        assert!(r.consistent());
        assert_eq!((r.header, out.as_slice()), (7, &[1u64, 2, 3][..]));
        assert!(e[1].wait_notification(Duration::from_millis(1)).is_none());
        e[1].post_notify(0, [5, 5]).unwrap();
        assert_eq!(
            e[0].wait_notification(Duration::from_secs(1)).unwrap().imm,
            [5, 5]
        );
    }

    #[test]
    fn bad_posts_are_refused_by_kind() {
        use crate::TransportFault::{NoSuchPeer, RingOverrun};
        let mut e = fabric(2);
        let src = Arc::new(AlignedWords::from_words(&[0; 5]));
        let longer_than_slot = e[0].post_write(1, 0, 1, Some(src.clone()), 5, None);
        assert_eq!(fault(longer_than_slot), Some(RingOverrun));
        let slot_out_of_range = e[0].post_write(1, 2, 1, Some(src), 1, None);
        assert_eq!(fault(slot_out_of_range), Some(RingOverrun));
        assert_eq!(fault(e[0].post_notify(7, [0, 0])), Some(NoSuchPeer));
        let mut out = Vec::new();
        assert_eq!(fault(e[1].read_slot(1, 0, &mut out)), Some(NoSuchPeer));
    }

    #[test]
    fn segments_of_another_job_are_refused_and_files_removed() {
        let dir = std::env::temp_dir().join(format!("sb-shm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let paths = vec![segment_path(&dir, 1, 0), segment_path(&dir, 2, 1)];
        let shape = RingShape {
            capacity: 2,
            depth: 1,
        };
        let mut a = ShmEndpoint::create(
            0,
            1,
            paths[0].clone(),
            HashMap::new(),
            HashMap::from([(1, shape)]),
        )
        .unwrap();
        // Node 1's segment is made under another token.
        let b = ShmEndpoint::create(
            1,
            2,
            paths[1].clone(),
            HashMap::from([(0, shape)]),
            HashMap::new(),
        )
        .unwrap();
        let e = a.connect(&paths).unwrap_err().to_string();
        assert!(e.contains("another job"), "{e}");
        drop((a, b));
        assert!(!paths[0].exists() && !paths[1].exists());
    }

    #[test]
    fn a_full_queue_waits_for_the_reader() {
        let mut e = fabric(3);
        let mut r = e.pop().unwrap();
        let reader = std::thread::spawn(move || {
            let mut got = 0;
            while got < QUEUE + 10 {
                if r.wait_notification(Duration::from_secs(5)).is_some() {
                    got += 1;
                } else {
                    break;
                }
            }
            got
        });
        for k in 0..QUEUE + 10 {
            e[0].post_notify(1, [k as u64, 0]).unwrap();
        }
        assert_eq!(reader.join().unwrap(), QUEUE + 10);
    }

    #[test]
    fn fuzz_shm_directory() {
        // A valid directory: two entries inside a segment of 2 pages + queues.
        let words = |bytes: &[u8]| -> Vec<AtomicU64> {
            bytes
                .chunks(8)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..c.len()].copy_from_slice(c);
                    AtomicU64::new(u64::from_le_bytes(b))
                })
                .collect()
        };
        let len = 4 + 10 + 2 * QUEUE_WORDS + 2 * PAGE_WORDS;
        let mut seed = vec![0u64; len];
        seed[..4].copy_from_slice(&[MAGIC, 7, 0, 2]);
        let q0 = 16;
        let r0 = round_page(q0 + 2 * QUEUE_WORDS);
        seed[4..9].copy_from_slice(&[1, q0 as u64, r0 as u64, 5, 1]);
        seed[9..14].copy_from_slice(&[
            2,
            (q0 + QUEUE_WORDS) as u64,
            (r0 + PAGE_WORDS) as u64,
            5,
            1,
        ]);
        seed.resize(r0 + 2 * PAGE_WORDS, 0);
        let seed: Vec<u8> = seed.iter().flat_map(|w| w.to_le_bytes()).collect();
        let dir = parse_directory(&words(&seed), 7, Path::new("seed")).unwrap();
        assert_eq!(dir.len(), 2);
        // Only the header and directory are mutated (the rest of the segment stays).
        let head = seed[..14 * 8].to_vec();
        let rest = seed[14 * 8..].to_vec();
        crate::fuzz::check("shm-directory", &[head], Duration::from_secs(2), |b| {
            let mut all = b.to_vec();
            all.extend_from_slice(&rest);
            let w = words(&all);
            if let Ok(dir) = parse_directory(&w, 7, Path::new("fuzz")) {
                for e in dir.values() {
                    assert!(e.queue + QUEUE_WORDS <= w.len());
                    assert!(
                        e.ring + e.shape.depth * round_page(slot_words(e.shape.capacity))
                            <= w.len()
                    );
                }
            }
        });
    }
}
