//! Scripted event sequences for the ASYNC coordinator and worker.

use super::*;
use crate::error::CoreError;
use crate::protocol::test_support::drain;
use crate::protocol::{Action, Event, Input, Message, Protocol};
use std::sync::Arc;

fn tasks(actions: &[Action]) -> Vec<(usize, u64, u64)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send {
                to,
                msg: Message::Task { iter, version },
            } => Some((*to, *iter, *version)),
            _ => None,
        })
        .collect()
}

/// `(worker, start, end, wait)` of the iteration records among `a`.
fn records(a: &[Action]) -> Vec<(usize, u64, u64, u64)> {
    a.iter()
        .filter_map(|x| match x {
            Action::Record(Event::Iteration(r)) => Some((r.worker, r.start, r.end, r.wait)),
            _ => None,
        })
        .collect()
}

fn without_records(a: &[Action]) -> Vec<Action> {
    a.iter()
        .filter(|x| !matches!(x, Action::Record(_)))
        .cloned()
        .collect()
}

fn result(c: &mut Coordinator, now: u64, node: usize, iter: u64, version: u64) -> Vec<Action> {
    c.handle(
        now,
        Input::Received {
            from: node,
            msg: Message::TaskResult { iter, version },
        },
    )
    .unwrap();
    drain(c)
}

#[test]
fn bsp_rounds_commit_once_per_round() {
    let mut c = Coordinator::new(0, 1, 2, BarrierPredicate::Bsp, Collect::Round, 4);
    c.handle(0, Input::Start).unwrap();
    assert_eq!(tasks(&drain(&mut c)), vec![(1, 0, 0), (2, 0, 0)]);
    let a = result(&mut c, 10, 2, 0, 0);
    assert_eq!(
        without_records(&a),
        vec![Action::Apply { from: 2, clock: 0 }],
        "no commit, no task while a worker of the round computes"
    );
    assert_eq!(records(&a), vec![(1, 0, 10, 0)]);
    let a = result(&mut c, 30, 1, 0, 0);
    let b = without_records(&a);
    assert_eq!(b[0], Action::Apply { from: 1, clock: 0 });
    assert_eq!(b[1], Action::Commit { version: 1 });
    assert_eq!(tasks(&a), vec![(1, 1, 1), (2, 1, 1)]);
    result(&mut c, 40, 1, 1, 1);
    let a = result(&mut c, 50, 2, 1, 1);
    // The fast worker's second task: available from its result (10), dispatched at 30 (a wait
    // of 20 inside the iteration), back at 50.
    assert_eq!(records(&a), vec![(1, 10, 50, 20)]);
    assert!(a.contains(&Action::Commit { version: 2 }));
    assert!(a.contains(&Action::Send {
        to: 1,
        msg: Message::Stop
    }));
    assert_eq!(a.last(), Some(&Action::Finished));
    assert!(c.is_finished());
}

#[test]
fn asp_commits_each_result_and_redispatches_at_once() {
    let mut c = Coordinator::new(0, 1, 2, BarrierPredicate::Asp, Collect::Each, 5);
    c.handle(0, Input::Start).unwrap();
    drain(&mut c);
    let a = without_records(&result(&mut c, 10, 1, 0, 0));
    assert_eq!(
        a[..2],
        [
            Action::Apply { from: 1, clock: 0 },
            Action::Commit { version: 1 }
        ]
    );
    assert_eq!(tasks(&a), vec![(1, 1, 1)]);
    // Worker 2's result on version 0 arrives one commit later: staleness 1.
    let a = result(&mut c, 20, 2, 0, 0);
    assert_eq!(c.stat().version(), 2);
    assert_eq!(tasks(&a), vec![(2, 1, 2)]);
    let rec = a.iter().find_map(|x| match x {
        Action::Record(Event::Iteration(r)) => Some(*r),
        _ => None,
    });
    assert_eq!(
        rec.map(|r| (r.worker, r.staleness, r.wait)),
        Some((1, 1, 0))
    );
}

