//! The send tracker driven through a mock of the verbs calls ([`MockVerbs`]): requests run in
//! order within a queue pair (RC verbs) or in any order (a libfabric provider, which may
//! complete a chain's inline footer before its payload), in seeded random order across
//! peers; completions can be delayed, failed (with the flush of what follows, as hardware
//! does) or refused part-way, and a property test checks, under both, that nothing staged is
//! rewritten in flight and that every failure reaches the caller with its peer.

use super::super::send_window::STAGED_ENTRIES;
use super::*;
use proptest::prelude::{any, Just, Strategy};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, BTreeSet};

/// A status in words, as the mock's verbs report it.
fn status_name(status: u32, vendor_err: u32) -> String {
    format!("status {status}, vendor error {vendor_err}")
}

/// Transport retry counter exceeded: what a request to a peer that went away ends with.
const RETRY_EXC_ERR: u32 = 12;
/// What every request after it on the queue pair (now in the error state) ends with.
const WR_FLUSH_ERR: u32 = 5;

/// What a mock request reads from its peer's staging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// A notification entry.
    Entry(usize),
    /// A slot's staged copy.
    Slot(usize),
}

/// A mock work request.
#[derive(Debug, Clone, Copy)]
struct MockWr {
    wr_id: u64,
    signaled: bool,
    reads: Reads,
}

/// A request a mock queue pair accepted, with its position on the queue pair.
#[derive(Debug, Clone, Copy)]
struct Accepted {
    at: u64,
    wr: MockWr,
}

/// In what order a mock queue pair executes its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MockOrder {
    /// Oldest first (an RC queue pair).
    Posted,
    /// Any, drawn at random (a libfabric provider's endpoint).
    Any,
    /// Newest first: the worst case of [`MockOrder::Any`], for a deterministic test.
    Newest,
}

/// A mock RC queue pair.
#[derive(Debug, Default)]
struct MockQp {
    /// Accepted and not yet executed, oldest first.
    queue: VecDeque<Accepted>,
    /// Accepted and not yet reaped (no completion of it or of a later request on the
    /// queue pair polled), oldest first: the device may still read their staging.
    unreaped: VecDeque<Accepted>,
    /// Requests accepted so far.
    accepted: u64,
    /// In the error state: what executes completes flushed.
    error: bool,
    /// The next request executed fails, and the queue pair goes to the error state.
    fail_next: bool,
    /// Its requests never execute (a link gone silent).
    stalled: bool,
}

/// The verbs as a device may behave: requests execute in order within a queue pair and
/// in any order across them, later and later (when asked, and while the caller polls
/// with nothing to report); a failed request completes even unsignaled and flushes every
/// later one; a post may be refused part-way.
struct MockVerbs {
    rng: ChaCha8Rng,
    order: MockOrder,
    qps: BTreeMap<NodeId, MockQp>,
    /// Completions made, not yet polled: (peer, position on its queue pair, completion).
    cq: VecDeque<(NodeId, u64, Wc)>,
    /// The next post is refused at its request of this index (at most its last).
    refuse_at: Option<usize>,
    /// Peers a post to was refused.
    refusals: BTreeSet<NodeId>,
    /// Per peer, error completions polled.
    errors_polled: BTreeMap<NodeId, usize>,
    /// Work-request ids of the successful completions polled.
    succeeded: Vec<u64>,
    /// Work-request ids of the error completions polled.
    failed: Vec<u64>,
}

impl MockVerbs {
    fn new(seed: u64, peers: &[NodeId]) -> Self {
        Self::ordered(seed, peers, MockOrder::Posted)
    }

    fn ordered(seed: u64, peers: &[NodeId], order: MockOrder) -> Self {
        MockVerbs {
            rng: ChaCha8Rng::seed_from_u64(seed),
            order,
            qps: peers.iter().map(|&p| (p, MockQp::default())).collect(),
            cq: VecDeque::new(),
            refuse_at: None,
            refusals: BTreeSet::new(),
            errors_polled: BTreeMap::new(),
            succeeded: Vec::new(),
            failed: Vec::new(),
        }
    }

