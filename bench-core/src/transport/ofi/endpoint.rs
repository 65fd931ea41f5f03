//! The ring transport over libfabric: a receive region per node (a notification queue and a
//! slot ring per sender), a staging region per peer, and one reliable-datagram endpoint that
//! writes into every peer's region. Made in two typed steps: [`OfiEndpoint::create`] gives a
//! [`PreparedOfi`] and the address to publish; [`PreparedOfi::connect`] with every node's
//! address gives the [`OfiEndpoint`] that moves messages.

use super::bridge::{post_write, Provider, Write};
use super::closing::Closing;
use super::domain::Domain;
use super::ffi;
use super::memory::Registered;
use super::progress::{Inbox, Progress, CREDIT_CONTEXT};
use super::{err, MAX_NODE, QUEUE};
use crate::error::{CoreError, Result, TransportFault};
use crate::transport::one_sided::layout::{
    read_region_slot, region_layout, staging_words, RegionEntry,
};
use crate::transport::one_sided::send_tracker::{Chain, SendTracker, Signaling};
use crate::transport::one_sided::send_window::STAGED_ENTRIES;
use crate::transport::one_sided::slot_write::{
    length_word, payload_checksum, slot_write_plan, SLOT_WRITE_WRS,
};
use crate::transport::region::{entry_offset, slot_stride, ENTRY_WORDS};
use crate::transport::ring::poll_with_backoff;
use crate::transport::{
    AlignedWords, Completion, Endpoint, NodeId, Notification, RingShape, SlotRead, IMM_WORDS,
};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a notification waits for its receiver to free an entry of its queue.
const CREDIT_PATIENCE: Duration = Duration::from_secs(30);

/// Where a peer addresses a registered buffer: its base (a virtual address, or 0 where the
/// provider takes offsets) and key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RemoteBuffer {
    pub(super) base: u64,
    pub(super) key: u64,
}

/// What a node publishes so that its peers can write to it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OfiAddress {
    /// The provider the node opened: every node of a run must open the same one.
    pub(super) provider: String,
    /// The endpoint's name (`fi_getname`), in the provider's address format.
    pub(super) name: Vec<u8>,
    /// The receive region and its per-sender layout.
    pub(super) region: RemoteBuffer,
    pub(super) layout: HashMap<NodeId, RegionEntry>,
    /// The credit words: word `j` is how many of this node's notifications node `j` has
    /// consumed.
    pub(super) credits: RemoteBuffer,
}

/// Per peer: its address in the address vector, where this node writes there, and the
/// staging it writes from (the slot copies and notification entries, then one word for the
/// credit this node returns to it).
struct Peer {
    addr: ffi::fi_addr_t,
    ring: Option<(RemoteBuffer, RegionEntry)>,
    credits: RemoteBuffer,
    staging: Registered,
    credit_word: usize,
}

/// What create makes and connect needs.
pub struct PreparedOfi {
    node: NodeId,
    region: Registered,
    credits: Registered,
    senders: HashMap<NodeId, RegionEntry>,
    staging: HashMap<NodeId, (Registered, usize)>,
    /// Last: fields drop in order, and the registrations above close on this domain, so a
    /// PreparedOfi dropped without connecting (an error before the run) closes them first.
    domain: Arc<Domain>,
}

/// One node's endpoint on a libfabric provider, connected. Its progress thread reads the
/// completion queue; fields drop in order: the thread first, then the staging regions, the
/// receive region and credits, and the domain last.
pub struct OfiEndpoint {
    progress: Option<Progress>,
    inbox: Arc<Inbox>,
    peers: HashMap<NodeId, Peer>,
    /// Every node's fi_addr, by node.
    addrs: Vec<ffi::fi_addr_t>,
    node: NodeId,
    region: Registered,
    credits: Registered,
    senders: HashMap<NodeId, RegionEntry>,
    /// Next entry to consume per sender, and the count last returned to it as credit.
    heads: HashMap<NodeId, (u64, u64)>,
    /// Notifications handed out per receiver.
    notes_sent: HashMap<NodeId, u64>,
    sends: SendTracker,
    credit_failures: Vec<String>,
    /// Its place among the endpoints of this process, which close in step ([`Closing`]).
    closing: Closing,
    domain: Arc<Domain>,
}

