//! Scripted event sequences for decentralized peers.

use super::*;
use crate::protocol::test_support::drain;
use crate::protocol::{Action, Input, Message, Protocol};
use crate::topology::{Topology, TopologyKind};

fn sends(a: &[Action]) -> Vec<(usize, Message)> {
    a.iter()
        .filter_map(|x| match x {
            Action::Send { to, msg } => Some((*to, *msg)),
            _ => None,
        })
        .collect()
}

fn recv(p: &mut HopPeer, now: u64, from: usize, msg: Message) -> Vec<Action> {
    p.handle(now, Input::Received { from, msg }).unwrap();
    drain(p)
}

fn settings(mode: PeerMode, max_i: Option<u64>) -> PeerSettings {
    PeerSettings {
        serial: false,
        mode,
        max_i,
        iterations: 5,
        skip: None,
    }
}

#[test]
fn standard_peer_sends_computes_and_waits_for_every_in_neighbour() {
    let mut p = HopPeer::new(
        1,
        vec![0, 2],
        vec![0, 2],
        settings(PeerMode::Standard, None),
        3,
    );
    p.handle(0, Input::Start).unwrap();
    let a = drain(&mut p);
    assert_eq!(
        sends(&a),
        vec![
            (0, Message::Update { clock: 0 }),
            (2, Message::Update { clock: 0 })
        ]
    );
    assert!(a.contains(&Action::Compute { iter: 0 }));
    p.handle(5, Input::ComputeDone { iter: 0 }).unwrap();
    assert!(drain(&mut p).is_empty(), "still needs both updates");
    assert!(recv(&mut p, 6, 0, Message::Update { clock: 0 }).is_empty());
    assert_eq!(p.iteration(), Some(0));
    let a = recv(&mut p, 7, 2, Message::Update { clock: 0 });
    assert_eq!(
        a[0],
        Action::Reduce {
            inputs: vec![(0, 0, 1.0), (2, 0, 1.0), (1, 0, 1.0)]
        }
    );
    assert_eq!(p.iteration(), Some(1));
    // An update from a node that is not an in-neighbour is a violation.
    assert!(p
        .handle(
            8,
            Input::Received {
                from: 3,
                msg: Message::Update { clock: 1 }
            }
        )
        .is_err());
}

#[test]
fn backup_peer_reduces_the_first_updates_and_drops_late_ones() {
    let mut p = HopPeer::new(
        1,
        vec![0, 2, 3],
        vec![0],
        settings(PeerMode::Backup { backups: 1 }, Some(2)),
        4,
    );
    p.handle(0, Input::Start).unwrap();
    drain(&mut p);
    p.handle(1, Input::ComputeDone { iter: 0 }).unwrap();
    recv(&mut p, 2, 3, Message::Update { clock: 0 });
    let a = recv(&mut p, 3, 0, Message::Update { clock: 0 });
    assert_eq!(
        a[0],
        Action::Reduce {
            inputs: vec![(3, 0, 1.0), (0, 0, 1.0), (1, 0, 1.0)]
        },
        "2 of 3 in-neighbours suffice"
    );
    // Entering iteration 1 takes a token from out-neighbour 0 and gives one to 0, 2, 3.
    assert_eq!(
        sends(&a)
            .iter()
            .filter(|(_, m)| matches!(m, Message::Token { iter: 1 }))
            .count(),
        3
    );
    let a = recv(&mut p, 4, 2, Message::Update { clock: 0 });
    assert_eq!(
        a,
        vec![Action::Discard { from: 2, clock: 0 }],
        "late update"
    );
}

#[test]
fn tokens_bound_the_lead_over_an_out_neighbour() {
    let mut p = HopPeer::new(
        1,
        vec![0],
        vec![2],
        settings(PeerMode::Standard, Some(1)),
        3,
    );
    p.handle(0, Input::Start).unwrap();
    drain(&mut p);
    p.handle(1, Input::ComputeDone { iter: 0 }).unwrap();
    recv(&mut p, 2, 0, Message::Update { clock: 0 });
    // max_i = 1: the first token is spent entering iteration 1.
    assert_eq!(p.iteration(), Some(1));
    p.handle(3, Input::ComputeDone { iter: 1 }).unwrap();
    recv(&mut p, 4, 0, Message::Update { clock: 1 });
    assert_eq!(
        p.iteration(),
        Some(1),
        "no token from node 2 to enter iteration 2"
    );
    let a = recv(&mut p, 5, 2, Message::Token { iter: 1 });
    assert!(a.contains(&Action::Compute { iter: 2 }));
    assert_eq!(p.iteration(), Some(2));
}

