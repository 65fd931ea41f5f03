//! Scripted event sequences for the parameter-server nodes.

use super::*;
use crate::protocol::test_support::drain;
use crate::protocol::{Action, Event, Input, Message, Protocol};
use ReadPolicy::{Async, Cache};
use ReleasePolicy::{Bounded, Immediate};

fn sends(actions: &[Action]) -> Vec<(usize, Message)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send { to, msg } => Some((*to, *msg)),
            _ => None,
        })
        .collect()
}

#[test]
fn bsp_worker_requests_every_iteration_and_blocks() {
    let mut w = PsWorker::new(1, 0, 0, 2, Cache { s: 0 });
    w.handle(0, Input::Start).unwrap();
    // Initial model holds clocks < 0 = complete 0 and clock 0 needs complete >= 0: fresh.
    let a = drain(&mut w);
    assert!(a.contains(&Action::Compute { iter: 0 }));
    w.handle(10, Input::ComputeDone { iter: 0 }).unwrap();
    let a = drain(&mut w);
    assert_eq!(
        sends(&a),
        vec![
            (0, Message::Update { clock: 0 }),
            (0, Message::ReadRequest { clock: 1 })
        ]
    );
    assert!(!a.iter().any(|x| matches!(x, Action::Compute { .. })));
    w.handle(
        25,
        Input::Received {
            from: 0,
            msg: Message::Model { complete: 1 },
        },
    )
    .unwrap();
    let a = drain(&mut w);
    assert!(a.contains(&Action::Install { from: 0 }));
    assert!(a.contains(&Action::Compute { iter: 1 }));
    w.handle(40, Input::ComputeDone { iter: 1 }).unwrap();
    let a = drain(&mut w);
    let rec = a.iter().find_map(|x| match x {
        Action::Record(Event::Iteration(r)) => Some(*r),
        _ => None,
    });
    let r = rec.unwrap();
    assert_eq!(
        (r.iter, r.start, r.end, r.wait, r.staleness),
        (1, 10, 40, 15, 0)
    );
    assert!(a.contains(&Action::Finished));
    assert!(w.is_finished());
}

#[test]
fn ssp_worker_reads_from_cache_within_bound() {
    let mut w = PsWorker::new(1, 0, 0, 10, Cache { s: 2 });
    w.handle(0, Input::Start).unwrap();
    drain(&mut w);
    for c in 0..3 {
        w.handle(c + 1, Input::ComputeDone { iter: c }).unwrap();
        let a = drain(&mut w);
        let asked = sends(&a)
            .iter()
            .any(|(_, m)| matches!(m, Message::ReadRequest { .. }));
        // clocks 1 and 2 are within s = 2 of complete 0; clock 3 is not.
        assert_eq!(asked, c + 1 == 3, "clock {}", c + 1);
    }
}

#[test]
fn server_holds_reads_until_bound_met() {
    let mut s = PsServer::new(0, 2, 5, Bounded { s: 1, eager: false });
    s.handle(0, Input::Start).unwrap();
    let up = |c| Message::Update { clock: c };
    s.handle(
        1,
        Input::Received {
            from: 1,
            msg: up(0),
        },
    )
    .unwrap();
    s.handle(
        2,
        Input::Received {
            from: 1,
            msg: up(1),
        },
    )
    .unwrap();
    // Worker 1 at clock 2 needs complete >= 1: worker 2 has not finished clock 0.
    s.handle(
        3,
        Input::Received {
            from: 1,
            msg: Message::ReadRequest { clock: 2 },
        },
    )
    .unwrap();
    let a = drain(&mut s);
    assert_eq!(sends(&a), vec![]);
    assert_eq!(
        a.iter()
            .filter(|x| matches!(x, Action::Apply { .. }))
            .count(),
        2
    );
    s.handle(
        4,
        Input::Received {
            from: 2,
            msg: up(0),
        },
    )
    .unwrap();
    let a = drain(&mut s);
    assert_eq!(sends(&a), vec![(1, Message::Model { complete: 1 })]);
}

#[test]
fn asp_server_answers_at_once() {
    let mut s = PsServer::new(0, 2, 5, Immediate);
    s.handle(
        0,
        Input::Received {
            from: 2,
            msg: Message::ReadRequest { clock: 4 },
        },
    )
    .unwrap();
    assert_eq!(
        sends(&drain(&mut s)),
        vec![(2, Message::Model { complete: 0 })]
    );
}