    /// Executes the oldest request of a queue pair drawn at random among those with work;
    /// false when none has any.
    fn step(&mut self) -> bool {
        let ready: Vec<NodeId> = self
            .qps
            .iter()
            .filter(|(_, q)| !q.stalled && !q.queue.is_empty())
            .map(|(&p, _)| p)
            .collect();
        if ready.is_empty() {
            return false;
        }
        let peer = ready[self.rng.gen_range(0..ready.len())];
        let qp = self.qps.get_mut(&peer).expect("a drawn queue pair");
        let next = match self.order {
            MockOrder::Posted => 0,
            MockOrder::Any => self.rng.gen_range(0..qp.queue.len()),
            MockOrder::Newest => qp.queue.len() - 1,
        };
        let Some(r) = qp.queue.remove(next) else {
            return false;
        };
        let status = if qp.error {
            WR_FLUSH_ERR
        } else if std::mem::take(&mut qp.fail_next) {
            qp.error = true;
            RETRY_EXC_ERR
        } else {
            SUCCESS
        };
        // A failed request always completes; a successful one only when signaled.
        if status != SUCCESS || r.wr.signaled {
            let wc = Wc {
                wr_id: r.wr.wr_id,
                status,
                vendor_err: 0,
            };
            self.cq.push_back((peer, r.at, wc));
        }
        true
    }

    /// Executes up to `k` requests; their completions wait to be polled.
    fn run(&mut self, k: usize) {
        for _ in 0..k {
            if !self.step() {
                break;
            }
        }
    }

    /// Nothing left to execute (on queue pairs that are not stalled) or to poll.
    fn idle(&self) -> bool {
        self.cq.is_empty() && self.qps.values().all(|q| q.stalled || q.queue.is_empty())
    }

    /// Whether a request to `peer` not yet reaped reads `reads`.
    fn reading(&self, peer: NodeId, reads: Reads) -> bool {
        self.qps[&peer].unreaped.iter().any(|r| r.wr.reads == reads)
    }
}

impl SendVerbs for MockVerbs {
    type Wr = MockWr;

    fn status_text(&self, status: u32, vendor_err: u32) -> String {
        status_name(status, vendor_err)
    }

    unsafe fn post_send(
        &mut self,
        peer: NodeId,
        chain: &mut [MockWr],
    ) -> std::result::Result<(), PostError> {
        let refused = self
            .refuse_at
            .take()
            .map(|at| at.min(chain.len().saturating_sub(1)));
        let qp = self.qps.get_mut(&peer).expect("a queue pair to every peer");
        for wr in &chain[..refused.unwrap_or(chain.len())] {
            assert_eq!(decode(wr.wr_id).0, peer, "every request names its peer");
            let r = Accepted {
                at: qp.accepted,
                wr: *wr,
            };
            qp.accepted += 1;
            qp.queue.push_back(r);
            qp.unreaped.push_back(r);
        }
        match refused {
            Some(posted) => {
                self.refusals.insert(peer);
                Err(PostError {
                    errno: libc::ENOMEM,
                    posted,
                })
            }
            None => Ok(()),
        }
    }

    fn poll_send(&mut self, out: &mut [Wc]) -> usize {
        if out.is_empty() {
            return 0;
        }
        // The device keeps working while the caller polls: with nothing to report, one
        // to three requests execute.
        if self.cq.is_empty() {
            let k = self.rng.gen_range(1..=3);
            self.run(k);
        }
        let most = self.rng.gen_range(1..=out.len());
        let mut n = 0;
        while n < most {
            let Some((peer, at, wc)) = self.cq.pop_front() else {
                break;
            };
            // A completion polled reaps its request and, in posting order, every earlier
            // one on its queue pair (they executed before it); in any order, only itself.
            let qp = self.qps.get_mut(&peer).expect("a queue pair to every peer");
            if self.order == MockOrder::Posted {
                while qp.unreaped.front().is_some_and(|r| r.at <= at) {
                    qp.unreaped.pop_front();
                }
            } else {
                qp.unreaped.retain(|r| r.at != at);
            }
            if wc.status == SUCCESS {
                self.succeeded.push(wc.wr_id);
            } else {
                *self.errors_polled.entry(peer).or_default() += 1;
                self.failed.push(wc.wr_id);
            }
            out[n] = wc;
            n += 1;
        }
        n
    }

