//! The shared-memory backend against its contract, and its fuzzed directory reader.

use super::super::region::{round_page, slot_stride, PAGE_WORDS};
use super::super::{AlignedWords, Endpoint, RingShape};
use super::endpoint::*;
use super::fabric::*;
use super::segment::*;
use super::{QUEUE, QUEUE_WORDS};
use crate::transport::test_support::fault;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

fn fabric(tag: u64) -> Vec<ShmEndpoint> {
    let mut f = ShmFabric::new(
        2,
        0xabc0 + tag + u64::from(std::process::id()) * 100,
        default_dir(),
    );
    f.register(0, 1, 4, 2).unwrap();
    f.register(1, 0, 4, 2).unwrap();
    f.endpoints().unwrap()
}

#[test]
fn write_then_notification_then_read() {
    let mut e = fabric(1);
    let src = Arc::new(AlignedWords::from_words(&[1, 2, 3]));
    e[0].post_write(1, 1, 7, Some(src), 3, Some([9, 8]))
        .unwrap();
    assert!(e[0].poll_completion().is_some());
    let n = e[1].wait_notification(Duration::from_secs(1)).unwrap();
    assert_eq!((n.from, n.slot, n.version, n.imm), (0, 1, 7, [9, 8]));
    let mut out = Vec::new();
    let r = e[1].read_slot(0, 1, &mut out).unwrap();
    assert!(r.consistent());
    assert_eq!((r.header, out.as_slice()), (7, &[1u64, 2, 3][..]));
    assert!(e[1].wait_notification(Duration::from_millis(1)).is_none());
    e[1].post_notify(0, [5, 5]).unwrap();
    assert_eq!(
        e[0].wait_notification(Duration::from_secs(1)).unwrap().imm,
        [5, 5]
    );
}

#[test]
fn bad_posts_are_refused_by_kind() {
    use crate::TransportFault::{NoSuchPeer, RingOverrun};
    let mut e = fabric(2);
    let src = Arc::new(AlignedWords::from_words(&[0; 5]));
    let longer_than_slot = e[0].post_write(1, 0, 1, Some(src.clone()), 5, None);
    assert_eq!(fault(longer_than_slot), Some(RingOverrun));
    let slot_out_of_range = e[0].post_write(1, 2, 1, Some(src), 1, None);
    assert_eq!(fault(slot_out_of_range), Some(RingOverrun));
    assert_eq!(fault(e[0].post_notify(7, [0, 0])), Some(NoSuchPeer));
    let mut out = Vec::new();
    assert_eq!(fault(e[1].read_slot(1, 0, &mut out)), Some(NoSuchPeer));
}

#[test]
fn segments_of_another_job_are_refused_and_files_removed() {
    let dir = std::env::temp_dir().join(format!("sb-shm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let paths = vec![segment_path(&dir, 1, 0), segment_path(&dir, 2, 1)];
    let shape = RingShape {
        capacity: 2,
        depth: 1,
    };
    let mut a = ShmEndpoint::create(
        0,
        1,
        paths[0].clone(),
        HashMap::new(),
        HashMap::from([(1, shape)]),
    )
    .unwrap();
    // Node 1's segment is made under another token.
    let b = ShmEndpoint::create(
        1,
        2,
        paths[1].clone(),
        HashMap::from([(0, shape)]),
        HashMap::new(),
    )
    .unwrap();
    let e = a.connect(&paths).unwrap_err().to_string();
    assert!(e.contains("another job"), "{e}");
    drop((a, b));
    assert!(!paths[0].exists() && !paths[1].exists());
}

#[test]
fn a_full_queue_waits_for_the_reader() {
    let mut e = fabric(3);
    let mut r = e.pop().unwrap();
    let reader = std::thread::spawn(move || {
        let mut got = 0;
        while got < QUEUE + 10 {
            if r.wait_notification(Duration::from_secs(5)).is_some() {
                got += 1;
            } else {
                break;
            }
        }
        got
    });
    for k in 0..QUEUE + 10 {
        e[0].post_notify(1, [k as u64, 0]).unwrap();
    }
    assert_eq!(reader.join().unwrap(), QUEUE + 10);
}

#[test]
fn fuzz_shm_directory() {
    // A valid directory: two entries inside a segment of 2 pages + queues.
    let words = |bytes: &[u8]| -> Vec<AtomicU64> {
        bytes
            .chunks(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                AtomicU64::new(u64::from_le_bytes(b))
            })
            .collect()
    };
    let len = 4 + 10 + 2 * QUEUE_WORDS + 2 * PAGE_WORDS;
    let mut seed = vec![0u64; len];
    seed[..4].copy_from_slice(&[MAGIC, 7, 0, 2]);
    let q0 = 16;
    let r0 = round_page(q0 + 2 * QUEUE_WORDS);
    seed[4..9].copy_from_slice(&[1, q0 as u64, r0 as u64, 5, 1]);
    seed[9..14].copy_from_slice(&[2, (q0 + QUEUE_WORDS) as u64, (r0 + PAGE_WORDS) as u64, 5, 1]);
    seed.resize(r0 + 2 * PAGE_WORDS, 0);
    let seed: Vec<u8> = seed.iter().flat_map(|w| w.to_le_bytes()).collect();
    let dir = parse_directory(&words(&seed), 7, Path::new("seed")).unwrap();
    assert_eq!(dir.len(), 2);
    // Only the header and directory are mutated (the rest of the segment stays).
    let head = seed[..14 * 8].to_vec();
    let rest = seed[14 * 8..].to_vec();
    crate::fuzz::check("shm-directory", &[head], Duration::from_secs(2), |b| {
        let mut all = b.to_vec();
        all.extend_from_slice(&rest);
        let w = words(&all);
        if let Ok(dir) = parse_directory(&w, 7, Path::new("fuzz")) {
            for e in dir.values() {
                assert!(e.queue + QUEUE_WORDS <= w.len());
                assert!(e.ring + e.shape.depth * slot_stride(e.shape.capacity) <= w.len());
            }
        }
    });
}
