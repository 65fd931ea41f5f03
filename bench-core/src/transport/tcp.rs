//! The TCP backend: one connection per ordered peer pair; each endpoint's receiver threads land
//! incoming frames into the registered slot rings (header first, payload in pieces as it
//! arrives, footer last, the same seqlock as every backend) and deliver the notification after
//! the data.
//!
//! Start-up: every endpoint connects to each node it exchanges rings with (either way) before the
//! run starts, retrying a refused or reset connection with backoff until a start-up deadline,
//! and then waits until each of those nodes has connected to it ([`TcpEndpoint::connect_peers`],
//! [`TcpEndpoint::await_peers`]). No connection is opened lazily mid-run to a peer that may
//! already have finished and closed its listener (the race that made 4-rank runs fail with
//! "connection refused" or "connection reset": a peer connected for the first time to a node
//! whose endpoint had just been dropped).
//!
//! A connection opens with a handshake `[magic, job token, sender]`; a connection with another
//! token is rejected and logged, and the run goes on. Every frame is
//! `[magic | kind, job token, slot, version, length in words, imm0, imm1]` then the payload;
//! the length is bounded by the slot the receiver registered, so a peer sending garbage is cut
//! off with an error naming it. A connection that ends without its closing frame is a lost
//! peer: [`Endpoint::health`] names it, and writes to it fail.

use super::inbox::Inbox;
use super::ring::{Ring, RingTable};
use super::{AlignedWords, Completion, Endpoint, NodeId, Notification, SlotRead, IMM_WORDS};
use crate::error::{CoreError, Result, TransportFault};
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const MAGIC: u64 = 0x5342_5446_0000_0000; // "SBTF"
const KIND_WRITE: u64 = 1;
const KIND_NOTIFY: u64 = 2;
const KIND_BYE: u64 = 3;
/// Frame header words.
const HEADER: usize = 7;
/// Payload words landed per read.
const CHUNK_WORDS: usize = 8192;
/// Start-up deadline of endpoints built outside a cluster job (in-process fabrics), and of a
/// connection opened lazily to a node outside an endpoint's peers.
pub const DEFAULT_STARTUP: Duration = Duration::from_secs(10);

pub use super::RingShape;

/// Builder of a TCP fabric whose endpoints all live in this process (tests, benchmarks, and
/// the pattern each rank follows with its own part of the table).
#[derive(Debug)]
pub struct TcpFabric {
    token: u64,
    rings: RingTable,
}