    fn enter_error_state(&mut self, peer: NodeId) {
        if let Some(qp) = self.qps.get_mut(&peer) {
            qp.error = true;
        }
    }
}

/// A tracker for node 9 with queue pairs to `peers`, only the last request of a chain signaled.
fn tracker(peers: &[NodeId]) -> SendTracker {
    tracker_signaling(peers, Signaling::Last)
}

fn tracker_signaling(peers: &[NodeId], signaling: Signaling) -> SendTracker {
    let mut t = SendTracker::new("mock", 9, signaling);
    for &p in peers {
        t.add_peer(p);
    }
    t
}

/// What the endpoint's post_write (`Chain::Write`) and post_notify (`Chain::Notify`) do,
/// with the mock: admit the chain, stage (here: check that no request the device may
/// still read reads the slot or the entry about to be staged), build the chain from the
/// admitted ids, post it. Returns the id the endpoint would.
fn send(t: &mut SendTracker, m: &mut MockVerbs, to: NodeId, chain: Chain) -> Result<u64> {
    let admitted = t.admit(m, to, chain)?;
    let mut wrs = Vec::new();
    if let Chain::Write { slot, .. } = chain {
        assert!(
            !m.reading(to, Reads::Slot(slot)),
            "slot {slot} of node {to} restaged while a request reads it"
        );
        for i in 0..SLOT_WRITE_WRS as usize {
            let (wr_id, signaled) = admitted.request(i);
            wrs.push(MockWr {
                wr_id,
                signaled,
                reads: Reads::Slot(slot),
            });
        }
    }
    if let Some((_, entry)) = admitted.notification {
        assert!(
            !m.reading(to, Reads::Entry(entry)),
            "entry {entry} of node {to} restaged while a request reads it"
        );
        let (wr_id, signaled) = admitted.request(wrs.len());
        wrs.push(MockWr {
            wr_id,
            signaled,
            reads: Reads::Entry(entry),
        });
    }
    // SAFETY: the mock's requests name no memory.
    unsafe { t.post(m, &admitted, wrs.as_mut_slice())? };
    Ok(admitted.id)
}

/// Polls completions until the mock has nothing left to execute or report; returns the
/// ids of the writes that finished.
fn drain(t: &mut SendTracker, m: &mut MockVerbs) -> Vec<u64> {
    let mut got = Vec::new();
    for _ in 0..1_000_000 {
        while let Some(c) = t.poll_completion(m) {
            got.push(c.wr_id);
        }
        if m.idle() {
            return got;
        }
    }
    panic!("the mock never drained");
}

/// Whether a failure's message names `peer` as the node a request went to.
fn names(message: &str, peer: NodeId) -> bool {
    message.contains(&format!(" to node {peer} "))
}

const PEERS: usize = 3;
const SLOTS: usize = 4;

/// One step of a random run.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// post_write into a slot of a peer, with a notification or without.
    Write {
        to: NodeId,
        slot: usize,
        notify: bool,
    },
    /// post_notify to a peer, `times` in a row (a long run fills its window).
    Notify { to: NodeId, times: usize },
    /// poll_completion, as the caller does.
    Poll,
    /// The device executes up to `k` requests; their completions wait to be polled.
    Run { k: usize },
    /// The next request executed on the queue pair to a peer fails.
    Fail { to: NodeId },
    /// The next post is refused at its request `at` (at most its last).
    Refuse { at: usize },
}

fn op() -> impl Strategy<Value = Op> {
    proptest::prop_oneof![
        8 => (0..PEERS, 0..SLOTS, any::<bool>())
            .prop_map(|(to, slot, notify)| Op::Write { to, slot, notify }),
        4 => (0..PEERS, 1..4usize).prop_map(|(to, times)| Op::Notify { to, times }),
        1 => (0..PEERS).prop_map(|to| Op::Notify { to, times: 70 }),
        3 => Just(Op::Poll),
        4 => (1..12usize).prop_map(|k| Op::Run { k }),
        1 => (0..PEERS).prop_map(|to| Op::Fail { to }),
        1 => (0..4usize).prop_map(|at| Op::Refuse { at }),
    ]
}