/// How long a drained endpoint waits for its peers in this process to drain before closing
/// anyway (a peer that failed never gets there).
const CLOSE_PATIENCE: Duration = Duration::from_secs(10);

impl std::fmt::Debug for OfiEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "OfiEndpoint(node {}, {} peers, {})",
            self.node,
            self.peers.len(),
            self.domain.provider()
        )
    }
}

impl std::fmt::Debug for PreparedOfi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PreparedOfi(node {}, {})",
            self.node,
            self.domain.provider()
        )
    }
}

impl OfiEndpoint {
    /// Opens node `node`'s provider objects (`provider` as `fi_info -p` names it, else
    /// libfabric's first match; an IP provider's endpoint bound to `source`), registers
    /// its receive region (a ring of the given shape per sender in `local`), its credit words
    /// and a staging region per peer (`local` senders and `remote` receivers), and gives the
    /// address peers write with.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when no provider fits, a node id is past [`MAX_NODE`], or an
    /// object cannot be opened (what was opened is closed).
    pub fn create(
        node: NodeId,
        local: &HashMap<NodeId, RingShape>,
        remote: &HashMap<NodeId, RingShape>,
        provider: Option<&str>,
        source: Option<IpAddr>,
    ) -> Result<(PreparedOfi, OfiAddress)> {
        let top = local
            .keys()
            .chain(remote.keys())
            .chain([&node])
            .copied()
            .max()
            .unwrap_or(node);
        if top > MAX_NODE {
            return Err(err(format!(
                "node ids up to {MAX_NODE} (notifications carry 16 bits of sender), got node {top}"
            )));
        }
        // Send completions: per receiver at most STAGED_ENTRIES chains in flight, each of at
        // most SLOT_WRITE_WRS + 1 requests, every one of which completes when it fails; remote
        // data: a queue's worth per sender; credit returns that fail.
        let chain = SLOT_WRITE_WRS as usize + 1;
        let cq = chain * STAGED_ENTRIES * remote.len() + QUEUE * (local.len() + 1) + 64;
        let domain = Arc::new(Domain::open(provider, source, top + 1, cq)?);
        let (layout, words) = region_layout(local, QUEUE);
        let region = Registered::register(
            &domain,
            AlignedWords::zeroed(words),
            u64::from(ffi::FI_REMOTE_WRITE),
            1,
            "receive region",
        )?;
        let credits = Registered::register(
            &domain,
            AlignedWords::zeroed(top + 1),
            u64::from(ffi::FI_REMOTE_WRITE),
            2,
            "credit words",
        )?;
        let mut all: Vec<NodeId> = local.keys().chain(remote.keys()).copied().collect();
        all.sort_unstable();
        all.dedup();
        let mut staging = HashMap::new();
        for (i, peer) in all.into_iter().enumerate() {
            let credit_word = staging_words(remote.get(&peer).copied());
            let s = Registered::register(
                &domain,
                AlignedWords::zeroed(credit_word + 1),
                u64::from(ffi::FI_WRITE),
                3 + i as u64,
                &format!("staging for node {peer}"),
            )?;
            staging.insert(peer, (s, credit_word));
        }
        let address = OfiAddress {
            provider: domain.provider(),
            name: domain.name()?,
            region: RemoteBuffer {
                base: region.base(),
                key: region.key(),
            },
            layout: layout.clone(),
            credits: RemoteBuffer {
                base: credits.base(),
                key: credits.key(),
            },
        };
        let prepared = PreparedOfi {
            node,
            region,
            credits,
            senders: layout,
            staging,
            domain,
        };
        Ok((prepared, address))
    }

    /// Bytes this endpoint has registered: its receive region, credit words and staging.
    pub fn registered_bytes(&self) -> u64 {
        let staging: u64 = self.peers.values().map(|p| p.staging.bytes()).sum();
        self.region.bytes() + self.credits.bytes() + staging
    }

    /// The provider this endpoint runs on.
    pub fn provider(&self) -> String {
        self.domain.provider()
    }

