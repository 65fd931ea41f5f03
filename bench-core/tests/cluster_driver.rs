//! The cluster driver with its ranks as threads of this test (the control plane and the
//! transport are real TCP on loopback; only the processes are shared): the same parameter-server
//! scenario the other drivers run gives the threads driver's schema on every rank, several runs
//! share one session, and a rank whose node fails stops every rank with an error naming it.

use bench_core::data::Rcv1Shape;
use bench_core::driver::cluster::{self, ClusterTransport, RankSpec, Session};
use bench_core::driver::threads::{self, ThreadsConfig};
use bench_core::driver::ComputeModel;
use bench_core::error::{CoreError, Result};
use bench_core::metrics::RunRecords;
use bench_core::protocol::ps::modes::BspBackup;
use bench_core::protocol::{Action, Input, Nanos, NodeId, Protocol, ProtocolSpec, Role, SyncMode};
use bench_core::straggler::StragglerConfig;
use bench_core::workload::{Loss, SvmConfig, SvmSgd, Workload};
use std::sync::Arc;
use std::time::Duration;

fn workload() -> Arc<dyn Workload> {
    let mut shape = Rcv1Shape::with_rows(1200);
    shape.features = 2048;
    let d = shape.generate(3);
    let cfg = SvmConfig {
        loss: Loss::Hinge,
        lambda: 1e-4,
        eta0: 20.0,
        batch: 16,
    };
    Arc::new(SvmSgd::new(cfg, d.slice_rows(0..1000), d.slice_rows(1000..1200)).unwrap())
}

fn stragglers() -> StragglerConfig {
    StragglerConfig {
        slow: vec![],
        jitter_sigma: 0.1,
        production: None,
        random: None,
        trace: None,
    }
}

const CFG: ThreadsConfig = ThreadsConfig {
    compute: ComputeModel {
        ns_per_example: 10_000.0,
        measured: false,
    },
    ring_depth: 16,
    eval_every: 20,
    stall_timeout_ms: 5_000,
};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn spec(rank: usize, size: usize, port: u16) -> RankSpec {
    RankSpec {
        rank,
        size,
        root: format!("127.0.0.1:{port}").parse().unwrap(),
        token: 0x5eed,
        timeout: Duration::from_secs(10),
        startup: Duration::from_secs(10),
        source: "test".into(),
    }
}

