//! A segment: the file in `/dev/shm` one receiver creates and its senders map, seen as words,
//! and its directory page `[magic, job token, owner, senders, (sender, queue offset, ring
//! offset, capacity, depth) per sender]`, read from memory another process wrote and so checked
//! number by number.

use super::super::region::slot_stride;
use super::super::{NodeId, RingShape};
use super::QUEUE_WORDS;
use crate::error::{CoreError, Result, TransportFault};
use memmap2::MmapMut;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub(super) const MAGIC: u64 = 0x5342_5348_4d00_0001; // "SBSHM", version 1

/// Where a sender's queue and ring are in a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) queue: usize,
    pub(super) ring: usize,
    pub(super) shape: RingShape,
}

/// A mapped segment, seen as words.
pub(super) struct Segment {
    pub(super) map: MmapMut,
    pub(super) path: PathBuf,
}

impl Segment {
    pub(super) fn words(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is page-aligned, its length a multiple of 8, and lives as long as
        // self; all access to shared words is atomic (another process writes them too).
        unsafe {
            std::slice::from_raw_parts(self.map.as_ptr() as *const AtomicU64, self.map.len() / 8)
        }
    }

    /// Reads the directory, checking the header.
    pub(super) fn directory(&self, token: u64) -> Result<HashMap<NodeId, Entry>> {
        parse_directory(self.words(), token, &self.path)
    }
}

/// Reads a segment's directory (`words`: the whole segment), checking the header and that every
/// entry's queue and ring lie inside the segment; another process wrote it, so every number is
/// checked, and arithmetic that would overflow is an error.
pub(super) fn parse_directory(
    w: &[AtomicU64],
    token: u64,
    path: &Path,
) -> Result<HashMap<NodeId, Entry>> {
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
            .map(slot_stride)
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

pub(super) fn io(path: &Path, e: std::io::Error) -> CoreError {
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
