//! Scripted event sequences for the row-table shard and client.

use super::*;
use crate::protocol::test_support::drain;
use crate::protocol::{Action, Event, Input, Message};

/// Every worker reads rows (0, 0) and (1, 3) at every clock.
#[derive(Debug)]
struct Fixed;

impl RowAccess for Fixed {
    fn rows(&self, _worker: usize, _clock: u64, _step: u64) -> Vec<RowKey> {
        vec![RowKey { table: 0, row: 0 }, RowKey { table: 1, row: 3 }]
    }
}

fn keys() -> Vec<RowKey> {
    Fixed.rows(0, 0, 0)
}

fn recv(from: usize, msg: Message) -> Input {
    Input::Received { from, msg }
}

fn shard(mode: TableMode, workers: usize) -> TableShard {
    TableShard::new(0, 1, workers, 10, mode, Arc::new(Fixed))
}

fn client(mode: TableMode) -> TableClient {
    TableClient::new(0, 1, 10, mode, Arc::new(Fixed))
}

const BSP: TableMode = TableMode::Bounded { s: 0, eager: false };

#[test]
fn bsp_client_asks_every_clock_and_reads_minus_one() {
    let mut c = client(BSP);
    c.handle(0, Input::Start).unwrap();
    assert_eq!(
        drain(&mut c),
        vec![Action::Send {
            to: 0,
            msg: Message::RowRequest { clock: 0, step: 0 }
        }]
    );
    c.handle(5, recv(0, Message::Rows { clock: 0, stamp: 0 }))
        .unwrap();
    let a = drain(&mut c);
    assert_eq!(
        a[0],
        Action::RowSet {
            peer: 0,
            rows: keys()
        }
    );
    assert_eq!(a[1], Action::Install { from: 0 });
    assert_eq!(a.last(), Some(&Action::Compute { iter: 0 }));
    c.handle(9, Input::ComputeDone { iter: 0 }).unwrap();
    let a = drain(&mut c);
    // A clock's reads are recorded once, when it completes.
    assert!(a.contains(&Action::Record(Event::RowReads {
        worker: 0,
        clock: 0,
        differentials: vec![(-1, 2)],
    })));
    assert_eq!(
        a[0],
        Action::Send {
            to: 0,
            msg: Message::RowInc { clock: 0 }
        }
    );
    // Rows at stamp 0 are too old for clock 1 under BSP: ask again.
    assert_eq!(
        a.last(),
        Some(&Action::Send {
            to: 0,
            msg: Message::RowRequest { clock: 1, step: 0 }
        })
    );
}

#[test]
fn ssp_client_reads_cached_rows_within_the_bound() {
    let mut c = client(TableMode::Bounded { s: 2, eager: false });
    c.handle(0, Input::Start).unwrap();
    drain(&mut c);
    c.handle(1, recv(0, Message::Rows { clock: 0, stamp: 0 }))
        .unwrap();
    drain(&mut c);
    for clock in 0..2 {
        c.handle(2, Input::ComputeDone { iter: clock }).unwrap();
        let a = drain(&mut c);
        assert_eq!(
            a.last(),
            Some(&Action::Compute { iter: clock + 1 }),
            "{a:?}"
        );
        assert!(a.contains(&Action::Record(Event::RowReads {
            worker: 0,
            clock,
            differentials: vec![(-1 - clock as i64, 2)],
        })));
    }
    // Clock 3 with rows of stamp 0: 0 + 2 < 3, blocks and asks.
    c.handle(3, Input::ComputeDone { iter: 2 }).unwrap();
    assert_eq!(
        drain(&mut c).last(),
        Some(&Action::Send {
            to: 0,
            msg: Message::RowRequest { clock: 3, step: 0 }
        })
    );
}

#[test]
fn shard_answers_once_its_clock_allows_and_only_with_the_stale_rows() {
    let mut s = shard(TableMode::Bounded { s: 1, eager: false }, 2);
    // Worker 0 (node 1) reads clock 0: answered at once with both rows at stamp 0.
    s.handle(0, recv(1, Message::RowRequest { clock: 0, step: 0 }))
        .unwrap();
    assert_eq!(
        drain(&mut s),
        vec![
            Action::RowSet {
                peer: 1,
                rows: keys()
            },
            Action::Send {
                to: 1,
                msg: Message::Rows { clock: 0, stamp: 0 }
            }
        ]
    );
    // Clock 0 is in every reader's window (< shard clock 0 + s): applied at once. Clock 1 is
    // past the window of worker 1, still at clock 0: held back.
    s.handle(1, recv(1, Message::RowInc { clock: 0 })).unwrap();
    assert_eq!(drain(&mut s), vec![Action::Apply { from: 1, clock: 0 }]);
    s.handle(1, recv(1, Message::RowInc { clock: 1 })).unwrap();
    assert!(drain(&mut s).is_empty());
    // Clock 2 needs shard clock 1, which waits for worker 1 (node 2).
    s.handle(2, recv(1, Message::RowRequest { clock: 2, step: 0 }))
        .unwrap();
    assert!(drain(&mut s).is_empty());
    s.handle(3, recv(2, Message::RowInc { clock: 0 })).unwrap();
    assert_eq!(
        drain(&mut s),
        vec![
            Action::Apply { from: 2, clock: 0 },
            Action::Apply { from: 1, clock: 1 },
            Action::RowSet {
                peer: 1,
                rows: keys()
            },
            Action::Send {
                to: 1,
                msg: Message::Rows { clock: 2, stamp: 1 }
            }
        ]
    );
}