/// Every peer whose error completion was polled, or whose post the verbs refused, is
/// named by exactly one failure, of the right kind; no other peer is named.
fn check_failures(t: &SendTracker, m: &MockVerbs) {
    for p in 0..PEERS {
        let naming: Vec<_> = t.failures().iter().filter(|f| names(&f.1, p)).collect();
        let errors = m.errors_polled.get(&p).copied().unwrap_or(0);
        let refused = m.refusals.contains(&p);
        assert_eq!(
            naming.len(),
            usize::from(errors > 0 || refused),
            "node {p}: {naming:?} ({errors} error completions polled, a post refused: {refused})"
        );
        if let Some(f) = naming.first() {
            if refused {
                assert_eq!(f.0, TransportFault::Device, "{}", f.1);
                assert!(f.1.contains("posting to node"), "{}", f.1);
            } else {
                // The first error a queue pair reports is the failed request's; the
                // flushes come after it.
                assert_eq!(f.0, TransportFault::PeerLost, "{}", f.1);
                assert!(f.1.contains(&status_name(RETRY_EXC_ERR, 0)), "{}", f.1);
            }
        }
    }
}

/// A post as the caller makes it: after its peer failed it is refused and reaches no
/// queue pair; when it fails, a failure names the peer.
fn post_checked(
    t: &mut SendTracker,
    m: &mut MockVerbs,
    to: NodeId,
    chain: Chain,
    ids: &mut BTreeSet<u64>,
) {
    let failed_before = t.failures().iter().any(|f| names(&f.1, to));
    let accepted = m.qps[&to].accepted;
    match send(t, m, to, chain) {
        Ok(id) => {
            assert!(
                !failed_before,
                "a post to node {to} went out after it failed"
            );
            assert!(ids.insert(id), "id {id} handed out twice");
        }
        Err(e) => {
            if failed_before {
                assert_eq!(e.transport_fault(), Some(TransportFault::PeerLost), "{e}");
                assert_eq!(
                    m.qps[&to].accepted, accepted,
                    "a request reached the queue pair of failed node {to}"
                );
            }
            assert!(
                t.failures().iter().any(|f| names(&f.1, to)),
                "a post to node {to} failed with no failure naming it: {e}"
            );
        }
    }
}

