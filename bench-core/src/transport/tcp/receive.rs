//! The receive side of one connection: its handshake, then its frames landed into the ring
//! registered for the sender (header first, payload in pieces, footer last) and their
//! notifications delivered after the data, until the closing frame or a failure.

use super::super::inbox::Inbox;
use super::super::ring::Ring;
use super::super::{NodeId, Notification};
use super::endpoint::*;
use super::wire::*;
use crate::error::TransportFault;
use std::collections::HashMap;
use std::io::Read;
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Reads one connection's frames until its closing frame, a failure, or shutdown.
pub(super) fn receive(
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
