//! The receive side every backend shares: per-sender rings of version-stamped slots (a seqlock:
//! header first and footer last on write, footer first and header last on read), and waiting
//! by polling for backends with nothing to wake a waiter (the inbox of notifications is
//! `inbox.rs`).

use super::aligned::{copy_words, load_words};
use super::inbox::SPIN;
use super::{AlignedWords, NodeId, RingShape, SlotRead};
use crate::error::{CoreError, Result, TransportFault};
use std::collections::HashMap;
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// A ring of slots one receiver registered for one sender.
#[derive(Debug)]
pub(crate) struct Ring {
    slots: Vec<AlignedWords>,
    capacity: usize,
}

impl Ring {
    pub(crate) fn new(capacity: usize, depth: usize) -> Self {
        Ring {
            slots: (0..depth)
                .map(|_| AlignedWords::zeroed(slot_words(capacity)))
                .collect(),
            capacity,
        }
    }

    /// Slots in the ring.
    pub(crate) fn depth(&self) -> usize {
        self.slots.len()
    }

    /// Payload words per slot.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Starts a write of `len` words of `version` into `slot` (header first), for backends that
    /// land the payload in pieces as it arrives ([`Ring::land`], then [`Ring::finish`]).
    pub(crate) fn begin(&self, slot: usize, version: u64, len: usize) {
        let s = self.slots[slot].as_slice();
        s[0].store(version, Ordering::Relaxed);
        fence(Ordering::Release);
        s[1].store(len as u64, Ordering::Relaxed);
    }

    /// Lands `words` at payload offset `offset` of `slot`.
    pub(crate) fn land(&self, slot: usize, offset: usize, words: &[u64]) {
        let s = self.slots[slot].as_slice();
        for (d, &w) in s[2 + offset..2 + offset + words.len()].iter().zip(words) {
            d.store(w, Ordering::Relaxed);
        }
    }

    /// Completes a write begun with [`Ring::begin`] (footer last).
    pub(crate) fn finish(&self, slot: usize, version: u64) {
        let f = self.footer_index();
        self.slots[slot].as_slice()[f].store(version, Ordering::Release);
    }

    fn footer_index(&self) -> usize {
        self.capacity + 2
    }

    /// Header first, then length and payload, footer last (release).
    pub(crate) fn write(&self, slot: usize, version: u64, src: Option<&AlignedWords>, len: usize) {
        write_slot(
            self.slots[slot].as_slice(),
            self.capacity,
            version,
            src,
            len,
        );
    }

    /// Footer first (acquire), then length and payload, header last.
    pub(crate) fn read(&self, slot: usize, out: &mut Vec<u64>) -> SlotRead {
        read_slot(self.slots[slot].as_slice(), self.capacity, out)
    }
}

/// What [`super::Endpoint::read_slot`] does on the backends that keep their receive rings as
/// [`Ring`]s by sender (threads, tcp): slot `slot` of the ring node `node` registered for
/// `from`, read with the seqlock.
///
/// # Errors
/// No ring registered for `from` (`NoSuchPeer`), or a slot beyond its depth (`RingOverrun`).
pub(crate) fn read_registered(
    local: &HashMap<NodeId, std::sync::Arc<Ring>>,
    node: NodeId,
    from: NodeId,
    slot: usize,
    out: &mut Vec<u64>,
) -> Result<SlotRead> {
    let ring = local.get(&from).ok_or_else(|| {
        CoreError::transport(
            TransportFault::NoSuchPeer,
            format!("node {node} registered no ring for node {from}"),
        )
    })?;
    if slot >= ring.depth() {
        return Err(CoreError::transport(
            TransportFault::RingOverrun,
            format!(
                "slot {slot} out of range for the ring of node {from} ({} slots)",
                ring.depth()
            ),
        ));
    }
    Ok(ring.read(slot, out))
}

/// Words a slot of `capacity` payload words occupies: header, length, payload, footer.
pub(crate) const fn slot_words(capacity: usize) -> usize {
    capacity + 3
}