    /// The send bookkeeping and the provider it drives, borrowed together.
    fn send_side(&mut self) -> (&mut SendTracker, Provider<'_>) {
        (
            &mut self.sends,
            Provider {
                domain: &self.domain,
                inbox: &self.inbox,
                credit_failures: &mut self.credit_failures,
                addrs: &self.addrs,
            },
        )
    }

    fn target(&self, to: NodeId) -> Result<(RemoteBuffer, RegionEntry)> {
        self.peers.get(&to).and_then(|p| p.ring).ok_or_else(|| {
            err(format!(
                "node {}: no ring registered at node {to}",
                self.node
            ))
        })
    }

    /// Waits until `to` has consumed enough of this node's notifications that the next one
    /// finds its queue entry free: at most [`QUEUE`] unconsumed.
    fn wait_for_credit(&mut self, to: NodeId) -> Result<()> {
        let sent = self.notes_sent.get(&to).copied().unwrap_or(0);
        let started = Instant::now();
        loop {
            let consumed = self.credits.words().as_slice()[to].load(Ordering::Acquire);
            if sent < consumed + QUEUE as u64 {
                return Ok(());
            }
            if started.elapsed() > CREDIT_PATIENCE {
                return Err(err(format!(
                    "node {}: node {to} consumed none of its {QUEUE} queued notifications for {} s",
                    self.node,
                    CREDIT_PATIENCE.as_secs()
                )));
            }
            self.health()?;
            std::thread::sleep(Duration::from_micros(20));
        }
    }

    /// The notification `t` (the immediate) with the sender in its upper 16 bits.
    fn remote_data(&self, t: u64) -> u64 {
        ((self.node as u64) << 16) | (t & 0xFFFF)
    }

    /// Stages and posts a notification entry (number `t` in staging entry `entry`) of
    /// words `[t + 1, slot, version, imm0, imm1]` as the write with remote data that ends a
    /// chain.
    fn notification_write(
        &self,
        to: NodeId,
        (t, entry): (u64, usize),
        words: [u64; 5],
        id: u64,
        signaled: bool,
    ) -> Write {
        let (buf, e) = self.peers[&to].ring.expect("a ring (target checked)");
        let p = &self.peers[&to];
        let ent = entry * ENTRY_WORDS;
        let st = p.staging.words().as_slice();
        for (i, v) in words.into_iter().enumerate() {
            st[ent + i].store(v, Ordering::Relaxed);
        }
        Write {
            local: p.staging.local(ent),
            desc: p.staging.desc(),
            bytes: ENTRY_WORDS * 8,
            remote: buf.base + (entry_offset(e.queue, t as usize % QUEUE) * 8) as u64,
            key: buf.key,
            to: p.addr,
            id,
            signaled,
            data: Some(self.remote_data(t)),
        }
    }
}

impl PreparedOfi {
    /// Inserts every node's name in the address vector (`table[j]` is node `j`'s address),
    /// records where this node writes, and starts the progress thread.
    ///
    /// # Errors
    /// [`CoreError::Transport`] naming the node whose address is missing, of another
    /// provider, or refused by the address vector.
    pub fn connect(self, table: &[OfiAddress]) -> Result<OfiEndpoint> {
        let node = self.node;
        let mine = self.domain.provider();
        let mut addrs = Vec::with_capacity(table.len());
        for (j, a) in table.iter().enumerate() {
            if a.provider != mine {
                return Err(err(format!(
                    "node {j} opened provider {} and node {node} {mine}: every node of a run needs the same (SYNCBENCH_OFI_PROVIDER)",
                    a.provider
                )));
            }
            let fi = self
                .domain
                .insert(&a.name)
                .map_err(|e| err(format!("node {node}: the address of node {j}: {e}")))?;
            addrs.push(fi);
        }
        let mut peers = HashMap::new();
        let mut sends = SendTracker::new("ofi", node, Signaling::Every);
        let mut staging: Vec<_> = self.staging.into_iter().collect();
        staging.sort_by_key(|s| s.0);
        for (peer, (staging, credit_word)) in staging {
            let theirs = table
                .get(peer)
                .ok_or_else(|| err(format!("node {node}: no address for node {peer}")))?;
            peers.insert(
                peer,
                Peer {
                    addr: addrs[peer],
                    ring: theirs.layout.get(&node).map(|e| (theirs.region, *e)),
                    credits: theirs.credits,
                    staging,
                    credit_word,
                },
            );
            sends.add_peer(peer);
        }
        let closing = Closing::open(
            self.domain.name()?,
            table
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != node)
                .map(|(_, a)| a.name.clone())
                .collect(),
        );
        let inbox = Arc::new(Inbox::default());
        let progress = Progress::start(self.domain.clone(), inbox.clone(), node);
        let ep = OfiEndpoint {
            progress: Some(progress),
            inbox,
            peers,
            addrs,
            node,
            region: self.region,
            credits: self.credits,
            heads: self.senders.keys().map(|&k| (k, (0, 0))).collect(),
            senders: self.senders,
            notes_sent: HashMap::new(),
            sends,
            credit_failures: Vec::new(),
            closing,
            domain: self.domain,
        };
        eprintln!(
            "ofi: node {node}: {} peer(s) over provider {mine}; {:.1} MiB ({} bytes) registered",
            ep.peers.len(),
            ep.registered_bytes() as f64 / f64::from(1u32 << 20),
            ep.registered_bytes()
        );
        Ok(ep)
    }
}

