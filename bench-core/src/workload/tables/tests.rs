//! Row-table learning against hand-checked traces: INC coalescing, read-my-writes, shards.

use super::inc::*;
use super::learning::*;
use super::steps::*;
use super::TableModel;
use crate::learning::{Learning, Payload};
use crate::protocol::table::{RowAccess, RowKey};
use crate::protocol::{Action, Message, Role};
use std::sync::Arc;

use crate::data::RatingsShape;
use crate::workload::{MatrixFactorization, MfConfig, MfTables, ITEM_TABLE, USER_TABLE};

fn tables(shards: usize) -> MfTables {
    let shape = RatingsShape {
        users: 20,
        items: 10,
        ratings: 400,
        rank: 2,
        noise: 0.1,
        popularity_exponent: 1.0,
    };
    let all = shape.generate(1);
    let (test, train) = all.split_at(40);
    let cfg = MfConfig {
        rank: 2,
        lambda: 0.01,
        step: 0.1,
        minibatch_fraction: 0.05,
        init_scale: 0.3,
        init_seed: 1,
    };
    let mf = MatrixFactorization::new(cfg, 20, 10, train.to_vec(), test.to_vec()).unwrap();
    MfTables::new(Arc::new(mf), 2, shards).unwrap()
}

fn payload(meta: Vec<u64>, data: Vec<f32>) -> Payload {
    Payload {
        data: data.into(),
        applied: Arc::new(meta),
    }
}

/// A clock's steps coalesce into one INC: the union of their rows, deltas of a row in both
/// added.
#[test]
fn step_incs_merge_into_the_clocks() {
    let key = |row| RowKey { table: 0, row };
    for total in [10, DENSE_INDEX_ROWS + 1] {
        let mut inc = Inc::default();
        inc.add(&[key(1), key(4)], &[1, 4], &[1.0, 2.0, 3.0, 4.0], 2, total);
        inc.add(
            &[key(0), key(4), key(9)],
            &[0, 4, 9],
            &[5.0, 6.0, 7.0, 8.0, 9.0, 10.0],
            2,
            total,
        );
        assert_eq!(
            matches!(inc.at, EntryIndex::Dense(_)),
            total <= DENSE_INDEX_ROWS
        );
        let sorted: Vec<RowKey> = inc.sorted().into_iter().map(|i| inc.rows[i]).collect();
        assert_eq!(sorted, vec![key(0), key(1), key(4), key(9)]);
        let deltas: Vec<f32> = inc
            .sorted()
            .into_iter()
            .flat_map(|i| inc.deltas[i * 2..i * 2 + 2].to_vec())
            .collect();
        assert_eq!(deltas, vec![5.0, 6.0, 1.0, 2.0, 10.0, 12.0, 9.0, 10.0]);
        assert_eq!(inc.get(4, 2), Some(&[10.0, 12.0][..]));
        assert_eq!(inc.get(5, 2), None);
    }
}

/// Splitting a clock into steps changes when rows are read, not what one worker computes.
#[test]
fn steps_split_the_mini_batch_evenly() {
    let t = tables(1);
    let n = t.model().examples_per_clock(2);
    for steps in [
        ClockSteps::Fixed(1),
        ClockSteps::Fixed(3),
        ClockSteps::PerExample,
    ] {
        let t = tables(1).with_steps(steps);
        let k = t.steps(0, 0);
        let covered: usize = (0..k).map(|i| t.part(i).len()).sum();
        assert_eq!(covered, n, "{steps:?}");
        assert_eq!(t.part(k - 1).end, n);
    }
    assert_eq!(
        tables(1).with_steps(ClockSteps::PerExample).steps(0, 0),
        n as u64
    );
    assert_eq!(
        tables(1).with_steps(ClockSteps::Fixed(10_000)).steps(0, 0),
        n as u64
    );
    assert!(ClockSteps::from_config(Some(0)).is_err());
}