/// The seqlock write of one slot `s` (of [`slot_words`]): header first, then length and
/// payload, footer last (release). Every backend's writes land this way.
pub(crate) fn write_slot(
    s: &[AtomicU64],
    capacity: usize,
    version: u64,
    src: Option<&AlignedWords>,
    len: usize,
) {
    s[0].store(version, Ordering::Relaxed);
    fence(Ordering::Release);
    s[1].store(len as u64, Ordering::Relaxed);
    if let Some(src) = src {
        copy_words(&s[2..2 + len], &src.as_slice()[..len]);
    }
    s[capacity + 2].store(version, Ordering::Release);
}

/// The seqlock read of one slot: footer first (acquire), then length and payload, header last.
pub(crate) fn read_slot(s: &[AtomicU64], capacity: usize, out: &mut Vec<u64>) -> SlotRead {
    read_slot_with_check(s, capacity, out).0
}

/// [`read_slot`], and the high half of the length word, where a backend may carry a check of
/// the payload (the rdma backend's checksum; zero elsewhere). The low half is the length.
pub(crate) fn read_slot_with_check(
    s: &[AtomicU64],
    capacity: usize,
    out: &mut Vec<u64>,
) -> (SlotRead, u32) {
    let footer = s[capacity + 2].load(Ordering::Acquire);
    let word = s[1].load(Ordering::Relaxed);
    let len = ((word & u64::from(u32::MAX)) as usize).min(capacity);
    load_words(&s[2..2 + len], out);
    fence(Ordering::Acquire);
    let header = s[0].load(Ordering::Relaxed);
    let read = SlotRead {
        header,
        footer,
        len,
        checksum_ok: true,
    };
    (read, (word >> 32) as u32)
}

/// Polls `poll` until it yields or `timeout` passes: spinning for [`SPIN`], then sleeping in
/// growing steps (up to 200 us), for backends whose notifications land in memory another
/// process or a device writes, with nothing to wake a sleeper.
pub(crate) fn poll_with_backoff<T>(
    timeout: std::time::Duration,
    mut poll: impl FnMut() -> Option<T>,
) -> Option<T> {
    let t0 = std::time::Instant::now();
    let mut nap = std::time::Duration::from_micros(5);
    loop {
        if let Some(n) = poll() {
            return Some(n);
        }
        let waited = t0.elapsed();
        if waited >= timeout {
            return None;
        }
        if waited < SPIN {
            std::hint::spin_loop();
        } else {
            std::thread::sleep(nap.min(timeout - waited));
            nap = (nap * 2).min(std::time::Duration::from_micros(200));
        }
    }
}

/// Which receiver registered a ring of which shape for which sender: the table every fabric
/// builder keeps before it makes its endpoints.
#[derive(Debug)]
pub(crate) struct RingTable {
    nodes: usize,
    rings: HashMap<(NodeId, NodeId), RingShape>,
}

impl RingTable {
    pub(crate) fn new(nodes: usize) -> Self {
        RingTable {
            nodes,
            rings: HashMap::new(),
        }
    }

    pub(crate) fn nodes(&self) -> usize {
        self.nodes
    }

    /// Receiver `to` registers a ring of `depth` slots of `capacity` words for `from`.
    ///
    /// # Errors
    /// [`CoreError::Transport`] for a node out of range or a zero depth.
    pub(crate) fn register(
        &mut self,
        from: NodeId,
        to: NodeId,
        capacity: usize,
        depth: usize,
    ) -> Result<()> {
        if from >= self.nodes || to >= self.nodes || depth == 0 {
            return Err(CoreError::transport(
                TransportFault::Setup,
                format!(
                    "cannot register ring {from} -> {to} of depth {depth} on a fabric of {} nodes",
                    self.nodes
                ),
            ));
        }
        self.rings.insert((from, to), RingShape { capacity, depth });
        Ok(())
    }

    /// The rings `node` registered, by sender.
    pub(crate) fn local(&self, node: NodeId) -> HashMap<NodeId, RingShape> {
        self.rings
            .iter()
            .filter(|((_, t), _)| *t == node)
            .map(|((f, _), s)| (*f, *s))
            .collect()
    }

    /// The rings registered for `node`, by receiver.
    pub(crate) fn remote(&self, node: NodeId) -> HashMap<NodeId, RingShape> {
        self.rings
            .iter()
            .filter(|((f, _), _)| *f == node)
            .map(|((_, t), s)| (*t, *s))
            .collect()
    }
}