/// Runs `ops` against a tracker and the mock (seeded with `seed`), then drains, checking
/// the four properties of the send side: requests executed in posting order with only the
/// last of a chain signaled (verbs), or in any order with every one signaled (libfabric).
fn run_scenario(seed: u64, ops: &[Op], signaling: Signaling) {
    let peers: Vec<NodeId> = (0..PEERS).collect();
    let order = match signaling {
        Signaling::Last => MockOrder::Posted,
        Signaling::Every => MockOrder::Any,
    };
    let mut m = MockVerbs::ordered(seed, &peers, order);
    let mut t = tracker_signaling(&peers, signaling);
    let mut ids = BTreeSet::new();
    let mut got = Vec::new();
    for &op in ops {
        match op {
            Op::Write { to, slot, notify } => {
                post_checked(&mut t, &mut m, to, Chain::Write { slot, notify }, &mut ids);
            }
            Op::Notify { to, times } => {
                for _ in 0..times {
                    post_checked(&mut t, &mut m, to, Chain::Notify, &mut ids);
                }
            }
            Op::Poll => got.extend(t.poll_completion(&mut m).map(|c| c.wr_id)),
            Op::Run { k } => m.run(k),
            Op::Fail { to } => m.qps.get_mut(&to).expect("a peer").fail_next = true,
            Op::Refuse { at } => m.refuse_at = Some(at),
        }
        check_failures(&t, &m);
    }
    got.extend(drain(&mut t, &mut m));
    check_failures(&t, &m);
    for &p in &peers {
        // Every chain finished: completed, failed or flushed.
        assert_eq!(t.in_flight(p), 0, "chains to node {p} left in flight");
        if !t.failures().iter().any(|f| names(&f.1, p)) {
            assert!(
                m.qps[&p].unreaped.is_empty(),
                "requests to node {p} never reaped"
            );
        }
    }
    // One completion per chain whose final request succeeded and no request of which
    // failed, with the id its post returned; none for parts, for failed or flushed requests,
    // or for posts that were refused.
    let failed: BTreeSet<u64> = m.failed.iter().map(|&wr| decode(wr).2).collect();
    let mut want: Vec<u64> = m
        .succeeded
        .iter()
        .filter(|&&wr| {
            if signaling == Signaling::Last {
                assert_ne!(decode(wr).1, WrKind::Part, "an unsignaled part completed");
            }
            decode(wr).1 != WrKind::Part && !failed.contains(&decode(wr).2)
        })
        .map(|&wr| decode(wr).2)
        .collect();
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, want);
    assert!(
        got.windows(2).all(|w| w[0] < w[1]),
        "a write completed twice"
    );
    assert!(
        got.iter().all(|id| ids.contains(id)),
        "a completion of no post"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(256))]

    /// Writes and notifications to three peers, interleaved at random with polls, the
    /// device's progress, failed requests and refused posts: (1) no notification entry
    /// or slot is staged while a request that reads it may still be read by the device
    /// (its completion, or a later one on its queue pair, not yet polled); (2) every
    /// failure (an error completion, a refused post) reaches the caller naming its peer,
    /// once per peer; (3) every final request that succeeded gives exactly one
    /// completion, with its post's id, and nothing else does; (4) after a peer failed,
    /// posts to it are refused before they reach its queue pair.
    #[test]
    fn no_staging_is_rewritten_in_flight_and_every_failure_names_its_peer_once(
        seed in any::<u64>(),
        ops in proptest::collection::vec(op(), 1..300),
    ) {
        run_scenario(seed, &ops, Signaling::Last);
    }

    /// The same four properties where requests complete in any order (a libfabric
    /// provider) and every request of a chain is signaled.
    #[test]
    fn out_of_order_completions_with_every_request_signaled_keep_the_same_properties(
        seed in any::<u64>(),
        ops in proptest::collection::vec(op(), 1..300),
    ) {
        run_scenario(seed, &ops, Signaling::Every);
    }
}

/// Why a fabric that completes out of order needs every request signaled: with only the
/// last one signaled, the footer completing first retires the chain while its payload is
/// still to be read, and the next write to the slot restages it under the provider.
#[test]
#[should_panic(expected = "restaged while a request reads it")]
fn the_last_request_alone_signaled_is_not_enough_out_of_order() {
    let mut m = MockVerbs::ordered(1, &[1], MockOrder::Newest);
    let mut t = tracker_signaling(&[1], Signaling::Last);
    let write = Chain::Write {
        slot: 0,
        notify: false,
    };
    send(&mut t, &mut m, 1, write).unwrap();
    // the newest request, the chain's signaled footer, executes first and is polled
    while t.poll_completion(&mut m).is_none() {}
    send(&mut t, &mut m, 1, write).unwrap();
}

/// Every request signaled, in the same worst order: the second write waits until the first
/// chain's every request has completed.
#[test]
fn every_request_signaled_waits_for_the_whole_chain_out_of_order() {
    let mut m = MockVerbs::ordered(1, &[1], MockOrder::Newest);
    let mut t = tracker_signaling(&[1], Signaling::Every);
    let write = Chain::Write {
        slot: 0,
        notify: true,
    };
    let first = send(&mut t, &mut m, 1, write).unwrap();
    let second = send(&mut t, &mut m, 1, write).unwrap();
    let done = drain(&mut t, &mut m);
    assert_eq!(done, [first, second]);
    assert!(m.qps[&1].unreaped.is_empty());
}