#[test]
fn essp_shard_pushes_registered_rows_on_every_advance() {
    let mut s = shard(TableMode::Bounded { s: 3, eager: true }, 1);
    s.handle(0, recv(1, Message::RowRequest { clock: 0, step: 0 }))
        .unwrap();
    drain(&mut s);
    s.handle(1, recv(1, Message::RowInc { clock: 0 })).unwrap();
    assert_eq!(
        drain(&mut s),
        vec![
            Action::Apply { from: 1, clock: 0 },
            Action::RowSet {
                peer: 1,
                rows: keys()
            },
            Action::Send {
                to: 1,
                msg: Message::RowPush { upto: 1, stamp: 1 }
            }
        ]
    );
    // The client takes the push: both rows now at stamp 1.
    let mut c = client(TableMode::Bounded { s: 3, eager: true });
    c.handle(0, Input::Start).unwrap();
    drain(&mut c);
    c.handle(1, recv(0, Message::Rows { clock: 0, stamp: 0 }))
        .unwrap();
    drain(&mut c);
    c.handle(2, recv(0, Message::RowPush { upto: 1, stamp: 1 }))
        .unwrap();
    assert_eq!(
        drain(&mut c),
        vec![
            Action::RowSet {
                peer: 0,
                rows: keys()
            },
            Action::Install { from: 0 }
        ]
    );
    // A push claiming a request never sent is garbage.
    let e = c
        .handle(3, recv(0, Message::RowPush { upto: 5, stamp: 2 }))
        .unwrap_err();
    assert!(e.to_string().contains("covering 5 requests"), "{e}");
}

#[test]
fn violations_are_errors_naming_the_sender() {
    let mut s = shard(BSP, 2);
    let e = s
        .handle(0, recv(1, Message::RowInc { clock: 3 }))
        .unwrap_err();
    assert!(e.to_string().contains("clock 3 from node 1"), "{e}");
    let e = s
        .handle(0, recv(7, Message::RowInc { clock: 0 }))
        .unwrap_err();
    assert!(e.to_string().contains("node 7"), "{e}");
    let e = s
        .handle(0, recv(1, Message::Model { complete: 0 }))
        .unwrap_err();
    assert!(e.to_string().contains("never receives"), "{e}");
    let mut c = client(BSP);
    c.handle(0, Input::Start).unwrap();
    let e = c
        .handle(1, recv(0, Message::Rows { clock: 4, stamp: 0 }))
        .unwrap_err();
    assert!(e.to_string().contains("clock 4"), "{e}");
}

#[test]
fn modes_the_tables_do_not_run_are_refused() {
    let e = TableMode::of(SyncMode::dssp(3, 12)).unwrap_err();
    assert!(e.to_string().contains("model-level"), "{e}");
    let spec = TableSpec {
        mode: SyncMode::ssp(10),
        workers: 2,
        shards: 1,
        clocks: 10,
        access: Arc::new(Fixed),
    };
    let e = spec.build().err().unwrap();
    assert!(
        e.to_string().contains("not below the run's 10 clocks"),
        "{e}"
    );
}

#[test]
fn row_keys_round_trip_and_spread_over_shards() {
    let k = RowKey {
        table: 7,
        row: u32::MAX,
    };
    assert_eq!(RowKey::from_word(k.to_word()), k);
    let mut per = [0usize; 4];
    for row in 0..4000 {
        per[RowKey { table: 0, row }.shard(4)] += 1;
    }
    assert!(per.iter().all(|&n| (900..1100).contains(&n)), "{per:?}");
}

/// Two steps per clock: step 0 reads row (0, 0), step 1 reads row (1, 3).
#[derive(Debug)]
struct TwoSteps;

impl RowAccess for TwoSteps {
    fn steps(&self, _worker: usize, _clock: u64) -> u64 {
        2
    }

    fn rows(&self, _worker: usize, _clock: u64, step: u64) -> Vec<RowKey> {
        vec![keys()[step as usize]]
    }
}

