//! Start-up: connecting to a peer that may not listen yet (retry with backoff until a
//! deadline) and accepting the peers' connections, each read by a thread of its own.

use super::super::ring::Ring;
use super::super::NodeId;
use super::endpoint::*;
use super::receive::*;
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Connects to `addr`, retrying what a peer that is not listening yet (or whose backlog is
/// full) answers: refused, reset, aborted, timed out; backoff doubles from 2 ms to 200 ms.
pub(super) fn connect_with_retry(
    addr: SocketAddr,
    deadline: Instant,
) -> std::io::Result<TcpStream> {
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

pub(super) fn accept_loop(
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