/// Teardown: the chains still in flight are reaped first (up to 2 s), so that a final write
/// (a DONE or STOP) is not cancelled with the endpoint; then, its progress thread still
/// running, the endpoint waits until its peers in this process have drained theirs
/// ([`Closing`]: shm maps a peer of the same process by that peer's own region, which
/// `fi_close` unmaps); then the progress thread stops, the endpoint closes (cancelling what
/// is left, so the provider reads no staging after it is freed), and the registrations and
/// the domain close as the fields drop.
impl Drop for OfiEndpoint {
    fn drop(&mut self) {
        let (sends, mut provider) = self.send_side();
        sends.teardown(&mut provider, Duration::from_secs(2));
        self.closing.drained(CLOSE_PATIENCE);
        drop(self.progress.take());
        if let Some(d) = Arc::get_mut(&mut self.domain) {
            d.close_endpoint();
        }
    }
}

impl Endpoint for OfiEndpoint {
    fn node(&self) -> NodeId {
        self.node
    }

    fn remote_depth(&self, to: NodeId) -> Result<usize> {
        self.target(to).map(|t| t.1.depth)
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
        let (buf, e) = self.target(to)?;
        if slot >= e.depth || len > e.capacity || data.as_ref().map_or(len > 0, |d| d.len() < len) {
            return Err(err(format!(
                "node {}: write of {len} words into slot {slot} of node {to}'s ring of {} slots of {} words",
                self.node, e.depth, e.capacity
            )));
        }
        if notify.is_some() {
            self.wait_for_credit(to)?;
        }
        // Admitted first (SendTracker::admit), so that no staging is written while a chain
        // in flight reads it.
        let chain = Chain::Write {
            slot,
            notify: notify.is_some(),
        };
        let (sends, mut provider) = self.send_side();
        let admitted = sends.admit(&mut provider, to, chain)?;
        let stride = slot_stride(e.capacity);
        let p = &self.peers[&to];
        let st = p.staging.words().as_slice();
        let base = STAGED_ENTRIES * ENTRY_WORDS + slot * stride;
        st[base].store(version, Ordering::Relaxed);
        if let Some(d) = &data {
            crate::transport::aligned::copy_words(
                &st[base + 2..base + 2 + len],
                &d.as_slice()[..len],
            );
        }
        let payload = st[base + 2..base + 2 + len]
            .iter()
            .map(|w| w.load(Ordering::Relaxed));
        st[base + 1].store(
            length_word(len, payload_checksum(payload)),
            Ordering::Relaxed,
        );
        st[base + e.capacity + 2].store(version, Ordering::Relaxed);
        let remote_slot = buf.base + ((e.ring + slot * stride) * 8) as u64;
        // Header, then length and payload, then footer, then the notification: writes from
        // one endpoint to another land in posting order (FI_ORDER_WAW, asked of the
        // provider). Every request is signaled (Signaling::Every): a provider may complete
        // them out of order, and the chain is done only when all have.
        let plan = slot_write_plan(e.capacity, len);
        let mut writes = Vec::with_capacity(plan.len() + 1);
        for (i, seg) in plan.iter().enumerate() {
            let (id, signaled) = admitted.request(i);
            writes.push(Write {
                local: p.staging.local(base + seg.word),
                desc: p.staging.desc(),
                bytes: seg.bytes as usize,
                remote: remote_slot + seg.byte_offset(),
                key: buf.key,
                to: p.addr,
                id,
                signaled,
                data: None,
            });
        }
        if let (Some(imm), Some(note)) = (notify, admitted.notification) {
            let (id, signaled) = admitted.request(writes.len());
            writes.push(self.notification_write(
                to,
                note,
                [note.0 + 1, slot as u64, version, imm[0], imm[1]],
                id,
                signaled,
            ));
            *self.notes_sent.entry(to).or_default() += 1;
        }
        let (sends, mut provider) = self.send_side();
        // SAFETY: every write names the staging region of `to`, registered until the
        // endpoint closes; the slot and entry staged above were free (admitted), and neither
        // is restaged before every completion of this chain is read (SendTracker).
        unsafe { sends.post(&mut provider, &admitted, writes.as_mut_slice())? };
        Ok(admitted.id)
    }

