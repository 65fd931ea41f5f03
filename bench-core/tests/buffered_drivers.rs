//! ASAP's receive-buffer reduce under both drivers: 8 peers all-reduce (in-degree 7) train SVM
//! while senders overwrite single receive buffers. NOTIFY-ACK must never reduce a torn or stale
//! buffer (its no-overwrite guarantee), under seeded random schedules in the simulator and under
//! real concurrency; the simulator must be deterministic; every mode must learn.

use bench_core::data::Rcv1Shape;
use bench_core::driver::buffered::{
    self, AsyncReads, BufferedConfig, BufferedRecords, BufferedSetup,
};
use bench_core::driver::{ComputeModel, NetworkModel};
use bench_core::protocol::buffered::ReduceSync;
use bench_core::straggler::StragglerConfig;
use bench_core::topology::{Topology, TopologyKind};
use bench_core::workload::{Loss, SvmConfig, SvmSgd, Workload};
use std::sync::Arc;

const PEERS: usize = 8;

fn workload(features: usize) -> Arc<dyn Workload> {
    let mut shape = Rcv1Shape::with_rows(1800);
    shape.features = features;
    let d = shape.generate(3);
    let cfg = SvmConfig {
        loss: Loss::Hinge,
        lambda: 1e-4,
        eta0: 20.0,
        batch: 16,
    };
    Arc::new(SvmSgd::new(cfg, d.slice_rows(0..1600), d.slice_rows(1600..1800)).unwrap())
}

fn config(iterations: u64) -> BufferedConfig {
    BufferedConfig {
        iterations,
        eval_every: 5,
        compute: ComputeModel {
            ns_per_example: 20_000.0,
            measured: false,
        },
        network: NetworkModel::default(),
        copy_gbps: 5.0,
        stall_timeout_ms: 30_000,
        async_reads: AsyncReads::Whole,
        start_spread_ns: 0,
    }
}

fn jitter(sigma: f64) -> StragglerConfig {
    StragglerConfig {
        jitter_sigma: sigma,
        ..StragglerConfig::default()
    }
}

fn run(
    driver: &str,
    mode: ReduceSync,
    topology: &Topology,
    w: &Arc<dyn Workload>,
    cfg: &BufferedConfig,
    stragglers: &StragglerConfig,
    seed: u64,
) -> BufferedRecords {
    let setup = BufferedSetup {
        topology,
        mode,
        workload: w.clone(),
        stragglers,
        eval_node: 0,
        seed,
    };
    match driver {
        "sim" => buffered::sim::run(cfg, &setup),
        _ => buffered::threads::run(cfg, &setup),
    }
    .unwrap_or_else(|e| panic!("{} under {driver}: {e}", mode.label()))
}

#[test]
fn notify_ack_never_reduces_a_torn_or_stale_buffer_in_random_schedules() {
    let topo = TopologyKind::Complete.build(PEERS).unwrap();
    let w = workload(4000);
    let cfg = BufferedConfig {
        eval_every: 0,
        ..config(6)
    };
    for seed in 0..200 {
        let r = run(
            "sim",
            ReduceSync::NotifyAck,
            &topo,
            &w,
            &cfg,
            &jitter(0.8),
            seed,
        );
        assert_eq!(r.reduces.len(), PEERS * 6, "seed {seed}");
        for row in &r.reduces {
            assert_eq!(row.inputs_consistent, 7, "seed {seed}: {row:?}");
            assert_eq!(row.inputs_current, 7, "seed {seed}: {row:?}");
        }
    }
}

#[test]
fn unsynchronized_writes_tear_buffers_in_the_model() {
    // Large buffers on a slow network: writes land for longer than a compute takes, so
    // without synchronization reads overlap landing writes.
    let topo = TopologyKind::Complete.build(PEERS).unwrap();
    let w = workload(40_000);
    let cfg = BufferedConfig {
        network: NetworkModel {
            bandwidth_gbps: 1.0,
            ..NetworkModel::default()
        },
        ..config(10)
    };
    let r = run("sim", ReduceSync::Async, &topo, &w, &cfg, &jitter(0.3), 4);
    assert!(
        r.reduces.iter().any(|x| x.inputs_consistent < 7),
        "no torn buffer at all"
    );
    let na = run(
        "sim",
        ReduceSync::NotifyAck,
        &topo,
        &w,
        &cfg,
        &jitter(0.3),
        4,
    );
    assert_eq!(na.share_full(), 1.0);
}

#[test]
fn the_simulator_is_deterministic() {
    let topo = TopologyKind::Complete.build(PEERS).unwrap();
    let w = workload(4000);
    for mode in ReduceSync::ALL {
        let a = run("sim", mode, &topo, &w, &config(12), &jitter(0.3), 9);
        let b = run("sim", mode, &topo, &w, &config(12), &jitter(0.3), 9);
        assert_eq!(a, b, "{}", mode.label());
    }
}