#[test]
fn violations_are_errors() {
    let mut s = PsServer::new(0, 2, 5, Bounded { s: 0, eager: false });
    let e = s
        .handle(
            0,
            Input::Received {
                from: 1,
                msg: Message::Update { clock: 3 },
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("expected clock 0"), "{e}");
    assert!(s
        .handle(
            0,
            Input::Received {
                from: 9,
                msg: Message::Update { clock: 0 }
            }
        )
        .is_err());
    let mut w = PsWorker::new(1, 0, 0, 5, Cache { s: 0 });
    assert!(w.handle(0, Input::ComputeDone { iter: 0 }).is_err());
    w.handle(0, Input::Start).unwrap();
    assert!(w
        .handle(
            0,
            Input::Received {
                from: 0,
                msg: Message::Update { clock: 0 }
            }
        )
        .is_err());
}

#[test]
fn asp_worker_never_blocks_and_keeps_one_refresh_in_flight() {
    let mut w = PsWorker::new(1, 0, 0, 3, Async);
    w.handle(0, Input::Start).unwrap();
    let a = drain(&mut w);
    assert_eq!(sends(&a), vec![(0, Message::ReadRequest { clock: 0 })]);
    assert!(a.contains(&Action::Compute { iter: 0 }));
    w.handle(5, Input::ComputeDone { iter: 0 }).unwrap();
    let a = drain(&mut w);
    // refresh still in flight: only the update goes out, and clock 1 computes at once.
    assert_eq!(sends(&a), vec![(0, Message::Update { clock: 0 })]);
    assert!(a.contains(&Action::Compute { iter: 1 }));
    w.handle(
        6,
        Input::Received {
            from: 0,
            msg: Message::Model { complete: 0 },
        },
    )
    .unwrap();
    assert_eq!(drain(&mut w), vec![Action::Install { from: 0 }]);
    w.handle(9, Input::ComputeDone { iter: 1 }).unwrap();
    let a = drain(&mut w);
    assert_eq!(
        sends(&a),
        vec![
            (0, Message::Update { clock: 1 }),
            (0, Message::ReadRequest { clock: 2 })
        ]
    );
}

#[test]
fn essp_server_pushes_to_every_worker_when_the_clock_advances() {
    let mut s = PsServer::new(0, 2, 5, Bounded { s: 2, eager: true });
    let up = |c| Message::Update { clock: c };
    s.handle(
        1,
        Input::Received {
            from: 1,
            msg: up(0),
        },
    )
    .unwrap();
    assert_eq!(sends(&drain(&mut s)), vec![]);
    s.handle(
        2,
        Input::Received {
            from: 2,
            msg: up(0),
        },
    )
    .unwrap();
    assert_eq!(
        sends(&drain(&mut s)),
        vec![
            (1, Message::Model { complete: 1 }),
            (2, Message::Model { complete: 1 })
        ]
    );
}

#[test]
fn dssp_server_releases_by_controller_and_lower_bound() {
    use super::dssp::DsspController;
    let mut s = PsServer::new(0, 2, 50, ReleasePolicy::Dssp(DsspController::new(2, 1, 0)));
    let up = |c| Message::Update { clock: c };
    let rd = |c| Message::ReadRequest { clock: c };
    // worker 1 (node 1) races ahead; worker 2 never pushes.
    for c in 0..2 {
        s.handle(
            10 * c + 1,
            Input::Received {
                from: 1,
                msg: up(c),
            },
        )
        .unwrap();
        s.handle(
            10 * c + 1,
            Input::Received {
                from: 1,
                msg: rd(c + 1),
            },
        )
        .unwrap();
    }
    let a = drain(&mut s);
    // gap 1 <= s_L answered; gap 2 > s_L with r_max = 0 waits.
    assert_eq!(sends(&a), vec![(1, Message::Model { complete: 0 })]);
    s.handle(
        30,
        Input::Received {
            from: 2,
            msg: up(0),
        },
    )
    .unwrap();
    assert_eq!(
        sends(&drain(&mut s)),
        vec![(1, Message::Model { complete: 1 })]
    );
}

#[test]
fn backup_server_takes_the_first_n_updates_and_drops_the_rest() {
    let mut s = PsServer::new(0, 3, 5, ReleasePolicy::Backup { needed: 2 });
    let up = |c| Message::Update { clock: c };
    // worker nodes 1 and 2 finish clock 0 first; node 3 asks for clock 1 early and waits.
    s.handle(
        1,
        Input::Received {
            from: 3,
            msg: Message::ReadRequest { clock: 0 },
        },
    )
    .unwrap();
    s.handle(
        1,
        Input::Received {
            from: 1,
            msg: up(0),
        },
    )
    .unwrap();
    s.handle(
        2,
        Input::Received {
            from: 1,
            msg: Message::ReadRequest { clock: 1 },
        },
    )
    .unwrap();
    let a = drain(&mut s);
    assert_eq!(sends(&a), vec![(3, Message::Model { complete: 0 })]);
    s.handle(
        3,
        Input::Received {
            from: 2,
            msg: up(0),
        },
    )
    .unwrap();
    let a = drain(&mut s);
    assert!(a.contains(&Action::Apply { from: 2, clock: 0 }));
    assert_eq!(sends(&a), vec![(1, Message::Model { complete: 1 })]);
    // node 3's late update for clock 0 is discarded; its next read is answered at once.
    s.handle(
        4,
        Input::Received {
            from: 3,
            msg: up(0),
        },
    )
    .unwrap();
    s.handle(
        4,
        Input::Received {
            from: 3,
            msg: Message::ReadRequest { clock: 1 },
        },
    )
    .unwrap();
    let a = drain(&mut s);
    assert!(a.contains(&Action::Discard { from: 3, clock: 0 }));
    assert_eq!(sends(&a), vec![(3, Message::Model { complete: 1 })]);
}

#[test]
fn backup_worker_jumps_to_the_servers_clock() {
    let mut w = PsWorker::new(1, 0, 0, 4, ReadPolicy::AskAndJump);
    w.handle(0, Input::Start).unwrap();
    drain(&mut w);
    w.handle(
        0,
        Input::Received {
            from: 0,
            msg: Message::Model { complete: 0 },
        },
    )
    .unwrap();
    drain(&mut w);
    w.handle(5, Input::ComputeDone { iter: 0 }).unwrap();
    drain(&mut w);
    // the others already finished clocks 1 and 2: the worker goes on at clock 3.
    w.handle(
        6,
        Input::Received {
            from: 0,
            msg: Message::Model { complete: 3 },
        },
    )
    .unwrap();
    assert!(drain(&mut w).contains(&Action::Compute { iter: 3 }));
    w.handle(7, Input::ComputeDone { iter: 3 }).unwrap();
    assert!(drain(&mut w).contains(&Action::Finished));
}