#[test]
fn ssp_holds_dispatch_until_the_stale_worker_returns() {
    let mut c = Coordinator::new(0, 1, 2, BarrierPredicate::Ssp { s: 1 }, Collect::Each, 10);
    c.handle(0, Input::Start).unwrap();
    drain(&mut c);
    // Worker 1 (node 2) returns; worker 0's work is now 1 version stale: max staleness 1 >= s.
    let a = result(&mut c, 10, 2, 0, 0);
    assert!(tasks(&a).is_empty(), "{a:?}");
    assert_eq!(c.stat().max_staleness(), 1);
    assert_eq!(c.stat().available_workers(), 1);
    let a = result(&mut c, 50, 1, 0, 0);
    assert_eq!(tasks(&a), vec![(1, 1, 2), (2, 1, 2)]);
    assert!(c.stat().worker(0).avg_task_ns > c.stat().worker(1).avg_task_ns);
}

#[test]
fn a_predicate_that_admits_nobody_is_a_deadlock_naming_it() {
    let never = BarrierPredicate::Custom {
        name: "never".into(),
        f: Arc::new(|_: &StatTable, _| false),
    };
    for (barrier, name) in [(never, "never"), (BarrierPredicate::Ssp { s: 0 }, "ssp0")] {
        let mut c = Coordinator::new(0, 1, 3, barrier, Collect::Each, 6);
        let e = c.handle(0, Input::Start).unwrap_err();
        assert!(matches!(e, CoreError::Deadlock { .. }), "{e}");
        assert!(e.to_string().contains(&format!("'{name}'")), "{e}");
    }
}

#[test]
fn custom_predicate_sees_the_stat_table() {
    // Admit only even workers: odd workers never get a task, and the run still finishes.
    let even = BarrierPredicate::Custom {
        name: "even".into(),
        f: Arc::new(|_: &StatTable, w| w % 2 == 0),
    };
    let mut c = Coordinator::new(0, 1, 3, even, Collect::Each, 2);
    c.handle(0, Input::Start).unwrap();
    assert_eq!(tasks(&drain(&mut c)), vec![(1, 0, 0), (3, 0, 0)]);
    result(&mut c, 5, 3, 0, 0);
    let a = result(&mut c, 6, 1, 0, 0);
    assert!(c.is_finished(), "{a:?}");
}

#[test]
fn wrong_results_and_requests_are_violations() {
    let mut c = Coordinator::new(0, 1, 2, BarrierPredicate::Asp, Collect::Each, 4);
    c.handle(0, Input::Start).unwrap();
    drain(&mut c);
    let bad = |c: &mut Coordinator, from, msg| {
        c.handle(1, Input::Received { from, msg })
            .unwrap_err()
            .to_string()
    };
    let e = bad(
        &mut c,
        1,
        Message::TaskResult {
            iter: 0,
            version: 5,
        },
    );
    assert!(e.contains("version 5"), "{e}");
    let e = bad(&mut c, 9, Message::VersionRequest { version: 0 });
    assert!(e.contains("node 9"), "{e}");
    let e = bad(&mut c, 1, Message::VersionRequest { version: 3 });
    assert!(e.contains("version 3"), "{e}");
    c.handle(
        1,
        Input::Received {
            from: 1,
            msg: Message::VersionRequest { version: 0 },
        },
    )
    .unwrap();
    assert_eq!(
        drain(&mut c),
        vec![Action::Send {
            to: 1,
            msg: Message::VersionData { version: 0 }
        }]
    );
}