#[test]
fn every_mode_learns_under_every_driver_and_notify_ack_stays_whole() {
    let topo = TopologyKind::Complete.build(PEERS).unwrap();
    let w = workload(4000);
    for driver in ["sim", "threads"] {
        for mode in ReduceSync::ALL {
            let r = run(driver, mode, &topo, &w, &config(30), &jitter(0.3), 2);
            assert_eq!(r.reduces.len(), PEERS * 30, "{driver} {}", mode.label());
            let first = r.progress.first().unwrap().loss;
            let last = r.progress.last().unwrap().loss;
            assert!(
                last < first,
                "{driver} {}: loss {first} -> {last}",
                mode.label()
            );
            // The training objective at the first evaluation (hinge F(0) = 1) and the last.
            let (f0, f1) = bench_core::metrics::objective_span(&r.progress).unwrap();
            assert!(f0 == 1.0 && f1 < f0, "{driver}: objective {f0} -> {f1}");
            let inner = &r.progress[1..r.progress.len() - 1];
            assert!(inner.iter().all(|p| p.train_objective.is_none()));
            assert_eq!(r.bytes_sent.len(), PEERS);
            assert!(r.bytes_sent.iter().all(|&b| b > 0));
            if mode == ReduceSync::NotifyAck {
                assert_eq!(
                    r.share_full(),
                    1.0,
                    "{driver}: NOTIFY-ACK reduced a torn buffer"
                );
            }
        }
    }
}

#[test]
fn a_sparse_graph_runs_and_reads_only_in_neighbours() {
    let topo = TopologyKind::parse("root-expander")
        .unwrap()
        .build(9)
        .unwrap();
    let w = workload(2000);
    for driver in ["sim", "threads"] {
        let r = run(
            driver,
            ReduceSync::NotifyAck,
            &topo,
            &w,
            &config(8),
            &jitter(0.2),
            1,
        );
        for row in &r.reduces {
            assert_eq!(row.inputs_expected, topo.in_neighbors(row.worker).len());
        }
    }
}

#[test]
fn async_averaging_torn_buffers_reads_the_same_but_learns_differently() {
    // The setting of `unsynchronized_writes_tear_buffers_in_the_model`: torn reads happen.
    let topo = TopologyKind::Complete.build(PEERS).unwrap();
    let w = workload(40_000);
    let whole = BufferedConfig {
        network: NetworkModel {
            bandwidth_gbps: 1.0,
            ..NetworkModel::default()
        },
        ..config(10)
    };
    let as_read = BufferedConfig {
        async_reads: AsyncReads::AsRead,
        ..whole.clone()
    };
    let a = run("sim", ReduceSync::Async, &topo, &w, &whole, &jitter(0.3), 4);
    let b = run(
        "sim",
        ReduceSync::Async,
        &topo,
        &w,
        &as_read,
        &jitter(0.3),
        4,
    );
    // The reads are the same reads (same schedule); only what is averaged differs.
    assert_eq!(a.reduces, b.reduces);
    assert!(a.reduces.iter().any(|x| x.inputs_consistent < 7));
    assert_ne!(
        a.progress.last().unwrap().loss,
        b.progress.last().unwrap().loss,
        "averaging torn buffers changed nothing"
    );
    // The setting is ASYNC's alone: BSP and NOTIFY-ACK always check.
    for mode in [ReduceSync::Bsp, ReduceSync::NotifyAck] {
        let a = run("sim", mode, &topo, &w, &whole, &jitter(0.3), 4);
        let b = run("sim", mode, &topo, &w, &as_read, &jitter(0.3), 4);
        assert_eq!(a, b, "{mode:?}");
    }
    // Under threads the torn words are real; the run completes and reduces every iteration.
    let t = run(
        "threads",
        ReduceSync::Async,
        &topo,
        &w,
        &as_read,
        &jitter(0.3),
        4,
    );
    assert_eq!(t.reduces.len(), PEERS * 10);
}

#[test]
fn start_offsets_are_seeded_and_async_keeps_them() {
    let topo = TopologyKind::Complete.build(PEERS).unwrap();
    let w = workload(4000);
    let cfg = BufferedConfig {
        start_spread_ns: 5_000_000,
        ..config(6)
    };
    let offsets: Vec<u64> = (0..PEERS).map(|i| cfg.start_offset_ns(i, 9)).collect();
    assert!(offsets.iter().all(|&o| o <= 5_000_000));
    assert!(offsets.windows(2).any(|p| p[0] != p[1]), "{offsets:?}");
    assert_ne!(
        offsets,
        (0..PEERS)
            .map(|i| cfg.start_offset_ns(i, 10))
            .collect::<Vec<_>>()
    );
    assert!((0..PEERS).all(|i| config(6).start_offset_ns(i, 9) == 0));
    let a = run("sim", ReduceSync::Async, &topo, &w, &cfg, &jitter(0.0), 9);
    assert_eq!(
        a,
        run("sim", ReduceSync::Async, &topo, &w, &cfg, &jitter(0.0), 9)
    );
    // With no jitter and equal work, an ASYNC peer's first reduce ends its offset after the
    // peer that started first: the offsets stay in the schedule.
    let first = |r: &BufferedRecords, p: usize| {
        r.reduces
            .iter()
            .find(|x| x.worker == p && x.iter == 0)
            .unwrap()
            .time
    };
    let base = offsets.iter().copied().min().unwrap();
    let p0 = offsets.iter().position(|&o| o == base).unwrap();
    for (p, &o) in offsets.iter().enumerate() {
        assert_eq!(first(&a, p) - first(&a, p0), o - base, "peer {p}");
    }
    // Every mode still completes, under both drivers.
    for mode in ReduceSync::ALL {
        for driver in ["sim", "threads"] {
            let r = run(driver, mode, &topo, &w, &cfg, &jitter(0.0), 9);
            assert_eq!(r.reduces.len(), PEERS * 6, "{driver} {mode:?}");
        }
    }
}