impl TcpFabric {
    /// A fabric of `nodes` endpoints sharing job token `token`.
    pub fn new(nodes: usize, token: u64) -> Self {
        TcpFabric {
            token,
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

    /// Binds every endpoint to a loopback port, connects each to its peers, and returns them
    /// once every expected connection is in, in node order.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when a port cannot be bound or a peer not reached within
    /// [`DEFAULT_STARTUP`].
    pub fn endpoints(self) -> Result<Vec<TcpEndpoint>> {
        let listeners = (0..self.rings.nodes())
            .map(|i| {
                TcpListener::bind("127.0.0.1:0").map_err(|e| {
                    CoreError::transport(
                        TransportFault::Setup,
                        format!("node {i}: cannot bind a loopback port: {e}"),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let addrs = listeners
            .iter()
            .map(|l| {
                l.local_addr()
                    .map_err(|e| CoreError::transport(TransportFault::Setup, e.to_string()))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut eps = listeners
            .into_iter()
            .enumerate()
            .map(|(node, listener)| {
                TcpEndpoint::start(
                    node,
                    self.token,
                    listener,
                    addrs.clone(),
                    self.rings.local(node),
                    self.rings.remote(node),
                )
            })
            .collect::<Result<Vec<_>>>()?;
        let deadline = Instant::now() + DEFAULT_STARTUP;
        for ep in &mut eps {
            ep.connect_peers(deadline)?;
        }
        for ep in &eps {
            ep.await_peers(deadline)?;
        }
        Ok(eps)
    }
}

/// What the receiver threads share with the endpoint.
#[derive(Debug, Default)]
struct Shared {
    inbox: Inbox,
    /// Receive-side failures (peer lost, malformed frame), each naming the peer.
    failures: Mutex<Vec<(TransportFault, String)>>,
    /// Connections rejected for a wrong token (logged; counted for tests).
    rejected: Mutex<u64>,
    /// Nodes whose connection to this endpoint passed the handshake.
    admitted: Mutex<HashSet<NodeId>>,
    admitted_cv: Condvar,
    stop: AtomicBool,
}

/// One node's endpoint on a TCP fabric.
pub struct TcpEndpoint {
    node: NodeId,
    token: u64,
    addrs: Vec<SocketAddr>,
    local: Arc<HashMap<NodeId, Arc<Ring>>>,
    remote: HashMap<NodeId, RingShape>,
    conns: HashMap<NodeId, TcpStream>,
    shared: Arc<Shared>,
    cq: VecDeque<Completion>,
    next_wr: u64,
    acceptor: Option<JoinHandle<()>>,
}

impl TcpEndpoint {
    /// Starts node `node`: `listener` accepts its incoming connections; `addrs[j]` is where node
    /// `j` listens; `local` are the rings this node registered per sender, `remote` those each
    /// receiver registered for it.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when the listener cannot be configured.
    pub fn start(
        node: NodeId,
        token: u64,
        listener: TcpListener,
        addrs: Vec<SocketAddr>,
        local: HashMap<NodeId, RingShape>,
        remote: HashMap<NodeId, RingShape>,
    ) -> Result<Self> {
        listener.set_nonblocking(true).map_err(|e| {
            CoreError::transport(TransportFault::Setup, format!("node {node}: listener: {e}"))
        })?;
        let rings: Arc<HashMap<NodeId, Arc<Ring>>> = Arc::new(
            local
                .iter()
                .map(|(&f, s)| (f, Arc::new(Ring::new(s.capacity, s.depth))))
                .collect(),
        );
        let shared = Arc::new(Shared::default());
        let (sh, rg) = (shared.clone(), rings.clone());
        let acceptor = std::thread::Builder::new()
            .name(format!("tcp-accept-{node}"))
            .spawn(move || accept_loop(node, token, listener, rg, sh))
            .map_err(|e| {
                CoreError::transport(TransportFault::Setup, format!("node {node}: spawn: {e}"))
            })?;
        Ok(TcpEndpoint {
            node,
            token,
            addrs,
            local: rings,
            remote,
            conns: HashMap::new(),
            shared,
            cq: VecDeque::new(),
            next_wr: 0,
            acceptor: Some(acceptor),
        })
    }

    /// Connections this endpoint rejected for a wrong job token.
    pub fn rejected_connections(&self) -> u64 {
        *self.shared.rejected.lock().expect("rejected lock")
    }

    /// Where this endpoint listens.
    pub fn addr(&self) -> SocketAddr {
        self.addrs[self.node]
    }

    /// The nodes this endpoint exchanges rings with, either way: the ones it connects to at
    /// start-up, and the ones it expects to connect to it.
    pub fn peers(&self) -> Vec<NodeId> {
        let set: BTreeSet<NodeId> = self
            .remote
            .keys()
            .chain(self.local.keys())
            .copied()
            .filter(|&p| p != self.node)
            .collect();
        set.into_iter().collect()
    }

    /// Connects to every peer (see [`Self::peers`]), retrying a refused, reset or timed-out
    /// connection with backoff until `deadline`. Call after every node of the job listens.
    ///
    /// # Errors
    /// [`CoreError::Transport`] naming this node, the peer and its address when the deadline
    /// passes.
    pub fn connect_peers(&mut self, deadline: Instant) -> Result<()> {
        for to in self.peers() {
            self.connect(to, deadline)?;
        }
        Ok(())
    }

    /// Waits until every peer has connected to this endpoint and passed the handshake.
    ///
    /// # Errors
    /// [`CoreError::Transport`] naming the peers that did not connect by `deadline`.
    pub fn await_peers(&self, deadline: Instant) -> Result<()> {
        let want = self.peers();
        let mut admitted = self.shared.admitted.lock().expect("admitted lock");
        loop {
            let missing: Vec<String> = want
                .iter()
                .filter(|p| !admitted.contains(p))
                .map(|p| p.to_string())
                .collect();
            if missing.is_empty() {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(CoreError::transport(
                    TransportFault::Unreachable,
                    format!(
                        "node {}: node(s) {} did not connect to it at {} by the start-up deadline",
                        self.node,
                        missing.join(", "),
                        self.addrs[self.node]
                    ),
                ));
            }
            admitted = self
                .shared
                .admitted_cv
                .wait_timeout(admitted, left.min(Duration::from_millis(50)))
                .expect("admitted lock")
                .0;
        }
    }

    /// Opens the connection to `to` unless it is open, retrying until `deadline`.
    fn connect(&mut self, to: NodeId, deadline: Instant) -> Result<()> {
        if self.conns.contains_key(&to) {
            return Ok(());
        }
        let addr = *self.addrs.get(to).ok_or_else(|| {
            CoreError::transport(
                TransportFault::NoSuchPeer,
                format!("no node {to} on this fabric"),
            )
        })?;
        let mut s = connect_with_retry(addr, deadline).map_err(|e| {
            CoreError::transport(
                TransportFault::Unreachable,
                format!(
                    "node {}: cannot connect to node {to} at {addr} by the start-up deadline: {e}",
                    self.node
                ),
            )
        })?;
        let _ = s.set_nodelay(true);
        let hello = [MAGIC, self.token, self.node as u64];
        s.write_all(&words_to_bytes(&hello)).map_err(|e| {
            CoreError::transport(
                TransportFault::Malformed,
                format!("node {}: handshake with node {to}: {e}", self.node),
            )
        })?;
        self.conns.insert(to, s);
        Ok(())
    }

    fn conn(&mut self, to: NodeId) -> Result<&mut TcpStream> {
        // Peers are connected at start-up; any other node is reached on first use.
        self.connect(to, Instant::now() + DEFAULT_STARTUP)?;
        Ok(self.conns.get_mut(&to).expect("connected"))
    }

    fn send_frame(&mut self, to: NodeId, header: [u64; HEADER], payload: &[u8]) -> Result<()> {
        let node = self.node;
        let s = self.conn(to)?;
        let head = words_to_bytes(&header);
        let r = s.write_all(&head).and_then(|()| s.write_all(payload));
        r.map_err(|e| {
            self.conns.remove(&to);
            CoreError::transport(
                TransportFault::PeerLost,
                format!("node {node}: connection to node {to} lost: {e}"),
            )
        })
    }
}

/// Connects to `addr`, retrying what a peer that is not listening yet (or whose backlog is
/// full) answers: refused, reset, aborted, timed out; backoff doubles from 2 ms to 200 ms.
fn connect_with_retry(addr: SocketAddr, deadline: Instant) -> std::io::Result<TcpStream> {
    use std::io::ErrorKind as K;
    let mut backoff = Duration::from_millis(2);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let attempt = left.clamp(Duration::from_millis(10), Duration::from_secs(2));
        match TcpStream::connect_timeout(&addr, attempt) {
            Ok(s) => return Ok(s),
            Err(e) => {
                let transient = matches!(
                    e.kind(),
                    K::ConnectionRefused
                        | K::ConnectionReset
                        | K::ConnectionAborted
                        | K::TimedOut
                        | K::WouldBlock
                        | K::Interrupted
                );
                let left = deadline.saturating_duration_since(Instant::now());
                if !transient || left.is_zero() {
                    return Err(e);
                }
                std::thread::sleep(backoff.min(left));
                backoff = (backoff * 2).min(Duration::from_millis(200));
            }
        }
    }
}

fn words_to_bytes(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn accept_loop(
    node: NodeId,
    token: u64,
    listener: TcpListener,
    rings: Arc<HashMap<NodeId, Arc<Ring>>>,
    shared: Arc<Shared>,
) {
    while !shared.stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, peer)) => {
                // Detached: a reader ends with its connection's closing frame or loss.
                let (rg, sh) = (rings.clone(), shared.clone());
                std::thread::spawn(move || receive(node, token, stream, peer, &rg, &sh));
            }
            // Nothing pending (non-blocking listener) or a transient accept error.
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}

/// Why a connection's opening words were refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HelloError {
    NotOurs,
    WrongToken,
}

impl HelloError {
    fn text(self) -> &'static str {
        match self {
            HelloError::NotOurs => "not a syncbench peer",
            HelloError::WrongToken => "wrong job token",
        }
    }
}

/// Checks a connection's handshake `[magic, job token, sender]`; returns the sender.
pub(crate) fn decode_hello(
    hello: &[u8; 24],
    token: u64,
) -> std::result::Result<NodeId, HelloError> {
    let w = |i: usize| u64::from_le_bytes(hello[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    if w(0) != MAGIC {
        return Err(HelloError::NotOurs);
    }
    if w(1) != token {
        return Err(HelloError::WrongToken);
    }
    usize::try_from(w(2)).map_err(|_| HelloError::NotOurs)
}

/// A checked frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Frame {
    /// The sender closes the connection on purpose.
    Bye,
    /// A notification alone.
    Notify { imm: [u64; IMM_WORDS] },
    /// A write of `len` words into `slot`, then its notification unless `imm` is all ones.
    Write {
        slot: usize,
        version: u64,
        len: usize,
        imm: [u64; IMM_WORDS],
    },
}

/// Checks frame header `head` from node `from` against the job token and the ring this
/// endpoint registered for `from` (`(depth, capacity)`, `None` when it registered none).
///
/// # Errors
/// The message to record, naming `node` and `from`; the connection is then dropped.
pub(crate) fn decode_header(
    node: NodeId,
    from: NodeId,
    head: &[u8; HEADER * 8],
    token: u64,
    ring: Option<(usize, usize)>,
) -> std::result::Result<Frame, String> {
    let h = |i: usize| u64::from_le_bytes(head[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let (magic_kind, tok, slot, version, len) = (h(0), h(1), h(2), h(3), h(4));
    let imm = [h(5), h(6)];
    if magic_kind & !0xFF != MAGIC || tok != token {
        return Err(format!(
            "node {node}: node {from} sent a malformed frame (bad magic or token); connection dropped"
        ));
    }
    match magic_kind & 0xFF {
        KIND_BYE => Ok(Frame::Bye),
        KIND_NOTIFY => Ok(Frame::Notify { imm }),
        KIND_WRITE => {
            let Some((depth, capacity)) = ring else {
                return Err(format!(
                    "node {node}: node {from} wrote without a registered ring"
                ));
            };
            if slot >= depth as u64 || len > capacity as u64 {
                return Err(format!(
                    "node {node}: node {from} sent a frame for slot {slot} of {len} words, but its ring has {depth} slots of {capacity} words; connection dropped"
                ));
            }
            Ok(Frame::Write {
                slot: slot as usize,
                version,
                len: len as usize,
                imm,
            })
        }
        k => Err(format!(
            "node {node}: node {from} sent an unknown frame kind {k}; connection dropped"
        )),
    }
}

/// Reads one connection's frames until its closing frame, a failure, or shutdown.
fn receive(
    node: NodeId,
    token: u64,
    mut stream: TcpStream,
    peer: SocketAddr,
    rings: &HashMap<NodeId, Arc<Ring>>,
    shared: &Shared,
) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut hello = [0u8; 24];
    if stream.read_exact(&mut hello).is_err() {
        return;
    }
    let from = match decode_hello(&hello, token) {
        Ok(from) => from,
        Err(why) => {
            eprintln!(
                "tcp: node {node} rejected a connection from {peer}: {}",
                why.text()
            );
            *shared.rejected.lock().expect("rejected lock") += 1;
            let _ = stream.shutdown(Shutdown::Both);
            return;
        }
    };
    let _ = stream.set_read_timeout(None);
    shared.admitted.lock().expect("admitted lock").insert(from);
    shared.admitted_cv.notify_all();
    let fail = |fault: TransportFault, msg: String| {
        shared
            .failures
            .lock()
            .expect("failures lock")
            .push((fault, msg));
    };
    match read_frames(
        node,
        from,
        token,
        &mut stream,
        rings.get(&from),
        &shared.inbox,
    ) {
        Ended::Bye => {}
        Ended::Lost(e) => {
            if !shared.stop.load(Ordering::Relaxed) {
                fail(
                    TransportFault::PeerLost,
                    format!("node {node}: connection from node {from} lost ({e})"),
                );
            }
        }
        Ended::Failed { message, drop } => {
            fail(TransportFault::Malformed, message);
            if drop {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
    }
}

/// How a connection's frames ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// The closing frame.
    Bye,
    /// The stream ended or failed between frames.
    Lost(std::io::Error),
    /// A malformed frame, or a loss mid-frame; `drop`: the connection must be shut.
    Failed { message: String, drop: bool },
}

/// Lands the frames of one sender's stream (after its handshake) into its ring and delivers
/// their notifications, until the stream's end, its closing frame or a malformed frame.
pub(crate) fn read_frames<R: Read>(
    node: NodeId,
    from: NodeId,
    token: u64,
    stream: &mut R,
    ring: Option<&Arc<Ring>>,
    inbox: &Inbox,
) -> Ended {
    let shape = ring.map(|r| (r.depth(), r.capacity()));
    let mut head = [0u8; HEADER * 8];
    let mut chunk = vec![0u64; CHUNK_WORDS];
    loop {
        if let Err(e) = stream.read_exact(&mut head) {
            return Ended::Lost(e);
        }
        let frame = match decode_header(node, from, &head, token, shape) {
            Ok(f) => f,
            Err(message) => {
                return Ended::Failed {
                    message,
                    drop: true,
                }
            }
        };
        match frame {
            Frame::Bye => return Ended::Bye,
            Frame::Notify { imm } => inbox.push(Notification {
                from,
                slot: 0,
                version: 0,
                imm,
            }),
            Frame::Write {
                slot,
                version,
                len,
                imm,
            } => {
                let ring = ring.expect("decode_header checked the ring");
                ring.begin(slot, version, len);
                let mut done = 0;
                while done < len {
                    let n = (len - done).min(CHUNK_WORDS);
                    // SAFETY: u64 has no invalid bit patterns; the byte view covers exactly
                    // the first n words of `chunk`.
                    let bytes = unsafe {
                        std::slice::from_raw_parts_mut(chunk.as_mut_ptr() as *mut u8, n * 8)
                    };
                    if let Err(e) = stream.read_exact(bytes) {
                        return Ended::Failed {
                            message: format!(
                                "node {node}: connection from node {from} lost mid-frame ({e})"
                            ),
                            drop: false,
                        };
                    }
                    if cfg!(target_endian = "big") {
                        chunk[..n].iter_mut().for_each(|w| *w = u64::from_le(*w));
                    }
                    ring.land(slot, done, &chunk[..n]);
                    done += n;
                }
                ring.finish(slot, version);
                if imm != [u64::MAX, u64::MAX] {
                    inbox.push(Notification {
                        from,
                        slot,
                        version,
                        imm,
                    });
                }
            }
        }
    }
}

impl Endpoint for TcpEndpoint {
    fn node(&self) -> NodeId {
        self.node
    }

    fn remote_depth(&self, to: NodeId) -> Result<usize> {
        self.remote.get(&to).map(|s| s.depth).ok_or_else(|| {
            CoreError::transport(
                TransportFault::NoSuchPeer,
                format!("node {to} registered no ring for node {}", self.node),
            )
        })
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
        let shape = *self.remote.get(&to).ok_or_else(|| {
            CoreError::transport(
                TransportFault::NoSuchPeer,
                format!("node {to} registered no ring for node {}", self.node),
            )
        })?;
        let src_len = data.as_ref().map_or(0, |d| d.len());
        if slot >= shape.depth || len > shape.capacity || len > src_len {
            return Err(CoreError::transport(TransportFault::RingOverrun, format!(
                "write of {len} words into slot {slot} from node {} to node {to}: the ring has {} slots of {} words, the source {src_len} words",
                self.node, shape.depth, shape.capacity
            )));
        }
        let imm = notify.unwrap_or([u64::MAX, u64::MAX]);
        let header = [
            MAGIC | KIND_WRITE,
            self.token,
            slot as u64,
            version,
            len as u64,
            imm[0],
            imm[1],
        ];
        let payload: &[u8] = match &data {
            Some(d) => &d.bytes_unchanging()[..len * 8],
            None => &[],
        };
        if cfg!(target_endian = "big") {
            return Err(CoreError::transport(
                TransportFault::Setup,
                "the tcp backend needs a little-endian host",
            ));
        }
        self.send_frame(to, header, payload)?;
        self.next_wr += 1;
        self.cq.push_back(Completion {
            wr_id: self.next_wr,
        });
        Ok(self.next_wr)
    }

    fn post_notify(&mut self, to: NodeId, imm: [u64; IMM_WORDS]) -> Result<u64> {
        let header = [MAGIC | KIND_NOTIFY, self.token, 0, 0, 0, imm[0], imm[1]];
        self.send_frame(to, header, &[])?;
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
        // In slices, so that a failure ends the wait early (the caller then asks `health`).
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if let Some(n) = self.shared.inbox.wait(left.min(Duration::from_millis(50))) {
                return Some(n);
            }
            if left.is_zero()
                || !self
                    .shared
                    .failures
                    .lock()
                    .expect("failures lock")
                    .is_empty()
            {
                return None;
            }
        }
    }

    fn read_slot(&self, from: NodeId, slot: usize, out: &mut Vec<u64>) -> Result<SlotRead> {
        let ring = self.local.get(&from).ok_or_else(|| {
            CoreError::transport(
                TransportFault::NoSuchPeer,
                format!("node {} registered no ring for node {from}", self.node),
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

    fn health(&self) -> Result<()> {
        match self.shared.failures.lock().expect("failures lock").first() {
            Some((fault, message)) => Err(CoreError::transport(*fault, message.clone())),
            None => Ok(()),
        }
    }
}

impl Drop for TcpEndpoint {
    fn drop(&mut self) {
        let bye = words_to_bytes(&[MAGIC | KIND_BYE, self.token, 0, 0, 0, 0, 0]);
        for s in self.conns.values_mut() {
            let _ = s.write_all(&bye);
            let _ = s.flush();
        }
        self.conns.clear();
        // Stop accepting; this endpoint's readers then take a connection's end as expected.
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.acceptor.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn pair(capacity: usize, depth: usize) -> (TcpEndpoint, TcpEndpoint) {
        let mut f = TcpFabric::new(2, 42);
        f.register(0, 1, capacity, depth).unwrap();
        f.register(1, 0, capacity, depth).unwrap();
        let mut eps = f.endpoints().unwrap();
        let b = eps.pop().unwrap();
        let a = eps.pop().unwrap();
        (a, b)
    }

    #[test]
    fn write_lands_before_its_notification() {
        let (mut a, mut b) = pair(100_000, 2);
        let words: Vec<u64> = (0..100_000).collect();
        let src = Arc::new(AlignedWords::from_words(&words));
        let id = a
            .post_write(1, 1, 7, Some(src), 100_000, Some([5, 6]))
            .unwrap();
        assert_eq!(a.poll_completion().map(|c| c.wr_id), Some(id));
        let n = b
            .wait_notification(Duration::from_secs(10))
            .expect("notification");
        assert_eq!((n.from, n.slot, n.version, n.imm), (0, 1, 7, [5, 6]));
        let mut out = Vec::new();
        let r = b.read_slot(0, 1, &mut out).unwrap();
        assert!(r.consistent() && r.header == 7);
        assert_eq!(out, words);
        b.post_notify(0, [9, 9]).unwrap();
        let n = a.wait_notification(Duration::from_secs(10)).unwrap();
        assert_eq!((n.from, n.imm), (1, [9, 9]));
        assert!(a.health().is_ok() && b.health().is_ok());
    }

    #[test]
    fn bad_requests_are_errors_of_their_kind() {
        let (mut a, b) = pair(4, 1);
        crate::transport::test_support::bad_requests_refused_by_kind(&mut a, &b);
    }

    #[test]
    fn a_stranger_is_rejected_and_the_run_goes_on() {
        let (mut a, mut b) = pair(4, 1);
        let mut s = TcpStream::connect(b.addr()).unwrap();
        s.write_all(&words_to_bytes(&[MAGIC, 7, 0])).unwrap();
        let mut garbage = TcpStream::connect(b.addr()).unwrap();
        garbage.write_all(b"GET / HTTP/1.1\r\n\r\n1234567").unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while b.rejected_connections() < 2 {
            assert!(Instant::now() < deadline, "strangers not rejected");
            std::thread::sleep(Duration::from_millis(5));
        }
        let src = Arc::new(AlignedWords::from_words(&[1, 2]));
        a.post_write(1, 0, 1, Some(src), 2, Some([0, 0])).unwrap();
        assert!(b.wait_notification(Duration::from_secs(10)).is_some());
        assert!(b.health().is_ok(), "{:?}", b.health());
    }

    #[test]
    fn a_lost_peer_is_named() {
        let (a, b) = pair(4, 1);
        // A raw peer that handshakes as node 0, starts a frame, then dies.
        let mut s = TcpStream::connect(b.addr()).unwrap();
        s.write_all(&words_to_bytes(&[MAGIC, 42, 0])).unwrap();
        s.write_all(&words_to_bytes(&[MAGIC | KIND_WRITE, 42, 0, 1, 4, 0, 0]))
            .unwrap();
        s.write_all(&[1, 2, 3]).unwrap();
        drop(s);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Err(e) = b.health() {
                assert!(e.to_string().contains("connection from node 0 lost"), "{e}");
                break;
            }
            assert!(Instant::now() < deadline, "loss not detected");
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(a);
    }

    #[test]
    fn an_oversized_frame_is_refused() {
        let (_a, b) = pair(4, 1);
        let mut s = TcpStream::connect(b.addr()).unwrap();
        s.write_all(&words_to_bytes(&[MAGIC, 42, 0])).unwrap();
        s.write_all(&words_to_bytes(&[
            MAGIC | KIND_WRITE,
            42,
            0,
            1,
            1 << 40,
            0,
            0,
        ]))
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while b.health().is_ok() {
            assert!(Instant::now() < deadline, "oversized frame accepted");
            std::thread::sleep(Duration::from_millis(5));
        }
        let e = b.health().unwrap_err();
        assert_eq!(e.transport_fault(), Some(crate::TransportFault::Malformed));
        let e = e.to_string();
        assert!(e.contains("node 0 sent a frame for slot 0"), "{e}");
    }

    /// A free loopback port, not held.
    fn free_port() -> SocketAddr {
        TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
    }

    #[test]
    fn a_peer_that_listens_late_is_reached_by_retrying() {
        let addr = free_port();
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            let l = TcpListener::bind(addr).unwrap();
            let (mut s, _) = l.accept().unwrap();
            let mut b = [0u8; 1];
            s.read_exact(&mut b).unwrap();
            b[0]
        });
        let mut s =
            connect_with_retry(addr, Instant::now() + Duration::from_secs(10)).expect("retried");
        s.write_all(&[7]).unwrap();
        assert_eq!(late.join().unwrap(), 7);
    }

    #[test]
    fn the_start_up_deadline_names_node_peer_and_address() {
        let own = TcpListener::bind("127.0.0.1:0").unwrap();
        let nobody = free_port();
        let addrs = vec![own.local_addr().unwrap(), nobody];
        let shape = RingShape {
            capacity: 4,
            depth: 1,
        };
        let mut ep = TcpEndpoint::start(
            0,
            42,
            own,
            addrs,
            HashMap::new(),
            HashMap::from([(1, shape)]),
        )
        .unwrap();
        assert_eq!(ep.peers(), vec![1]);
        let t0 = Instant::now();
        let e = ep
            .connect_peers(t0 + Duration::from_millis(300))
            .unwrap_err()
            .to_string();
        assert!(t0.elapsed() >= Duration::from_millis(300), "gave up early");
        assert!(
            e.contains("node 0: cannot connect to node 1")
                && e.contains(&nobody.to_string())
                && e.contains("start-up deadline"),
            "{e}"
        );
        let e = ep
            .await_peers(Instant::now() + Duration::from_millis(50))
            .unwrap_err()
            .to_string();
        assert!(e.contains("node(s) 1 did not connect"), "{e}");
    }

    #[test]
    fn a_fabric_is_fully_connected_before_it_is_returned() {
        let mut f = TcpFabric::new(3, 9);
        f.register(0, 1, 4, 1).unwrap();
        f.register(2, 0, 4, 1).unwrap();
        let eps = f.endpoints().unwrap();
        assert_eq!(eps[0].peers(), vec![1, 2]);
        assert_eq!(eps[1].peers(), vec![0]);
        for ep in &eps {
            let admitted = ep.shared.admitted.lock().unwrap().clone();
            let want: HashSet<NodeId> = ep.peers().into_iter().collect();
            assert_eq!(admitted, want, "node {}", ep.node);
            assert_eq!(ep.conns.len(), ep.peers().len());
        }
    }

    /// A valid stream after the handshake: a notification, a write with its notification, a
    /// write without one, then the closing frame.
    fn frames_seed() -> Vec<u8> {
        let mut w = vec![MAGIC | KIND_NOTIFY, 42, 0, 0, 0, 3, 4];
        w.extend([MAGIC | KIND_WRITE, 42, 1, 9, 3, 5, 6, 10, 11, 12]);
        w.extend([MAGIC | KIND_WRITE, 42, 0, 2, 0, u64::MAX, u64::MAX]);
        w.extend([MAGIC | KIND_BYE, 42, 0, 0, 0, 0, 0]);
        words_to_bytes(&w)
    }

    #[test]
    fn fuzz_tcp_frames() {
        let seeds = vec![frames_seed(), words_to_bytes(&[MAGIC, 42, 0])];
        crate::fuzz::check("tcp-frames", &seeds, Duration::from_secs(2), |bytes| {
            // The handshake (when the input is long enough), then the frames.
            if let Ok(hello) = <[u8; 24]>::try_from(&bytes[..bytes.len().min(24)]) {
                let _ = decode_hello(&hello, 42);
            }
            let ring = Arc::new(Ring::new(4, 2));
            let inbox = Inbox::default();
            let mut r = std::io::Cursor::new(bytes);
            match read_frames(1, 0, 42, &mut r, Some(&ring), &inbox) {
                Ended::Bye | Ended::Lost(_) | Ended::Failed { .. } => {}
            }
            let mut out = Vec::new();
            for slot in 0..2 {
                let read = ring.read(slot, &mut out);
                assert!(read.len <= 4 && out.len() <= 4, "slot {slot}: {read:?}");
            }
            // Without a ring, a write is refused, never landed.
            let mut r = std::io::Cursor::new(bytes);
            let _ = read_frames(1, 0, 42, &mut r, None, &inbox);
        });
    }

    #[test]
    fn the_seed_stream_lands_and_notifies() {
        let ring = Arc::new(Ring::new(4, 2));
        let inbox = Inbox::default();
        let bytes = frames_seed();
        let mut r = std::io::Cursor::new(&bytes[..]);
        assert!(matches!(
            read_frames(1, 0, 42, &mut r, Some(&ring), &inbox),
            Ended::Bye
        ));
        let mut out = Vec::new();
        let read = ring.read(1, &mut out);
        assert!(read.consistent() && read.header == 9, "{read:?}");
        assert_eq!(out, vec![10, 11, 12]);
        let n = inbox.wait(Duration::from_millis(10)).unwrap();
        assert_eq!(n.imm, [3, 4]);
        let n = inbox.wait(Duration::from_millis(10)).unwrap();
        assert_eq!((n.slot, n.version, n.imm), (1, 9, [5, 6]));
        assert!(inbox.wait(Duration::from_millis(10)).is_none());
    }
}
