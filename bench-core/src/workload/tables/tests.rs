//! Row-table learning against hand-checked traces: INC coalescing, read-my-writes, shards.

use super::inc::*;
use super::learning::*;
use super::steps::*;
use super::TableModel;
use crate::learning::{Learning, Payload};
use crate::protocol::table::{RowAccess, RowKey, TableClient, TableMode, TableShard};
use crate::protocol::{Action, Input, Message, NodeId, Protocol, Role};
use std::collections::{BTreeMap, VecDeque};
use std::ops::Range;
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

// The digit model (ESSP's push path against a hand-computed trace). Worker `w`'s clock `c` adds
// 4^(w·C + c) to the one row, so every value is a base-4 number whose digit (w, c) says whether
// that INC is in it: a digit of 2 or more is an INC counted twice. All values stay below 2^24,
// so f32 holds them exactly.

/// The digit run: 2 workers (nodes 1 and 2), one shard (node 0), 4 clocks, bound 2.
const DIGIT_WORKERS: usize = 2;
const DIGIT_CLOCKS: u64 = 4;
const DIGIT_S: u64 = 2;

/// The digit worker `w` adds at clock `c`: 4^(w·C + c).
fn digit_of(w: usize, c: u64) -> u64 {
    1u64 << (2 * (w as u64 * DIGIT_CLOCKS + c))
}

/// One row, one example (hence one read-compute step) per clock; a worker's local state is
/// the list of its reads, `(clock, value read)`.
#[derive(Debug)]
struct Digit;

impl TableModel for Digit {
    type Local = Vec<(u64, f32)>;

    fn row_len(&self) -> usize {
        1
    }

    fn rows_total(&self) -> usize {
        1
    }

    fn offset(&self, key: RowKey) -> crate::error::Result<usize> {
        Ok(key.row as usize)
    }

    fn initial_values(&self, _workers: usize) -> Vec<f32> {
        vec![0.0]
    }

    fn local(&self, _worker: usize, _workers: usize) -> Self::Local {
        Vec::new()
    }

    fn examples_per_clock(&self, _workers: usize) -> usize {
        1
    }

    fn rows(
        &self,
        _worker: usize,
        _workers: usize,
        _clock: u64,
        _part: Range<usize>,
    ) -> Vec<RowKey> {
        vec![RowKey { table: 0, row: 0 }]
    }

    fn compute(
        &self,
        local: &mut Self::Local,
        _rows: &[RowKey],
        values: &mut [f32],
        worker: usize,
        _workers: usize,
        clock: u64,
        _part: Range<usize>,
    ) {
        local.push((clock, values[0]));
        values[0] += digit_of(worker, clock) as f32;
    }

    fn evaluate(&self, values: &[f32]) -> (f64, f64) {
        (f64::from(values[0]), f64::NAN)
    }

    fn batch_size(&self, _workers: usize) -> usize {
        1
    }
}

/// A digit-model value as an integer (it must be one, below 2^24).
fn exact(v: f32) -> u64 {
    assert!(
        (0.0..16_777_216.0).contains(&v) && v.fract() == 0.0,
        "{v} is not a digit-model value"
    );
    v as u64
}

/// The digit rules for a value `v` read by worker `w` at clock `c`: every digit is 0 or 1 (no INC
/// counted twice); the worker's own clocks before `c` are in (read-my-writes) and the others are
/// not; another worker's clocks `<= c - s - 1` are in (SSP's guarantee,
/// ESSP §"Consistency Models for Parameter Servers") and its clocks `>= c + s` are not (outside the
/// window W_{p,c} of ESSP §"Theoretical Analysis").
fn check_digits(v: u64, w: usize, c: u64) {
    let what = format!("worker {w} read {v} = {v:#x} at clock {c}");
    assert_eq!(
        v >> (2 * DIGIT_WORKERS as u64 * DIGIT_CLOCKS),
        0,
        "{what}: digits past the last clock"
    );
    for w2 in 0..DIGIT_WORKERS {
        for c2 in 0..DIGIT_CLOCKS {
            let d = (v >> (2 * (w2 as u64 * DIGIT_CLOCKS + c2))) & 3;
            assert!(d <= 1, "{what}: worker {w2}'s clock {c2} counted {d} times");
            if w2 == w {
                assert_eq!(d, u64::from(c2 < c), "{what}: own clock {c2}");
            } else if c2 + DIGIT_S < c {
                assert_eq!(
                    d, 1,
                    "{what}: worker {w2}'s clock {c2} is before the window"
                );
            } else if c2 >= c + DIGIT_S {
                assert_eq!(d, 0, "{what}: worker {w2}'s clock {c2} is past the window");
            }
        }
    }
}