#[test]
fn staleness_uses_eq2_weights_and_old_updates_within_the_bound() {
    let mut p = HopPeer::new(
        1,
        vec![0, 2],
        vec![0],
        settings(PeerMode::Staleness { s: 1 }, None),
        4,
    );
    p.handle(0, Input::Start).unwrap();
    // k = 0, s = 1: nothing is needed yet (k - s < 0): reduce with the own parameters only,
    // weight s + 1 = 2.
    assert!(drain(&mut p).contains(&Action::Reduce {
        inputs: vec![(1, 0, 2.0)]
    }));
    p.handle(1, Input::ComputeDone { iter: 0 }).unwrap();
    assert_eq!(p.iteration(), Some(1));
    drain(&mut p);
    // k = 1: needs an update of iteration >= 0 from both in-neighbours.
    assert!(recv(&mut p, 2, 0, Message::Update { clock: 0 }).is_empty());
    let a = recv(&mut p, 3, 2, Message::Update { clock: 1 });
    // eq. 2: weight iter(u) - (k - s) + 1.
    assert!(
        a.contains(&Action::Reduce {
            inputs: vec![(0, 0, 1.0), (2, 1, 2.0), (1, 1, 2.0)]
        }),
        "{a:?}"
    );
    p.handle(4, Input::ComputeDone { iter: 1 }).unwrap();
    drain(&mut p);
    // k = 2: node 0's newest is 0 < k - s = 1: blocked until it sends something newer, even
    // though node 2's update 1 (already reduced) still counts as within the bound.
    p.handle(5, Input::ComputeDone { iter: 2 }).unwrap();
    assert!(drain(&mut p).is_empty());
    let a = recv(&mut p, 6, 0, Message::Update { clock: 1 });
    assert!(
        a.contains(&Action::Reduce {
            inputs: vec![(0, 1, 1.0), (1, 2, 2.0)]
        }),
        "{a:?}"
    );
}

#[test]
fn notify_ack_sends_only_after_the_previous_ack() {
    let mut p = HopPeer::new(1, vec![0], vec![2], settings(PeerMode::NotifyAck, None), 3);
    p.handle(0, Input::Start).unwrap();
    drain(&mut p);
    p.handle(1, Input::ComputeDone { iter: 0 }).unwrap();
    let a = recv(&mut p, 2, 0, Message::Update { clock: 0 });
    assert!(sends(&a).contains(&(0, Message::Ack { clock: 0 })));
    assert!(
        !sends(&a).contains(&(2, Message::Update { clock: 1 })),
        "in iteration 1 but its send waits for ACK(0) from node 2"
    );
    assert_eq!(p.iteration(), Some(1));
    let a = recv(&mut p, 3, 2, Message::Ack { clock: 0 });
    assert!(sends(&a).contains(&(2, Message::Update { clock: 1 })));
}

#[test]
fn impossible_settings_are_clear_errors() {
    let ring = TopologyKind::Ring.build(4).unwrap();
    let err = |s: PeerSettings, t: &Topology| s.build(t).err().unwrap().to_string();
    let e = err(settings(PeerMode::Backup { backups: 1 }, None), &ring);
    assert!(e.contains("token queues"), "{e}");
    let e = err(settings(PeerMode::Backup { backups: 2 }, Some(2)), &ring);
    assert!(e.contains("in-degree"), "{e}");
    let e = err(settings(PeerMode::Standard, Some(0)), &ring);
    assert!(e.contains("max_i"), "{e}");
    let chain = TopologyKind::Chain.build(4).unwrap();
    let e = err(settings(PeerMode::Staleness { s: 1 }, None), &chain);
    assert!(e.contains("strongly connected"), "{e}");
    let e = err(settings(PeerMode::Standard, Some(2)), &chain);
    assert!(e.contains("strongly connected"), "{e}");
    // ASAP's stochastic reduce runs over a one-way chain.
    assert_eq!(
        settings(PeerMode::Standard, None)
            .build(&chain)
            .unwrap()
            .len(),
        4
    );
}