#[test]
fn an_admitted_chain_signals_only_its_last_request_and_every_id_names_peer_and_kind() {
    let mut m = MockVerbs::new(6, &[1, 2]);
    let mut t = tracker(&[1, 2]);
    let w = t
        .admit(
            &mut m,
            1,
            Chain::Write {
                slot: 300,
                notify: true,
            },
        )
        .unwrap();
    assert_eq!((w.to, w.requests, w.notification), (1, 4, Some((0, 0))));
    for i in 0..3 {
        assert_eq!(w.request(i), (encode(1, WrKind::Part, w.id), false));
    }
    let last = (encode(1, WrKind::Write(slot_tag(300)), w.id), true);
    assert_eq!(w.request(3), last);
    assert_eq!(w.final_id, last.0);
    let plain = t
        .admit(
            &mut m,
            1,
            Chain::Write {
                slot: 7,
                notify: false,
            },
        )
        .unwrap();
    assert_eq!((plain.requests, plain.notification), (3, None));
    assert_eq!(plain.request(2), (plain.final_id, true));
    assert!(!plain.request(1).1);
    let n = t.admit(&mut m, 1, Chain::Notify).unwrap();
    assert_eq!((n.requests, n.notification), (1, Some((1, 1))));
    assert_eq!(n.request(0), (encode(1, WrKind::Notify, n.id), true));
    // Notification numbers and entries are per peer; request ids are the endpoint's.
    let other = t.admit(&mut m, 2, Chain::Notify).unwrap();
    assert_eq!(other.notification, Some((0, 0)));
    assert_eq!([w.id, plain.id, n.id, other.id], [1, 2, 3, 4]);
    // A node without a queue pair is an error, not a panic.
    assert!(t.admit(&mut m, 5, Chain::Notify).is_err());
}

#[test]
fn the_65th_chain_to_a_peer_waits_until_the_oldest_has_completed() {
    let mut m = MockVerbs::new(5, &[0]);
    let mut t = tracker(&[0]);
    for _ in 0..STAGED_ENTRIES {
        send(&mut t, &mut m, 0, Chain::Notify).unwrap();
    }
    assert_eq!(t.in_flight(0), STAGED_ENTRIES);
    assert!(
        m.succeeded.is_empty(),
        "nothing was polled while there was room"
    );
    // The 65th restages entry 0: it polls until the chain that read it was reaped (send
    // checks it against the mock).
    send(&mut t, &mut m, 0, Chain::Notify).unwrap();
    assert!(!m.succeeded.is_empty());
    assert_eq!(decode(m.succeeded[0]).2, 1, "the oldest completed first");
    assert!(t.in_flight(0) <= STAGED_ENTRIES);
    // One queue pair: every chain completes, in posting order.
    let all: Vec<u64> = (1..=STAGED_ENTRIES as u64 + 1).collect();
    assert_eq!(drain(&mut t, &mut m), all);
}

#[test]
fn a_failed_part_names_its_peer_once_and_its_write_never_completes() {
    let mut m = MockVerbs::new(1, &[0, 1, 2]);
    let mut t = tracker(&[0, 1, 2]);
    let ok = send(
        &mut t,
        &mut m,
        1,
        Chain::Write {
            slot: 0,
            notify: true,
        },
    )
    .unwrap();
    m.qps.get_mut(&2).unwrap().fail_next = true;
    send(
        &mut t,
        &mut m,
        2,
        Chain::Write {
            slot: 0,
            notify: true,
        },
    )
    .unwrap();
    send(&mut t, &mut m, 2, Chain::Notify).unwrap();
    assert_eq!(drain(&mut t, &mut m), vec![ok]);
    // The header's WRITE failed; the two WRITEs and the notification after it, and the
    // next chain, were flushed: five error completions, one failure.
    assert_eq!(m.errors_polled[&2], 5);
    let failures = t.failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    let (fault, message) = &failures[0];
    assert_eq!(*fault, TransportFault::PeerLost);
    assert!(
        message.contains("part of a write to node 2 ")
            && message.contains(&status_name(RETRY_EXC_ERR, 0)),
        "{message}"
    );
    assert_eq!(t.in_flight(2), 0, "flushed chains retire");
    let e = send(&mut t, &mut m, 2, Chain::Notify).unwrap_err();
    assert_eq!(e.transport_fault(), Some(TransportFault::PeerLost));
    assert!(e.to_string().contains("failed earlier"), "{e}");
    assert_eq!(
        m.qps[&2].accepted, 5,
        "nothing more reached the failed queue pair"
    );
    // Other peers go on.
    let more = send(&mut t, &mut m, 0, Chain::Notify).unwrap();
    assert_eq!(drain(&mut t, &mut m), vec![more]);
}