    fn post_notify(&mut self, to: NodeId, imm: [u64; IMM_WORDS]) -> Result<u64> {
        self.target(to)?;
        self.wait_for_credit(to)?;
        let (sends, mut provider) = self.send_side();
        let admitted = sends.admit(&mut provider, to, Chain::Notify)?;
        let note = admitted
            .notification
            .expect("a notification is staged in an entry");
        let (id, signaled) = admitted.request(0);
        let mut w =
            self.notification_write(to, note, [note.0 + 1, 0, 0, imm[0], imm[1]], id, signaled);
        *self.notes_sent.entry(to).or_default() += 1;
        let (sends, mut provider) = self.send_side();
        // SAFETY: as post_write's.
        unsafe { sends.post(&mut provider, &admitted, std::slice::from_mut(&mut w))? };
        Ok(admitted.id)
    }

    fn poll_completion(&mut self) -> Option<Completion> {
        let (sends, mut provider) = self.send_side();
        sends.poll_completion(&mut provider)
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

    /// The first failure this endpoint noticed: a refused post, a failed completion, an
    /// out-of-order notification; then a failed credit return; then a failure of the
    /// completion queue itself.
    fn health(&self) -> Result<()> {
        if let Some((fault, message)) = self.sends.failures().first() {
            return Err(CoreError::transport(*fault, message.clone()));
        }
        if let Some(m) = self.credit_failures.first() {
            return Err(CoreError::transport(
                TransportFault::PeerLost,
                format!("ofi: node {}: {m}", self.node),
            ));
        }
        if let Some(m) = self.inbox.faults.lock().expect("inbox").first() {
            return Err(err(format!("node {}: {m}", self.node)));
        }
        Ok(())
    }
}

impl OfiEndpoint {
    /// The next notification: the remote data of a write that landed here names its sender
    /// and number; the entry is accepted in the sender's order ([`accept`]), and every
    /// quarter queue consumed is returned to the sender as credit.
    fn pop(&mut self) -> Option<Notification> {
        let data = self.inbox.notes.lock().expect("inbox").pop_front()?;
        let (from, t) = ((data >> 16) as usize & 0xFFFF, data & 0xFFFF);
        let Some(e) = self.senders.get(&from).copied() else {
            self.sends.record(
                TransportFault::Malformed,
                format!(
                    "ofi: node {}: remote data {data:#x} names node {from}, which has no ring here",
                    self.node
                ),
            );
            return None;
        };
        let at = entry_offset(e.queue, t as usize % QUEUE);
        let w = &self.region.words().as_slice()[at..at + ENTRY_WORDS];
        let v = |j: usize| w[j].load(Ordering::Acquire);
        let (head, returned) = self.heads.get(&from).copied().unwrap_or((0, 0));
        let (expected, next) = accept(t, head, v(0));
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
                    "ofi: node {}: notification {next} from node {from} arrived out of order (entry holds {})",
                    self.node,
                    v(0)
                ),
            );
        }
        let returned = if next >= returned + (QUEUE / 4) as u64 {
            self.return_credit(from, next);
            next
        } else {
            returned
        };
        self.heads.insert(from, (next, returned));
        note
    }

    /// Writes `consumed` into `to`'s credit word for this node. Unsignaled, from one staging
    /// word that a later return may overwrite before the provider read it: the count only
    /// grows, so a return carrying a later count is as right.
    fn return_credit(&mut self, to: NodeId, consumed: u64) {
        let Some(p) = self.peers.get(&to) else { return };
        p.staging.words().as_slice()[p.credit_word].store(consumed, Ordering::Relaxed);
        let w = Write {
            local: p.staging.local(p.credit_word),
            desc: p.staging.desc(),
            bytes: 8,
            remote: p.credits.base + (self.node * 8) as u64,
            key: p.credits.key,
            to: p.addr,
            id: CREDIT_CONTEXT,
            signaled: false,
            data: None,
        };
        // SAFETY: the word is in the staging region of `to`, registered until the endpoint
        // closes; a rewrite in flight is harmless (above).
        let rc = unsafe { post_write(self.domain.ep, &w) };
        if rc != 0 {
            self.credit_failures.push(format!(
                "returning credits to node {to} failed: {}",
                ffi::strerror(rc as i64)
            ));
        }
    }
}