/// What one directed link holds: messages in sending order, with their payloads.
type DigitLink = VecDeque<(Message, Option<Payload>)>;

/// A scripted driver for the digit run: the real shard and client state machines with their
/// learning states, one FIFO queue per directed link, and the clock each worker is computing.
/// Nothing moves until the script says so (a message when it is delivered, a step when it is
/// finished), so a test can put a push exactly where a hand trace has it. It carries out
/// actions as the simulator does: a send builds its payload at once, a compute runs at once
/// (its ComputeDone waits for [`Pump::finish`]), row sets, applies and installs go to the
/// learning.
struct Pump {
    t: Arc<TableLearning<Digit>>,
    nodes: Vec<Box<dyn Protocol>>,
    states: Vec<TableNode<Vec<(u64, f32)>>>,
    roles: Vec<Role>,
    links: BTreeMap<(NodeId, NodeId), DigitLink>,
    /// Per worker, the clock of the step computed and not finished yet.
    computing: Vec<Option<u64>>,
}

impl Pump {
    /// The digit run under `mode`, nothing started.
    fn new(mode: TableMode) -> Self {
        let t = Arc::new(TableLearning::new(Arc::new(Digit), DIGIT_WORKERS, 1).unwrap());
        let shard: Box<dyn Protocol> = Box::new(TableShard::new(
            0,
            1,
            DIGIT_WORKERS,
            DIGIT_CLOCKS,
            mode,
            t.clone(),
        ));
        let mut nodes = vec![shard];
        for w in 0..DIGIT_WORKERS {
            nodes.push(Box::new(TableClient::new(
                w,
                1,
                DIGIT_CLOCKS,
                mode,
                t.clone(),
            )));
        }
        let roles: Vec<Role> = nodes.iter().map(|n| n.role()).collect();
        let states = roles
            .iter()
            .enumerate()
            .map(|(n, r)| t.node(n, *r, DIGIT_WORKERS))
            .collect();
        Pump {
            t,
            nodes,
            states,
            roles,
            links: BTreeMap::new(),
            computing: vec![None; DIGIT_WORKERS],
        }
    }

    /// Carries out node `n`'s actions, in order.
    fn drain(&mut self, n: NodeId) {
        while let Some(a) = self.nodes[n].poll_action() {
            match &a {
                Action::Send { to, msg } => {
                    let p = self.t.outgoing(&mut self.states[n], *to, msg);
                    self.links.entry((n, *to)).or_default().push_back((*msg, p));
                }
                Action::Compute { iter } => {
                    let w = n - 1;
                    self.t.compute(&mut self.states[n], w, DIGIT_WORKERS, *iter);
                    self.computing[w] = Some(*iter);
                }
                Action::RowSet { .. } | Action::Apply { .. } | Action::Install { .. } => {
                    self.t
                        .carry_out(&mut self.states[n], n, &a, &self.roles)
                        .unwrap_or_else(|e| panic!("node {n}: {e}"));
                }
                _ => {}
            }
        }
    }

    /// Feeds `input` to node `n` and carries out what it asks.
    fn input(&mut self, n: NodeId, input: Input) {
        self.nodes[n]
            .handle(0, input)
            .unwrap_or_else(|e| panic!("node {n}: {e}"));
        self.drain(n);
    }

    /// Starts every node (the shard first).
    fn start(&mut self) {
        for n in 0..self.nodes.len() {
            self.input(n, Input::Start);
        }
    }

    /// Delivers the oldest message from `from` to `to`.
    fn deliver(&mut self, from: NodeId, to: NodeId) {
        let (msg, p) = self
            .links
            .get_mut(&(from, to))
            .and_then(VecDeque::pop_front)
            .unwrap_or_else(|| panic!("nothing queued from node {from} to node {to}"));
        if let Some(p) = p {
            self.t.receive(&mut self.states[to], from, &msg, p);
        }
        self.input(to, Input::Received { from, msg });
    }

    /// Worker `w`'s step ends (ComputeDone).
    fn finish(&mut self, w: usize) {
        let iter = self.computing[w]
            .take()
            .unwrap_or_else(|| panic!("worker {w} is not computing"));
        self.input(1 + w, Input::ComputeDone { iter });
    }