#[test]
fn a_straggler_jumps_renewing_its_parameters_and_settling_tokens() {
    let s = PeerSettings {
        serial: false,
        skip: Some(SkipPolicy {
            max_jump: 3,
            trigger: 1,
        }),
        iterations: 10,
        ..settings(PeerMode::Standard, Some(2))
    };
    let mut p = HopPeer::new(1, vec![0], vec![2], s, 8);
    p.handle(0, Input::Start).unwrap();
    drain(&mut p);
    // The out-neighbour entered iterations 1..=3; the in-neighbour sent iterations 0..=2.
    for it in 1..=3 {
        recv(&mut p, 1, 2, Message::Token { iter: it });
    }
    let a = recv(&mut p, 2, 0, Message::Update { clock: 0 });
    assert!(a.contains(&Action::Reduce {
        inputs: vec![(0, 0, 1.0), (1, 0, 1.0)]
    }));
    for it in 1..=2 {
        recv(&mut p, 2, 0, Message::Update { clock: it });
    }
    // Iteration 0 completes; the jump: Discard the unused update of iteration 1, Rec(2) +
    // Reduce, three tokens each way.
    p.handle(3, Input::ComputeDone { iter: 0 }).unwrap();
    let a = drain(&mut p);
    assert!(a.contains(&Action::Discard { from: 0, clock: 1 }), "{a:?}");
    assert!(a.contains(&Action::Reduce {
        inputs: vec![(0, 2, 1.0), (1, 2, 1.0)]
    }));
    let tokens = sends(&a)
        .iter()
        .filter(|(to, m)| *to == 0 && *m == Message::Token { iter: 3 })
        .count();
    assert_eq!(tokens, 3, "three iterations entered at once");
    assert!(sends(&a).contains(&(2, Message::Update { clock: 3 })));
    assert_eq!((p.iteration(), p.skipped()), (Some(3), 2));
    // Skipping without token queues, or with NOTIFY-ACK, is refused.
    let ring = TopologyKind::Ring.build(4).unwrap();
    let bad = PeerSettings { max_i: None, ..s };
    assert!(bad
        .build(&ring)
        .err()
        .unwrap()
        .to_string()
        .contains("token queues"));
    let bad = PeerSettings {
        serial: false,
        mode: PeerMode::NotifyAck,
        ..s
    };
    assert!(bad.build(&ring).is_err());
}

#[test]
fn serial_peer_sends_only_after_computing_and_reduces_after_sending() {
    let mut p = HopPeer::new(
        1,
        vec![0, 2],
        vec![0, 2],
        PeerSettings {
            serial: true,
            ..settings(PeerMode::Standard, None)
        },
        3,
    );
    p.handle(0, Input::Start).unwrap();
    let a = drain(&mut p);
    assert!(
        sends(&a).is_empty(),
        "serial: no send before the computation"
    );
    assert!(a.contains(&Action::Compute { iter: 0 }));
    // Both in-neighbours' updates arrive early: no reduce before this peer's own send.
    assert!(recv(&mut p, 1, 0, Message::Update { clock: 0 }).is_empty());
    assert!(recv(&mut p, 2, 2, Message::Update { clock: 0 }).is_empty());
    p.handle(5, Input::ComputeDone { iter: 0 }).unwrap();
    let a = drain(&mut p);
    assert_eq!(
        sends(&a),
        vec![
            (0, Message::Update { clock: 0 }),
            (2, Message::Update { clock: 0 })
        ]
    );
    let reduce = a
        .iter()
        .position(|x| matches!(x, Action::Reduce { .. }))
        .expect("reduces once sent");
    let last_send = a
        .iter()
        .rposition(|x| matches!(x, Action::Send { .. }))
        .unwrap();
    assert!(last_send < reduce, "{a:?}");
    assert!(a.contains(&Action::Compute { iter: 1 }));
    assert_eq!(
        PeerSettings {
            serial: true,
            ..settings(PeerMode::Standard, None)
        }
        .label(),
        "standard+serial"
    );
}