/// Bösen's in-clock reads: a push that lands while step 0 computes is what step 1 reads, so
/// under ESSP the later reads of a clock see the clock just completed (-1) rather than the one
/// cached when the clock began.
#[test]
fn a_push_during_a_clock_is_read_by_its_later_steps() {
    let mode = TableMode::Bounded { s: 1, eager: true };
    let mut c = TableClient::new(0, 1, 10, mode, Arc::new(TwoSteps));
    let mut s = TableShard::new(0, 1, 2, 10, mode, Arc::new(TwoSteps));
    let reads = |a: &[Action]| -> Vec<(u64, Vec<(i64, u64)>)> {
        a.iter()
            .filter_map(|x| match x {
                Action::Record(Event::RowReads {
                    clock,
                    differentials,
                    ..
                }) => Some((*clock, differentials.clone())),
                _ => None,
            })
            .collect()
    };
    // Clock 0: each step misses and asks for its own row; the shard registers both.
    c.handle(0, Input::Start).unwrap();
    assert_eq!(
        drain(&mut c),
        vec![Action::Send {
            to: 0,
            msg: Message::RowRequest { clock: 0, step: 0 }
        }]
    );
    s.handle(0, recv(1, Message::RowRequest { clock: 0, step: 0 }))
        .unwrap();
    assert_eq!(
        drain(&mut s)[0],
        Action::RowSet {
            peer: 1,
            rows: vec![keys()[0]]
        }
    );
    c.handle(1, recv(0, Message::Rows { clock: 0, stamp: 0 }))
        .unwrap();
    assert!(
        reads(&drain(&mut c)).is_empty(),
        "recorded when the clock completes"
    );
    c.handle(2, Input::ComputeDone { iter: 0 }).unwrap();
    assert_eq!(
        drain(&mut c),
        vec![Action::Send {
            to: 0,
            msg: Message::RowRequest { clock: 0, step: 1 }
        }]
    );
    s.handle(2, recv(1, Message::RowRequest { clock: 0, step: 1 }))
        .unwrap();
    assert_eq!(
        drain(&mut s)[0],
        Action::RowSet {
            peer: 1,
            rows: vec![keys()[1]]
        }
    );
    c.handle(3, recv(0, Message::Rows { clock: 0, stamp: 0 }))
        .unwrap();
    drain(&mut c);
    c.handle(4, Input::ComputeDone { iter: 0 }).unwrap();
    let a = drain(&mut c);
    assert_eq!(
        a[0],
        Action::Send {
            to: 0,
            msg: Message::RowInc { clock: 0 }
        }
    );
    // Clock 0's two steps both read at -1.
    assert_eq!(reads(&a), vec![(0, vec![(-1, 2)])]);
    // Clock 1, step 0 reads the stamp-0 copy (-2, within s = 1) without asking.
    assert_eq!(a.last(), Some(&Action::Compute { iter: 1 }));
    // While it computes, the shard's clock reaches 1 and its push arrives.
    c.handle(5, recv(0, Message::RowPush { upto: 2, stamp: 1 }))
        .unwrap();
    drain(&mut c);
    c.handle(6, Input::ComputeDone { iter: 1 }).unwrap();
    assert!(reads(&drain(&mut c)).is_empty());
    // Step 1 read the pushed copy: clock 1 records one read at -2 and one at -1.
    c.handle(7, Input::ComputeDone { iter: 1 }).unwrap();
    assert_eq!(reads(&drain(&mut c)), vec![(1, vec![(-2, 1), (-1, 1)])]);
}

/// Under bound 0 a faster worker's INC of clock c reaches the rows only once every worker has
/// finished c: a read late in clock c sees exactly the clocks before it.
#[test]
fn bsp_shard_applies_a_clocks_incs_when_the_clock_passes() {
    let mut s = shard(BSP, 2);
    s.handle(0, recv(1, Message::RowInc { clock: 0 })).unwrap();
    assert!(drain(&mut s).is_empty(), "held back until worker 1 is done");
    s.handle(0, recv(2, Message::RowRequest { clock: 0, step: 0 }))
        .unwrap();
    let a = drain(&mut s);
    assert_eq!(
        a.last(),
        Some(&Action::Send {
            to: 2,
            msg: Message::Rows { clock: 0, stamp: 0 }
        }),
        "answered from the rows without worker 0's clock-0 INC"
    );
    assert!(!a.iter().any(|x| matches!(x, Action::Apply { .. })));
    s.handle(1, recv(2, Message::RowInc { clock: 0 })).unwrap();
    assert_eq!(
        &drain(&mut s)[..2],
        &[
            Action::Apply { from: 1, clock: 0 },
            Action::Apply { from: 2, clock: 0 }
        ]
    );
}

#[test]
fn a_request_for_a_step_the_plan_lacks_is_an_error() {
    let mut s = TableShard::new(0, 1, 1, 10, BSP, Arc::new(TwoSteps));
    let e = s
        .handle(0, recv(1, Message::RowRequest { clock: 0, step: 2 }))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("step 2 of clock 0") && e.contains("2 steps"),
        "{e}"
    );
}