    /// Runs to the end: delivers every queued message (the lowest (from, to) link first, each
    /// in FIFO order) until none is left, then finishes every computing worker (worker 0
    /// first), and again, until nothing is queued or computing.
    fn flush(&mut self) {
        loop {
            loop {
                let next = self
                    .links
                    .iter()
                    .find(|(_, q)| !q.is_empty())
                    .map(|(&k, _)| k);
                let Some((from, to)) = next else { break };
                self.deliver(from, to);
            }
            let busy: Vec<usize> = (0..DIGIT_WORKERS)
                .filter(|&w| self.computing[w].is_some())
                .collect();
            if busy.is_empty() {
                break;
            }
            for w in busy {
                self.finish(w);
            }
        }
    }

    /// Messages queued from `from` to `to`.
    fn queued(&self, from: NodeId, to: NodeId) -> usize {
        self.links.get(&(from, to)).map_or(0, VecDeque::len)
    }

    /// Worker `w`'s reads so far, `(clock, value)`.
    fn reads(&self, w: usize) -> Vec<(u64, u64)> {
        self.states[1 + w]
            .local
            .as_ref()
            .expect("a worker's state")
            .iter()
            .map(|&(c, v)| (c, exact(v)))
            .collect()
    }

    /// Worker `w`'s latest read.
    fn last_read(&self, w: usize) -> (u64, u64) {
        *self.reads(w).last().expect("a read")
    }

    /// The row in worker `w`'s cache.
    fn cached(&self, w: usize) -> u64 {
        exact(self.states[1 + w].cache.get(0).expect("the row is cached")[0])
    }

    /// The shard's row.
    fn shard_value(&self) -> u64 {
        exact(self.states[0].values[0])
    }

    /// At the end of a run: every node finished with nothing in flight, the shard holds every
    /// INC once (every digit 1), every read keeps the digit rules, and each worker keeps only
    /// its INC of the last clock: no copy can hold that one, since a shard neither answers nor
    /// pushes to a worker that has sent it its last clock.
    fn check_end(&self) {
        let waiting: Vec<String> = self.nodes.iter().map(|n| n.waiting_on()).collect();
        assert!(
            self.nodes.iter().all(|n| n.is_finished()),
            "unfinished: {waiting:?}"
        );
        assert!(self.links.values().all(VecDeque::is_empty));
        assert!(self.computing.iter().all(Option::is_none));
        // 4^0 + ... + 4^7: worker 0's clocks, then worker 1's.
        assert_eq!(
            self.shard_value(),
            1 + 4 + 16 + 64 + 256 + 1024 + 4096 + 16384
        );
        for w in 0..DIGIT_WORKERS {
            let reads = self.reads(w);
            assert_eq!(reads.len(), DIGIT_CLOCKS as usize, "worker {w}");
            for (c, v) in reads {
                check_digits(v, w, c);
            }
            let own: Vec<u64> = self.states[1 + w].own.keys().copied().collect();
            assert_eq!(own, vec![DIGIT_CLOCKS - 1], "worker {w}'s own INCs");
        }
    }
}

