//! A barrier across every node of a cluster run, on a path of its own (as MPI_Barrier is beside
//! RDMA writes): nodes of one rank meet in memory; the last to arrive meets the other ranks over
//! a dedicated TCP connection to rank 0, which releases everyone once all ranks arrived. It does
//! not wait for data in flight on the transport, which is what ASAP's BSP measures.

use crate::driver::node_thread::AbortFlag;
use crate::error::{CoreError, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const MAGIC: u64 = 0x5342_4252_5200_0001; // "SBBRR", version 1
/// How often a waiting node checks the abort flag.
const SLICE: Duration = Duration::from_millis(50);

enum Link {
    /// Rank 0: a connection per other rank hosting nodes.
    Root(Vec<(usize, TcpStream)>),
    /// Another rank: its connection to rank 0.
    Member(TcpStream),
    /// A job of one rank.
    Alone,
}

/// Something nodes of one run wait at together.
pub trait PeerBarrier: Send + Sync {
    /// Waits until every node arrived; false when that did not happen within `timeout` or the
    /// run is being stopped.
    fn wait(&self, timeout: Duration) -> bool;
}

/// The cross-rank barrier.
pub struct ClusterBarrier {
    local: usize,
    state: Mutex<(usize, u64)>,
    cv: Condvar,
    link: Mutex<Link>,
    abort: Arc<AbortFlag>,
}

impl ClusterBarrier {
    /// Connects the barrier: rank 0 accepts one connection from each of `members` on
    /// `listener`; the others connect to `root`. `local` nodes of this rank take part.
    ///
    /// # Errors
    /// [`CoreError::Cluster`] when a connection cannot be made within `timeout`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn connect(
        rank: usize,
        local: usize,
        token: u64,
        listener: Option<TcpListener>,
        root: Option<String>,
        members: &[usize],
        timeout: Duration,
        abort: Arc<AbortFlag>,
    ) -> Result<Self> {
        let fail = |message: String| CoreError::Cluster { rank, message };
        let deadline = Instant::now() + timeout;
        let link = if members.is_empty() {
            Link::Alone
        } else if rank == 0 {
            let listener = listener.ok_or_else(|| fail("no barrier listener".into()))?;
            listener
                .set_nonblocking(true)
                .map_err(|e| fail(e.to_string()))?;
            let mut conns: Vec<(usize, TcpStream)> = Vec::new();
            while conns.len() < members.len() {
                if Instant::now() > deadline {
                    return Err(fail(format!(
                        "only {} of {} ranks joined the barrier within {} ms",
                        conns.len(),
                        members.len(),
                        timeout.as_millis()
                    )));
                }
                match listener.accept() {
                    Ok((mut s, peer)) => {
                        let _ = s.set_nonblocking(false);
                        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                        let mut hello = [0u8; 24];
                        let ok = s.read_exact(&mut hello).is_ok();
                        let w = |i: usize| {
                            u64::from_le_bytes(hello[i * 8..i * 8 + 8].try_into().expect("8"))
                        };
                        let r = w(2) as usize;
                        if ok
                            && w(0) == MAGIC
                            && w(1) == token
                            && members.contains(&r)
                            && !conns.iter().any(|c| c.0 == r)
                        {
                            let _ = s.set_nodelay(true);
                            conns.push((r, s));
                        } else {
                            eprintln!(
                                "cluster: rank 0's barrier rejected a connection from {peer}"
                            );
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(2)),
                }
            }
            Link::Root(conns)
        } else if local == 0 {
            Link::Alone
        } else {
            let addr: SocketAddr = root
                .as_deref()
                .and_then(|a| a.parse().ok())
                .ok_or_else(|| fail("rank 0 announced no barrier address".into()))?;
            let mut s = loop {
                match TcpStream::connect_timeout(&addr, Duration::from_millis(500)) {
                    Ok(s) => break s,
                    Err(e) if Instant::now() > deadline => {
                        return Err(fail(format!(
                            "cannot reach rank 0's barrier at {addr}: {e}"
                        )))
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            };
            let _ = s.set_nodelay(true);
            let hello: Vec<u8> = [MAGIC, token, rank as u64]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect();
            s.write_all(&hello)
                .map_err(|e| fail(format!("barrier handshake: {e}")))?;
            Link::Member(s)
        };
        Ok(ClusterBarrier {
            local,
            state: Mutex::new((0, 0)),
            cv: Condvar::new(),
            link: Mutex::new(link),
            abort,
        })
    }

    /// One byte each way with rank 0, within `deadline`, giving up when the run is stopped.
    fn meet_ranks(&self, deadline: Instant) -> bool {
        let mut link = self.link.lock().expect("barrier link lock");
        let read_one = |s: &mut TcpStream| -> bool {
            let mut b = [0u8; 1];
            loop {
                if self.abort.reason().is_some() || Instant::now() > deadline {
                    return false;
                }
                let _ = s.set_read_timeout(Some(SLICE));
                match s.read(&mut b) {
                    Ok(1) => return true,
                    Ok(_) => return false,
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) => {}
                    Err(_) => return false,
                }
            }
        };
        match &mut *link {
            Link::Alone => true,
            Link::Member(s) => s.write_all(&[1]).is_ok() && read_one(s),
            Link::Root(conns) => {
                for (_, s) in conns.iter_mut() {
                    if !read_one(s) {
                        return false;
                    }
                }
                conns.iter_mut().all(|(_, s)| s.write_all(&[1]).is_ok())
            }
        }
    }
}

impl PeerBarrier for ClusterBarrier {
    fn wait(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut s = self.state.lock().expect("barrier lock");
        let generation = s.1;
        s.0 += 1;
        if s.0 == self.local {
            drop(s);
            let met = self.meet_ranks(deadline);
            let mut s = self.state.lock().expect("barrier lock");
            s.0 = 0;
            if met {
                s.1 += 1;
                self.cv.notify_all();
            }
            return met;
        }
        loop {
            if self.abort.reason().is_some() {
                return false;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            let (g, _) = self
                .cv
                .wait_timeout_while(s, left.min(SLICE), |s| s.1 == generation)
                .expect("barrier lock");
            s = g;
            if s.1 != generation {
                return true;
            }
        }
    }
}