#[test]
fn worker_fetches_only_versions_it_does_not_hold() {
    let mut w = TaskWorker::new(1, 0, 0);
    let task = |w: &mut TaskWorker, now, iter, version| {
        w.handle(
            now,
            Input::Received {
                from: 0,
                msg: Message::Task { iter, version },
            },
        )
        .unwrap();
        drain(w)
    };
    w.handle(0, Input::Start).unwrap();
    assert_eq!(
        task(&mut w, 1, 0, 4),
        vec![
            Action::Record(Event::TaskWait {
                worker: 0,
                iter: 0,
                wait: 1
            }),
            Action::Send {
                to: 0,
                msg: Message::VersionRequest { version: 4 }
            }
        ]
    );
    w.handle(
        1,
        Input::Received {
            from: 0,
            msg: Message::VersionData { version: 4 },
        },
    )
    .unwrap();
    assert_eq!(
        drain(&mut w),
        vec![Action::Install { from: 0 }, Action::Compute { iter: 0 }]
    );
    w.handle(2, Input::ComputeDone { iter: 0 }).unwrap();
    assert_eq!(
        drain(&mut w),
        vec![Action::Send {
            to: 0,
            msg: Message::TaskResult {
                iter: 0,
                version: 4
            }
        }]
    );
    // The same version again: held, so no request and no bytes. It waited 9 - 2 ns.
    assert_eq!(
        task(&mut w, 9, 1, 4),
        vec![
            Action::Record(Event::TaskWait {
                worker: 0,
                iter: 1,
                wait: 7
            }),
            Action::Compute { iter: 1 }
        ]
    );
    w.handle(3, Input::ComputeDone { iter: 1 }).unwrap();
    drain(&mut w);
    w.handle(
        4,
        Input::Received {
            from: 0,
            msg: Message::Stop,
        },
    )
    .unwrap();
    assert_eq!(drain(&mut w), vec![Action::Finished]);
    assert!(w.is_finished());
    // Out-of-phase input is a violation.
    let mut w = TaskWorker::new(1, 0, 0);
    assert!(w.handle(0, Input::ComputeDone { iter: 0 }).is_err());
}

#[test]
fn barrier_labels_parse_back() {
    for s in ["asp", "bsp", "ssp3", "min-available4"] {
        assert_eq!(BarrierPredicate::parse(s).unwrap().label(), s);
    }
    let e = BarrierPredicate::parse("sometimes")
        .unwrap_err()
        .to_string();
    assert!(e.contains("sometimes") && e.contains("sspN"), "{e}");
}

/// 1,000 seeded random schedules (results return in random order) under SSP(s): a task is
/// dispatched only while the maximum staleness is below s, every task finishes, and no result
/// is staler than s + P - 2 (the in-flight tasks that return after the barrier closes).
#[test]
fn ssp_predicate_bounds_staleness_at_every_dispatch() {
    use rand::{Rng, SeedableRng};
    for seed in 0..1000u64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let p = rng.gen_range(1..7usize);
        let s = rng.gen_range(1..5u64);
        let total = rng.gen_range(1..60u64);
        let collect = if rng.gen_bool(0.5) {
            Collect::Each
        } else {
            Collect::Round
        };
        let mut c = Coordinator::new(0, 1, p, BarrierPredicate::Ssp { s }, collect, total);
        c.handle(0, Input::Start).unwrap();
        let mut in_flight: Vec<(usize, u64, u64)> = tasks(&drain(&mut c));
        let mut now = 0;
        let mut results = 0;
        while !c.is_finished() {
            assert!(
                !in_flight.is_empty(),
                "seed {seed}: stuck with nothing in flight"
            );
            let (node, iter, version) = in_flight.swap_remove(rng.gen_range(0..in_flight.len()));
            now += rng.gen_range(1..100);
            let a = result(&mut c, now, node, iter, version);
            results += 1;
            let new = tasks(&a);
            if !new.is_empty() {
                assert!(
                    c.stat().max_staleness() < s,
                    "seed {seed}: dispatch at max staleness {}",
                    c.stat().max_staleness()
                );
            }
            for x in &a {
                if let Action::Record(Event::Iteration(r)) = x {
                    assert!(
                        r.staleness <= (s + p as u64).saturating_sub(2),
                        "seed {seed}: staleness {} with s {s}, P {p}",
                        r.staleness
                    );
                }
            }
            in_flight.extend(new);
        }
        assert_eq!(results, total, "seed {seed}");
    }
}