#[test]
fn a_post_refused_part_way_counts_what_went_out_and_gives_the_peer_up_once() {
    let mut m = MockVerbs::new(2, &[0, 1, 2]);
    let mut t = tracker(&[0, 1, 2]);
    m.refuse_at = Some(2);
    let e = send(
        &mut t,
        &mut m,
        1,
        Chain::Write {
            slot: 3,
            notify: true,
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("posting to node 1 failed after 2 of 4 requests"),
        "{e}"
    );
    assert_eq!(m.qps[&1].accepted, 2);
    assert!(
        m.qps[&1].error,
        "to the error state: what went out is flushed"
    );
    // Refused at its first request: nothing went out.
    m.refuse_at = Some(0);
    let e = send(&mut t, &mut m, 2, Chain::Notify)
        .unwrap_err()
        .to_string();
    assert!(e.contains("failed after 0 of 1 requests"), "{e}");
    assert_eq!(m.qps[&2].accepted, 0);
    // Node 0 goes on; the two requests that went out to node 1 are flushed, and do not
    // name it again.
    let ok = send(
        &mut t,
        &mut m,
        0,
        Chain::Write {
            slot: 1,
            notify: false,
        },
    )
    .unwrap();
    assert_eq!(drain(&mut t, &mut m), vec![ok]);
    assert_eq!(m.errors_polled[&1], 2);
    let failures = t.failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(failures.iter().all(|f| f.0 == TransportFault::Device));
    assert!(names(&failures[0].1, 1) && names(&failures[1].1, 2));
    let e = send(&mut t, &mut m, 1, Chain::Notify).unwrap_err();
    assert_eq!(e.transport_fault(), Some(TransportFault::PeerLost));
    assert_eq!(
        m.qps[&1].accepted, 2,
        "nothing more reached node 1's queue pair"
    );
}

#[test]
fn teardown_reaps_every_chain_in_flight_then_moves_every_queue_pair_to_error() {
    let peers: [NodeId; 3] = [0, 1, 2];
    let mut m = MockVerbs::new(3, &peers);
    let mut t = tracker(&peers);
    for to in peers {
        for slot in 0..3 {
            let chain = Chain::Write {
                slot,
                notify: slot == 1,
            };
            send(&mut t, &mut m, to, chain).unwrap();
        }
    }
    assert_eq!(t.teardown(&mut m, Duration::from_secs(2)), 0);
    for to in peers {
        assert_eq!(t.in_flight(to), 0);
        let qp = &m.qps[&to];
        assert!(
            qp.queue.is_empty() && qp.unreaped.is_empty(),
            "node {to}: everything reaped before the queue pair went to error"
        );
        assert!(qp.error);
    }
    assert!(m.errors_polled.is_empty(), "nothing was flushed");
    // The writes finished: their completions wait for the caller.
    assert_eq!(std::iter::from_fn(|| t.poll_completion(&mut m)).count(), 9);
}

#[test]
fn teardown_abandons_a_silent_peer_at_its_deadline_and_never_waits_for_a_failed_one() {
    let peers: [NodeId; 3] = [0, 1, 2];
    let mut m = MockVerbs::new(4, &peers);
    let mut t = tracker(&peers);
    send(&mut t, &mut m, 0, Chain::Notify).unwrap();
    send(&mut t, &mut m, 1, Chain::Notify).unwrap();
    send(
        &mut t,
        &mut m,
        1,
        Chain::Write {
            slot: 0,
            notify: false,
        },
    )
    .unwrap();
    m.refuse_at = Some(2);
    send(
        &mut t,
        &mut m,
        2,
        Chain::Write {
            slot: 0,
            notify: true,
        },
    )
    .unwrap_err();
    // Nodes 1 and 2 go silent: their requests never complete.
    m.qps.get_mut(&1).unwrap().stalled = true;
    m.qps.get_mut(&2).unwrap().stalled = true;
    let started = Instant::now();
    assert_eq!(
        t.teardown(&mut m, Duration::from_millis(50)),
        2,
        "node 1's two chains are abandoned; node 2 failed and is not waited for"
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(50) && took < Duration::from_secs(2),
        "{took:?}"
    );
    assert_eq!(t.in_flight(0), 0, "node 0's chain was reaped");
    assert!(
        m.qps.values().all(|q| q.error),
        "every queue pair went to error, the silent ones too"
    );
}
