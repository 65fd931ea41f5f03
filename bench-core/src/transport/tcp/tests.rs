//! The TCP backend against its contract: landing before notification, errors of their kind,
//! strangers, lost peers, oversized frames, start-up, and the fuzzed frame decoder.

use super::super::inbox::Inbox;
use super::super::ring::Ring;
use super::super::{AlignedWords, Endpoint, NodeId};
use super::connect::*;
use super::endpoint::*;
use super::fabric::*;
use super::receive::*;
use super::wire::*;
use super::RingShape;
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