/// Whether the queue entry whose first word is `word` holds notification `t` (its low 16
/// bits, as the remote data carries it; the entry of number t holds t + 1), and the sender's
/// head after it: the entry's number when it does, else `head + 1` (the entry is skipped and
/// reported).
pub(super) fn accept(t: u64, head: u64, word: u64) -> (bool, u64) {
    let expected = word & 0xFFFF == (t + 1) & 0xFFFF && word > head;
    (expected, if expected { word } else { head + 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The providers Debian's libfabric brings that work on any machine.
    const PROVIDERS: [&str; 3] = ["tcp;ofi_rxm", "shm", "sockets"];

    const SHAPE: RingShape = RingShape {
        capacity: 4,
        depth: 2,
    };

    /// Nodes 0 and 1 on `provider`, each with a ring at the other.
    fn pair(provider: &str) -> (OfiEndpoint, OfiEndpoint) {
        let lo = Some(IpAddr::from([127, 0, 0, 1]));
        let ring = |peer| HashMap::from([(peer, SHAPE)]);
        let (a, aa) = OfiEndpoint::create(0, &ring(1), &ring(1), Some(provider), lo).unwrap();
        let (b, ba) = OfiEndpoint::create(1, &ring(0), &ring(0), Some(provider), lo).unwrap();
        let table = vec![aa, ba];
        (a.connect(&table).unwrap(), b.connect(&table).unwrap())
    }

    #[test]
    fn write_notify_and_read_on_every_software_provider() {
        for provider in PROVIDERS {
            let (mut a, mut b) = pair(provider);
            assert_eq!(a.provider(), provider);
            let src = Arc::new(AlignedWords::from_words(&[1, 2, 3]));
            let id = a.post_write(1, 1, 7, Some(src), 3, Some([9, 8])).unwrap();
            let n = b
                .wait_notification(Duration::from_secs(10))
                .expect(provider);
            assert_eq!(
                (n.from, n.slot, n.version, n.imm),
                (0, 1, 7, [9, 8]),
                "{provider}"
            );
            let mut out = Vec::new();
            let r = b.read_slot(0, 1, &mut out).unwrap();
            assert!(r.consistent(), "{provider}: {r:?}");
            assert_eq!(
                (r.header, out.as_slice()),
                (7, &[1u64, 2, 3][..]),
                "{provider}"
            );
            b.post_notify(0, [5, 5]).unwrap();
            let back = a
                .wait_notification(Duration::from_secs(10))
                .expect(provider);
            assert_eq!((back.from, back.imm), (1, [5, 5]), "{provider}");
            let done = poll_with_backoff(Duration::from_secs(10), || a.poll_completion());
            assert_eq!(done.map(|c| c.wr_id), Some(id), "{provider}");
            // A write with no notification, seen by polling the slot.
            let src = Arc::new(AlignedWords::from_words(&[4, 5, 6, 7]));
            a.post_write(1, 0, 8, Some(src), 4, None).unwrap();
            let seen = poll_with_backoff(Duration::from_secs(10), || {
                let r = b.read_slot(0, 0, &mut out).unwrap();
                (r.consistent() && r.header == 8).then_some(out.clone())
            });
            assert_eq!(seen, Some(vec![4, 5, 6, 7]), "{provider}");
            a.health().unwrap();
            b.health().unwrap();
        }
    }

    #[test]
    fn a_sender_runs_at_most_a_queue_ahead_and_credits_let_it_go_on() {
        for provider in PROVIDERS {
            let (mut a, mut b) = pair(provider);
            let total = 3 * QUEUE as u64 + 5;
            let sender = std::thread::spawn(move || {
                for i in 0..total {
                    a.post_notify(1, [i, 0]).unwrap();
                }
                // Until the receiver has taken everything: dropping tears the endpoint down.
                a
            });
            for i in 0..total {
                let n = b
                    .wait_notification(Duration::from_secs(30))
                    .expect(provider);
                assert_eq!(n.imm, [i, 0], "{provider}: notification {i}");
            }
            let a = sender.join().unwrap();
            a.health().unwrap();
            b.health().unwrap();
        }
    }

    #[test]
    fn the_raw_provider_loop_measures_every_software_provider() {
        for provider in PROVIDERS {
            for size in [64, 4096] {
                eprintln!("{provider} {size}");
                let (lat, bw) = super::super::raw_costs(Some(provider), size, 50, 5, 8).unwrap();
                assert!(
                    lat.min > 0.0 && lat.median >= lat.min,
                    "{provider}: {lat:?}"
                );
                assert!(
                    bw.average > 0.0 && bw.peak >= bw.average * 0.5,
                    "{provider}: {bw:?}"
                );
            }
        }
    }

    #[test]
    fn bad_requests_name_what_and_where() {
        let (mut a, _b) = pair("tcp;ofi_rxm");
        let src = Arc::new(AlignedWords::from_words(&[1; 8]));
        let e = a
            .post_write(1, 5, 1, Some(src.clone()), 2, None)
            .unwrap_err();
        assert!(
            e.to_string().contains("slot 5 of node 1's ring of 2 slots"),
            "{e}"
        );
        let e = a.post_write(1, 0, 1, Some(src), 8, None).unwrap_err();
        assert!(e.to_string().contains("write of 8 words"), "{e}");
        let e = a.post_notify(7, [0, 0]).unwrap_err();
        assert!(
            e.to_string().contains("no ring registered at node 7"),
            "{e}"
        );
        let e = a.read_slot(4, 0, &mut Vec::new()).unwrap_err();
        assert!(
            e.to_string().contains("no ring registered for node 4"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_provider_and_a_mixed_run_are_refused() {
        let ring = HashMap::from([(1, SHAPE)]);
        let e = OfiEndpoint::create(0, &ring, &ring, Some("no-such-provider"), None).unwrap_err();
        let m = e.to_string();
        assert!(
            m.starts_with("transport: ofi: no libfabric provider (no-such-provider)"),
            "{m}"
        );
        let (a, aa) = OfiEndpoint::create(0, &ring, &ring, Some("sockets"), None).unwrap();
        let ring0 = HashMap::from([(0, SHAPE)]);
        let (_b, ba) = OfiEndpoint::create(1, &ring0, &ring0, Some("tcp;ofi_rxm"), None).unwrap();
        let m = a.connect(&[aa, ba]).unwrap_err().to_string();
        assert!(
            m.contains("node 1 opened provider tcp;ofi_rxm and node 0 sockets"),
            "{m}"
        );
    }

    #[test]
    fn entries_are_accepted_by_their_low_bits_in_order() {
        assert_eq!(accept(0, 0, 1), (true, 1));
        assert_eq!(accept(4, 4, 5), (true, 5));
        // A number past 16 bits: the entry's full word is the head.
        assert_eq!(accept(0xFFFF, 0xFFFF, 0x1_0000), (true, 0x1_0000));
        assert_eq!(accept(3, 0x1_0003, 0x1_0004), (true, 0x1_0004));
        // Stale (an older round) or another number: skipped, the head moves on by one.
        assert_eq!(accept(4, 4, 3), (false, 5));
        assert_eq!(accept(4, 0x1_0004, 5), (false, 0x1_0005));
    }
}