#[test]
fn an_inc_of_a_row_out_of_range_is_an_error_naming_it() {
    let t = tables(1);
    let mut shard = t.node(0, Role::Server, 2);
    let bad = RowKey {
        table: USER_TABLE,
        row: 20,
    };
    let msg = Message::RowInc { clock: 0 };
    t.receive(
        &mut shard,
        1,
        &msg,
        payload(vec![bad.to_word()], vec![0.5, 0.5]),
    );
    let e = t
        .carry_out(&mut shard, 0, &Action::Apply { from: 1, clock: 0 }, &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("row 20 of table 0 is out of range") && e.contains("20 user rows"),
        "{e}"
    );
    let e = t
        .carry_out(&mut shard, 0, &Action::Apply { from: 1, clock: 1 }, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("no INC payload from node 1 for clock 1"), "{e}");
}

#[test]
fn rows_the_protocol_did_not_name_are_refused() {
    let t = tables(1);
    let mut w = t.node(1, Role::Worker(0), 2);
    let named = RowKey {
        table: ITEM_TABLE,
        row: 3,
    };
    let other = RowKey {
        table: ITEM_TABLE,
        row: 4,
    };
    t.carry_out(
        &mut w,
        1,
        &Action::RowSet {
            peer: 0,
            rows: vec![named],
        },
        &[],
    )
    .unwrap();
    let msg = Message::Rows { clock: 0, stamp: 0 };
    t.receive(
        &mut w,
        0,
        &msg,
        payload(vec![0, other.to_word()], vec![1.0, 2.0]),
    );
    let e = t
        .carry_out(&mut w, 1, &Action::Install { from: 0 }, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("did not name"), "{e}");
}

/// A worker's own INC stays in its cache (read-my-writes) and is re-applied on top of a
/// fresh copy that does not hold it yet, but not on one that does.
#[test]
fn own_incs_are_reapplied_until_the_shard_holds_them() {
    let t = tables(1);
    let rows = t.clock_rows(0, 0);
    let mut shard = t.node(0, Role::Server, 2);
    let mut w = t.node(1, Role::Worker(0), 2);
    let k = t.model().row_len();
    let cached = |w: &TableNode<()>, r: &RowKey| {
        let i = t.model().offset(*r).unwrap() / k;
        w.cache.get(i).expect("cached").to_vec()
    };
    let install = |w: &mut TableNode<()>, shard: &mut TableNode<()>, held: u64| {
        t.carry_out(
            shard,
            0,
            &Action::RowSet {
                peer: 1,
                rows: rows.clone(),
            },
            &[],
        )
        .unwrap();
        let mut p = t
            .outgoing(shard, 1, &Message::Rows { clock: 0, stamp: 0 })
            .unwrap();
        let mut meta = (*p.applied).clone();
        meta[0] = held;
        p.applied = Arc::new(meta);
        t.carry_out(
            w,
            1,
            &Action::RowSet {
                peer: 0,
                rows: rows.clone(),
            },
            &[],
        )
        .unwrap();
        t.receive(w, 0, &Message::Rows { clock: 0, stamp: 0 }, p);
        t.carry_out(w, 1, &Action::Install { from: 0 }, &[])
            .unwrap();
    };
    install(&mut w, &mut shard, 0);
    let before: Vec<Vec<f32>> = rows.iter().map(|r| cached(&w, r)).collect();
    t.compute(&mut w, 0, 2, 0);
    let after: Vec<Vec<f32>> = rows.iter().map(|r| cached(&w, r)).collect();
    assert_ne!(before, after, "the computation changed its rows");
    // A copy without the INC (held = 0): the INC is re-applied.
    install(&mut w, &mut shard, 0);
    let again: Vec<Vec<f32>> = rows.iter().map(|r| cached(&w, r)).collect();
    assert_eq!(again, after);
    // The shard applies it; a copy that holds it (held = 1) is taken as it is.
    let inc = t
        .outgoing(&mut w, 0, &Message::RowInc { clock: 0 })
        .unwrap();
    t.receive(&mut shard, 1, &Message::RowInc { clock: 0 }, inc);
    t.carry_out(&mut shard, 0, &Action::Apply { from: 1, clock: 0 }, &[])
        .unwrap();
    install(&mut w, &mut shard, 1);
    for (r, a) in rows.iter().zip(&after) {
        for (x, y) in cached(&w, r).iter().zip(a) {
            assert!((x - y).abs() < 1e-6, "{r:?}: {x} vs {y}");
        }
    }
    assert!(w.own.is_empty(), "the held INC was dropped");
}
