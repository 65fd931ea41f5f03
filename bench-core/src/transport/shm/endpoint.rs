//! One node's shared-memory endpoint: its own segment, the receivers' segments it maps, and the
//! verbs-shaped [`Endpoint`] operations on them (a one-sided write is a copy into the remote slot
//! with the seqlock every backend uses).

use super::super::region::{place, round_page, slot_stride, PAGE_WORDS};
use super::super::ring::{poll_with_backoff, read_slot, slot_words, write_slot};
use super::super::{
    AlignedWords, Completion, Endpoint, NodeId, Notification, RingShape, SlotRead, IMM_WORDS,
};
use super::segment::*;
use super::QUEUE;
use crate::error::{CoreError, Result, TransportFault};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// One node's endpoint on a shared-memory fabric.
pub struct ShmEndpoint {
    pub(super) node: NodeId,
    pub(super) token: u64,
    pub(super) own: Segment,
    /// Senders with a ring here, in a fixed order for fair polling.
    pub(super) senders: Vec<(NodeId, Entry)>,
    /// Next entry to consume, per sender (same order).
    pub(super) heads: Vec<u64>,
    pub(super) next_sender: usize,
    /// Per receiver: next entry to produce, and the consumer index last seen there.
    pub(super) tails: HashMap<NodeId, (u64, u64)>,
    /// Receivers' segments this node maps, with its entry there.
    pub(super) remote: HashMap<NodeId, (Arc<Segment>, Entry)>,
    pub(super) expected: HashMap<NodeId, RingShape>,
    pub(super) cq: std::collections::VecDeque<Completion>,
    pub(super) next_wr: u64,
    pub(super) unlinked: bool,
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
        let (placed, offset) = place(&senders, round_page(4 + 5 * senders.len()), QUEUE);
        let entries: Vec<(NodeId, Entry)> = placed
            .into_iter()
            .zip(&senders)
            .map(|((from, p), &(_, shape))| {
                let (queue, ring) = (p.queue, p.ring);
                (from, Entry { queue, ring, shape })
            })
            .collect();
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
        let stride = slot_stride(e.shape.capacity);
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
        let start = e.ring + slot * slot_stride(e.shape.capacity);
        let s = &self.own.words()[start..start + slot_words(e.shape.capacity)];
        Ok(read_slot(s, e.shape.capacity, out))
    }
}