/// A hand-computed trace of the digit run under ESSP(2) (`eager`) or SSP(2): a script that
/// runs worker 0 two clocks ahead, has the shard's clock advance while worker 1 computes (so
/// that ESSP's push lands while both workers still hold own INCs the shard lacks), checks each
/// read the script makes against values worked out by hand from the code's rules, then runs to
/// the end ([`Pump::flush`]). Worker 0 adds 1, 4, 16, 64 at clocks 0-3, worker 1 adds 256,
/// 1024, 4096, 16384.
fn hand_trace(eager: bool) -> Pump {
    let mut p = Pump::new(TableMode::Bounded { s: DIGIT_S, eager });
    // 1. Both workers miss and ask; the shard (clock 0) answers both at stamp 0 with row 0.
    p.start();
    p.deliver(1, 0);
    p.deliver(2, 0);
    p.deliver(0, 1);
    p.deliver(0, 2);
    assert_eq!(p.last_read(0), (0, 0));
    assert_eq!(p.last_read(1), (0, 0));
    // 2-3. Worker 0 runs ahead: stamp 0 serves clocks 1 and 2 (0 + s >= c), and its own INCs
    // are in its cache (read-my-writes).
    p.finish(0);
    assert_eq!(p.last_read(0), (1, 1));
    p.finish(0);
    assert_eq!(p.last_read(0), (2, 1 + 4));
    // 4. The shard applies worker 0's INCs of clocks 0 and 1 (both < shard clock 0 + s);
    // its clock stays 0, as worker 1 has completed nothing.
    p.deliver(1, 0);
    p.deliver(1, 0);
    assert_eq!(p.shard_value(), 1 + 4);
    // 5. Worker 1 reads its own INC of clock 0 on top of stamp 0.
    p.finish(1);
    assert_eq!(p.last_read(1), (1, 256));
    // 6. Worker 1's INC of clock 0 moves the shard's clock to 1: ESSP pushes the row to both
    // workers, each copy headed by the clocks of that worker the shard holds (2 and 1); SSP
    // sends nothing.
    p.deliver(2, 0);
    assert_eq!(p.shard_value(), 1 + 4 + 256);
    let pushes = usize::from(eager);
    assert_eq!((p.queued(0, 1), p.queued(0, 2)), (pushes, pushes));
    for (w, held) in [(0, 2), (1, 1)] {
        if let Some((msg, Some(payload))) = p.links.get(&(0, 1 + w)).and_then(VecDeque::front) {
            assert_eq!(*msg, Message::RowPush { upto: 1, stamp: 1 });
            assert_eq!(payload.applied[0], held, "held by worker {w}'s push");
            assert_eq!(exact(payload.data[0]), 1 + 4 + 256);
        }
    }
    // 7. ESSP: the pushes land while worker 1 still computes clock 1 (its INC of clock 1 not
    // sent) and worker 0's INC of clock 2 is not sent either: each copy gets back the own INCs
    // of clocks >= held.
    if eager {
        p.deliver(0, 2);
        assert_eq!(p.cached(1), 1 + 4 + 256 + 1024);
        p.deliver(0, 1);
        assert_eq!(p.cached(0), 1 + 4 + 256 + 16);
    }
    // 8. Worker 0 reads at clock 3. ESSP: the pushed stamp 1 serves it (1 + s >= 3). SSP: stamp
    // 0 is too stale; the shard applies the INC of clock 2 (2 < 1 + s), then answers at stamp 1
    // with every clock of worker 0 held, so nothing is re-added.
    p.finish(0);
    if !eager {
        assert_eq!(
            p.computing[0], None,
            "SSP: stamp 0 is too stale for clock 3"
        );
        p.deliver(1, 0);
        p.deliver(1, 0);
        p.deliver(0, 1);
    }
    assert_eq!(p.last_read(0), (3, 1 + 4 + 16 + 256));
    // 9. Worker 1 reads at clock 2 from its cache (stamp 1 under ESSP, 0 under SSP): where the
    // two differ.
    p.finish(1);
    let read = if eager {
        1 + 4 + 256 + 1024
    } else {
        256 + 1024
    };
    assert_eq!(p.last_read(1), (2, read));
    p.flush();
    p
}

/// ESSP(2) on the digit model against the hand trace. After it the flush goes: the shard
/// applies worker 0's INC of clock 2 and worker 1's of clock 1 (clock 2, pushes: worker 0 gets
/// 1301 + own 64, worker 1 gets 1301 + own 4096); worker 0 ends, worker 1 reads at clock 3 the
/// pushed 1301 + 4096, without worker 0's clock 3, which is in its window.
#[test]
fn essp_push_path_matches_a_hand_computed_trace() {
    let p = hand_trace(true);
    assert_eq!(
        p.reads(0),
        vec![(0, 0), (1, 1), (2, 1 + 4), (3, 1 + 4 + 16 + 256)]
    );
    assert_eq!(
        p.reads(1),
        vec![
            (0, 0),
            (1, 256),
            (2, 1 + 4 + 256 + 1024),
            (3, 1 + 4 + 16 + 256 + 1024 + 4096),
        ]
    );
    p.check_end();
}

/// SSP(2) on the same script: worker 0 reads the same values, worker 1 differs at clock 2
/// (no push: its stamp-0 copy plus its own INCs) and at clock 3 (its stamp-0 copy is too
/// stale; it fetches after the shard applied every INC of clocks <= 2, and worker 0's of
/// clock 3, which arrived before).
#[test]
fn ssp_reads_differ_from_essp_where_the_hand_trace_says() {
    let (essp, ssp) = (hand_trace(true), hand_trace(false));
    ssp.check_end();
    assert_eq!(ssp.reads(0), essp.reads(0));
    assert_eq!(
        ssp.reads(1),
        vec![
            (0, 0),
            (1, 256),
            (2, 256 + 1024),
            (3, 1 + 4 + 16 + 64 + 256 + 1024 + 4096),
        ]
    );
    let differ: Vec<u64> = essp
        .reads(1)
        .iter()
        .zip(ssp.reads(1))
        .filter(|(a, b)| **a != *b)
        .map(|(a, _)| a.0)
        .collect();
    assert_eq!(differ, vec![2, 3]);
}
