//! One node's TCP endpoint: its connections to the peers it exchanges rings with, the
//! receiver threads' shared state, and the verbs-shaped [`Endpoint`] operations on them.

use super::super::inbox::Inbox;
use super::super::ring::{read_registered, Ring};
use super::super::{AlignedWords, Completion, Endpoint, NodeId, Notification, SlotRead, IMM_WORDS};
use super::connect::*;
use super::wire::*;
use super::{RingShape, DEFAULT_STARTUP};
use crate::error::{CoreError, Result, TransportFault};
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the receiver threads share with the endpoint.
#[derive(Debug, Default)]
pub(super) struct Shared {
    pub(super) inbox: Inbox,
    /// Receive-side failures (peer lost, malformed frame), each naming the peer.
    pub(super) failures: Mutex<Vec<(TransportFault, String)>>,
    /// Connections rejected for a wrong token (logged; counted for tests).
    pub(super) rejected: Mutex<u64>,
    /// Nodes whose connection to this endpoint passed the handshake.
    pub(super) admitted: Mutex<HashSet<NodeId>>,
    pub(super) admitted_cv: Condvar,
    pub(super) stop: AtomicBool,
}

/// One node's endpoint on a TCP fabric.
pub struct TcpEndpoint {
    pub(super) node: NodeId,
    pub(super) token: u64,
    pub(super) addrs: Vec<SocketAddr>,
    pub(super) local: Arc<HashMap<NodeId, Arc<Ring>>>,
    pub(super) remote: HashMap<NodeId, RingShape>,
    pub(super) conns: HashMap<NodeId, TcpStream>,
    pub(super) shared: Arc<Shared>,
    pub(super) cq: VecDeque<Completion>,
    pub(super) next_wr: u64,
    pub(super) acceptor: Option<JoinHandle<()>>,
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
        read_registered(&self.local, self.node, from, slot, out)
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