/// Runs `body` on `size` ranks, each a thread with its own session; results by rank.
fn on_ranks<T: Send + 'static>(
    size: usize,
    body: impl Fn(usize, &mut Session) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let port = free_port();
    let body = Arc::new(body);
    let handles: Vec<_> = (0..size)
        .map(|rank| {
            let body = body.clone();
            std::thread::spawn(move || {
                let mut s = Session::connect(spec(rank, size, port)).unwrap();
                body(rank, &mut s)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn ps(mode: SyncMode) -> Vec<Box<dyn Protocol>> {
    ProtocolSpec {
        mode,
        workers: 4,
        iterations: 20,
    }
    .build()
    .unwrap()
}

#[test]
fn every_mode_on_four_ranks_matches_the_threads_schema() {
    every_mode_on_four_ranks(ClusterTransport::Tcp);
}

#[test]
fn every_mode_on_four_ranks_over_shared_memory() {
    every_mode_on_four_ranks(ClusterTransport::Shm);
}

fn every_mode_on_four_ranks(transport: ClusterTransport) {
    let modes = [
        SyncMode::bsp(),
        SyncMode::asp(),
        SyncMode::ssp(2),
        SyncMode::essp(2),
        SyncMode::bsp_backup(1),
    ];
    let per_rank: Vec<Vec<RunRecords>> = on_ranks(4, move |_, s| {
        modes
            .iter()
            .map(|&m| {
                cluster::run(s, transport, ps(m), workload(), &CFG, &stragglers(), 1).unwrap()
            })
            .collect()
    });
    for (i, &mode) in modes.iter().enumerate() {
        let r = &per_rank[0][i];
        // Every rank goes on with the same records.
        for other in &per_rank[1..] {
            assert_eq!(&other[i], r, "{mode:?}");
        }
        let t = threads::run(ps(mode), workload(), &CFG, &stragglers(), 1).unwrap();
        assert_eq!(r.bytes_sent.len(), t.bytes_sent.len());
        match mode {
            SyncMode::BspBackup(BspBackup { backups }) => assert_eq!(
                r.iterations.len() as u64,
                (4 - backups) as u64 * 20 + r.dropped_updates
            ),
            _ => assert_eq!(r.iterations.len(), t.iterations.len(), "{mode:?}"),
        }
        if let Some(s) = mode.bound() {
            assert!(r.iterations.iter().all(|x| x.staleness <= s), "{mode:?}");
        }
        if mode == SyncMode::bsp() {
            assert!(r.iterations.iter().all(|x| x.staleness == 0));
        }
        let (first, last) = (r.progress.first().unwrap(), r.progress.last().unwrap());
        assert!(
            last.loss < first.loss,
            "{mode:?}: {} -> {}",
            first.loss,
            last.loss
        );
        assert!(r.bytes_sent.iter().all(|&b| b > 0), "{mode:?}");
        // Workers 0..4 ran on ranks 1, 2, 3, 0 (node = worker + 1): all of them are in.
        let mut workers: Vec<usize> = r.iterations.iter().map(|x| x.worker).collect();
        workers.dedup();
        workers.sort();
        workers.dedup();
        assert_eq!(workers, vec![0, 1, 2, 3], "{mode:?}");
    }
}

/// A protocol that fails at its `after`-th input.
struct FailsAfter {
    inner: Box<dyn Protocol>,
    after: usize,
}

impl Protocol for FailsAfter {
    fn node(&self) -> NodeId {
        self.inner.node()
    }
    fn role(&self) -> Role {
        self.inner.role()
    }
    fn handle(&mut self, now: Nanos, input: Input) -> Result<()> {
        if self.after == 0 {
            return Err(CoreError::Protocol {
                node: self.node(),
                message: "injected failure".into(),
            });
        }
        self.after -= 1;
        self.inner.handle(now, input)
    }
    fn poll_action(&mut self) -> Option<Action> {
        self.inner.poll_action()
    }
    fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }
    fn waiting_on(&self) -> String {
        self.inner.waiting_on()
    }
}

#[test]
fn a_failing_rank_stops_every_rank_with_its_name() {
    let results = on_ranks(3, |rank, s| {
        let nodes: Vec<Box<dyn Protocol>> = ps(SyncMode::bsp())
            .into_iter()
            .map(|p| -> Box<dyn Protocol> {
                // Node 2 lives on rank 2; it fails after a few messages.
                if rank == 2 && p.node() == 2 {
                    Box::new(FailsAfter { inner: p, after: 6 })
                } else {
                    p
                }
            })
            .collect();
        let t0 = std::time::Instant::now();
        let r = cluster::run(
            s,
            ClusterTransport::Tcp,
            nodes,
            workload(),
            &CFG,
            &stragglers(),
            1,
        );
        (r, t0.elapsed())
    });
    for (rank, (r, took)) in results.into_iter().enumerate() {
        let e = r.unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, CoreError::Cluster { rank: 2, .. }),
            "rank {rank}: {text}"
        );
        assert!(text.contains("injected failure"), "rank {rank}: {text}");
        assert!(text.contains("node(s) 2"), "rank {rank}: {text}");
        // Well before the 5 s stall timeout: the stop is signalled, not waited out.
        assert!(took < Duration::from_secs(4), "rank {rank} took {took:?}");
    }
}

#[test]
fn ranks_with_different_configurations_are_refused() {
    let results = on_ranks(2, |rank, s| {
        cluster::run(
            s,
            ClusterTransport::Tcp,
            ps(SyncMode::bsp()),
            workload(),
            &CFG,
            &stragglers(),
            1 + rank as u64,
        )
        .map(|_| ())
    });
    for r in results {
        let e = r.unwrap_err().to_string();
        assert!(e.contains("different configuration"), "{e}");
    }
}

#[test]
fn a_stranger_at_the_root_is_rejected_and_the_job_goes_on() {
    let port = free_port();
    let stranger = std::thread::spawn(move || {
        // Knock until rank 0 listens, then send a handshake with the wrong token.
        for _ in 0..200 {
            if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
                use std::io::Write;
                let words = [0x5342_4354_4c00_0001u64, 0xbad, 1, 2];
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                let _ = s.write_all(&bytes);
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    });
    // Rank 1 arrives late, after the stranger.
    let root = std::thread::spawn(move || Session::connect(spec(0, 2, port)).map(|_| ()));
    assert!(stranger.join().unwrap());
    std::thread::sleep(Duration::from_millis(100));
    let member = Session::connect(spec(1, 2, port)).map(|_| ());
    assert!(member.is_ok(), "{member:?}");
    assert!(root.join().unwrap().is_ok());
}

/// ASAP's receive-buffer reduce on 3 ranks: every mode runs (BSP through the cluster barrier),
/// NOTIFY-ACK reduces only whole, current buffers, every rank gets the same records, and the
/// learning progresses.
#[test]
fn receive_buffer_reduce_on_three_ranks() {
    for transport in [ClusterTransport::Tcp, ClusterTransport::Shm] {
        receive_buffer_reduce(transport);
    }
}

/// The parameter-server modes and the receive-buffer reduce over libfabric, on each provider
/// Debian's libfabric brings that runs on any machine. One test sets the provider for the
/// ranks (which read `SYNCBENCH_OFI_PROVIDER`), so none other reads it meanwhile.
///
/// Quarantined: ASP's held-out loss rises over its run (1 -> 1.02 and 1 -> 1.50) in 2 of 25 runs
/// here (2026-12-04, the 2-core dev VM, other tests running beside it), on shm and on sockets;
/// the tcp and shm transports never show it. An open bug of the ofi backend, or ASP's unbounded
/// staleness under the progress threads' timing: not found yet. The other failure seen before,
/// a SIGSEGV in libfabric's `pthread_spin_trylock` (shm's progress touching a same-process peer's
/// region after that peer closed), has not recurred in those 25 runs since endpoints of one
/// process close in step (`transport::ofi::closing`). `.ci/run` still runs it three times and
/// prints how many passed, without failing on it, so the rate shows in every CI log.
#[cfg(feature = "ofi")]
#[test]
#[ignore = "intermittent on libfabric (ASP's loss rising, about 1 run in 12 under load): an open bug of the ofi backend; .ci/run reports its pass rate"]
fn every_mode_and_the_receive_buffer_reduce_over_libfabric() {
    for provider in ["tcp;ofi_rxm", "shm", "sockets"] {
        std::env::set_var("SYNCBENCH_OFI_PROVIDER", provider);
        every_mode_on_four_ranks(ClusterTransport::Ofi);
        receive_buffer_reduce(ClusterTransport::Ofi);
    }
}

fn receive_buffer_reduce(transport: ClusterTransport) {
    use bench_core::driver::buffered::{self, BufferedConfig, BufferedSetup};
    use bench_core::driver::NetworkModel;
    use bench_core::protocol::buffered::ReduceSync;
    use bench_core::topology::TopologyKind;
    {
        let per_rank = on_ranks(3, move |_, s| {
            let topo = TopologyKind::Complete.build(6).unwrap();
            let cfg = BufferedConfig {
                iterations: 15,
                eval_every: 5,
                compute: ComputeModel {
                    ns_per_example: 20_000.0,
                    measured: false,
                },
                network: NetworkModel::default(),
                copy_gbps: 5.0,
                stall_timeout_ms: 10_000,
                async_reads: Default::default(),
                start_spread_ns: 0,
            };
            let w = workload();
            let st = stragglers();
            [ReduceSync::Bsp, ReduceSync::Async, ReduceSync::NotifyAck]
                .into_iter()
                .map(|mode| {
                    let setup = BufferedSetup {
                        topology: &topo,
                        mode,
                        workload: w.clone(),
                        stragglers: &st,
                        eval_node: 0,
                        seed: 1,
                    };
                    (
                        mode,
                        buffered::cluster::run(s, transport, &cfg, &setup).unwrap(),
                    )
                })
                .collect::<Vec<_>>()
        });
        for (i, (mode, r)) in per_rank[0].iter().enumerate() {
            for other in &per_rank[1..] {
                assert_eq!(other[i].1.reduces, r.reduces, "{transport:?} {mode:?}");
            }
            // 6 peers x 15 reduces, each peer reading its 5 in-neighbours.
            assert_eq!(r.reduces.len(), 90, "{transport:?} {mode:?}");
            assert!(r.reduces.iter().all(|x| x.inputs_expected == 5));
            if *mode == ReduceSync::NotifyAck {
                assert!(
                    r.reduces
                        .iter()
                        .all(|x| x.inputs_consistent == 5 && x.inputs_current == 5),
                    "{transport:?}: NOTIFY-ACK reduced a torn or stale buffer"
                );
            }
            let (first, last) = (r.progress.first().unwrap(), r.progress.last().unwrap());
            assert!(last.loss < first.loss, "{transport:?} {mode:?}");
        }
    }
}

/// Rings of one slot: every message needs the receiver to have handled the one before it, so
/// only credit-based flow control keeps the runs from overrunning rings (over tcp, frames land
/// as soon as they arrive). Every mode completes under the cluster and threads drivers.
#[test]
fn one_slot_rings_never_overrun() {
    let cfg = ThreadsConfig {
        ring_depth: 1,
        ..CFG
    };
    let modes = [SyncMode::asp(), SyncMode::essp(3), SyncMode::bsp_backup(1)];
    let per_rank = on_ranks(3, move |_, s| {
        modes
            .iter()
            .map(|&m| {
                cluster::run(
                    s,
                    ClusterTransport::Tcp,
                    ps(m),
                    workload(),
                    &cfg,
                    &stragglers(),
                    2,
                )
                .map(|r| r.iterations.len())
            })
            .collect::<Vec<_>>()
    });
    for (i, &mode) in modes.iter().enumerate() {
        let n = per_rank[0][i]
            .as_ref()
            .unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        assert!(*n >= 60, "{mode:?}: {n} iterations");
        let t = threads::run(ps(mode), workload(), &cfg, &stragglers(), 2)
            .unwrap_or_else(|e| panic!("threads {mode:?}: {e}"));
        assert!(t.iterations.len() >= 60);
    }
}

#[test]
fn row_tables_with_two_shards_on_three_ranks() {
    use bench_core::data::RatingsShape;
    use bench_core::protocol::table::TableSpec;
    use bench_core::workload::{MatrixFactorization, MfConfig, MfTables};
    let tables = || {
        let shape = RatingsShape {
            users: 80,
            items: 40,
            ratings: 4000,
            rank: 3,
            noise: 0.1,
            popularity_exponent: 1.0,
        };
        let all = shape.generate(4);
        let (test, train) = all.split_at(400);
        let cfg = MfConfig {
            rank: 3,
            lambda: 0.01,
            step: 0.05,
            minibatch_fraction: 0.05,
            init_scale: 0.3,
            init_seed: 1,
        };
        let mf = MatrixFactorization::new(cfg, 80, 40, train.to_vec(), test.to_vec()).unwrap();
        Arc::new(MfTables::new(Arc::new(mf), 4, 2).unwrap())
    };
    let modes = [SyncMode::bsp(), SyncMode::essp(2)];
    let per_rank: Vec<Vec<RunRecords>> = on_ranks(3, move |_, s| {
        modes
            .iter()
            .map(|&mode| {
                let t = tables();
                let nodes = TableSpec {
                    mode,
                    workers: 4,
                    shards: 2,
                    clocks: 12,
                    access: t.clone(),
                }
                .build()
                .unwrap();
                cluster::run(s, ClusterTransport::Tcp, nodes, t, &CFG, &stragglers(), 1).unwrap()
            })
            .collect()
    });
    for (i, &mode) in modes.iter().enumerate() {
        let r = &per_rank[0][i];
        // Debug text: with two shards the loss is NaN, never equal to itself.
        assert_eq!(
            format!("{:?}", per_rank[1][i]),
            format!("{r:?}"),
            "{mode:?}"
        );
        assert_eq!(r.iterations.len(), 4 * 12, "{mode:?}");
        // Every clock of every worker recorded its row reads, within the bound.
        let mut clocks: Vec<(usize, u64)> =
            r.row_reads.iter().map(|x| (x.worker, x.clock)).collect();
        clocks.dedup();
        assert_eq!(clocks.len(), 4 * 12, "{mode:?}");
        let s = mode.bound().unwrap() as i64;
        assert!(
            r.row_reads
                .iter()
                .all(|x| (-1 - s..=-1).contains(&x.differential)),
            "{mode:?}"
        );
    }
}
