//! Decentralized peers learn under every driver: each setting trains SVM over a ring-based
//! graph in the simulator and with real threads exchanging parameters through one-sided
//! writes; every peer finishes every iteration and peer 0's loss falls.

use bench_core::data::Rcv1Shape;
use bench_core::driver::sim::{self, SimConfig};
use bench_core::driver::threads::{self, ThreadsConfig};
use bench_core::driver::{ComputeModel, NetworkModel};
use bench_core::metrics::{objective_span, RunRecords};
use bench_core::protocol::peer::{PeerMode, PeerSettings};
use bench_core::straggler::{RandomSlowdown, StragglerConfig};
use bench_core::topology::TopologyKind;
use bench_core::workload::{Loss, PeerLearning, SvmConfig, SvmSgd, Workload};
use std::sync::Arc;

const PEERS: usize = 6;
const ITERS: u64 = 30;

fn learning(serial: bool) -> Arc<PeerLearning<dyn Workload>> {
    let mut shape = Rcv1Shape::with_rows(2400);
    shape.features = 2000;
    let d = shape.generate(5);
    let cfg = SvmConfig {
        loss: Loss::Log,
        lambda: 1e-6,
        eta0: 10.0,
        batch: 16,
    };
    let w: Arc<dyn Workload> =
        Arc::new(SvmSgd::new(cfg, d.slice_rows(0..2000), d.slice_rows(2000..2400)).unwrap());
    Arc::new(PeerLearning::new(w).serial(serial))
}

fn settings() -> Vec<PeerSettings> {
    let s = |mode, max_i| PeerSettings {
        serial: false,
        mode,
        max_i,
        iterations: ITERS,
        skip: None,
    };
    vec![
        s(PeerMode::Standard, None),
        s(PeerMode::NotifyAck, None),
        s(PeerMode::Backup { backups: 1 }, Some(3)),
        s(PeerMode::Staleness { s: 3 }, None),
        PeerSettings {
            serial: true,
            ..s(PeerMode::Standard, None)
        },
    ]
}

fn stragglers() -> StragglerConfig {
    StragglerConfig {
        slow: vec![],
        jitter_sigma: 0.2,
        production: None,
        random: Some(RandomSlowdown {
            factor: 4.0,
            probability: None,
        }),
        trace: None,
    }
}

const COMPUTE: ComputeModel = ComputeModel {
    ns_per_example: 20_000.0,
    measured: false,
};

fn check(r: &RunRecords, what: &str) {
    assert_eq!(r.iterations.len() as u64, PEERS as u64 * ITERS, "{what}");
    let first = r.progress.first().unwrap().loss;
    let last = r.progress.last().unwrap().loss;
    assert!(last < 0.95 * first, "{what}: loss {first} -> {last}");
    // The training objective at the first evaluation (log loss F(0) = ln 2) and the last.
    let (f0, f1) = objective_span(&r.progress).expect("a training objective at both ends");
    assert!((f0 - std::f64::consts::LN_2).abs() < 1e-12, "{what}: {f0}");
    assert!(f1 < f0, "{what}: objective {f0} -> {f1}");
}

#[test]
fn every_setting_learns_under_sim_and_threads() {
    let g = TopologyKind::RingBased.build(PEERS).unwrap();
    for s in settings() {
        let cfg = SimConfig {
            network: NetworkModel::default(),
            compute: COMPUTE,
            eval_every: PEERS as u64 * 5,
            max_events: 10_000_000,
            iteration_ns: None,
            wire_bytes: None,
        };
        let a = sim::run(
            s.build(&g).unwrap(),
            &*learning(s.serial),
            &cfg,
            &stragglers(),
            3,
            &mut sim::NoObserver,
        )
        .unwrap();
        check(&a, &format!("sim {}", s.label()));
        let b = sim::run(
            s.build(&g).unwrap(),
            &*learning(s.serial),
            &cfg,
            &stragglers(),
            3,
            &mut sim::NoObserver,
        )
        .unwrap();
        assert_eq!(a, b, "sim is deterministic");
        let t = threads::run(
            s.build(&g).unwrap(),
            learning(s.serial),
            &ThreadsConfig {
                compute: COMPUTE,
                ring_depth: 64,
                eval_every: PEERS as u64 * 5,
                stall_timeout_ms: 20_000,
            },
            &stragglers(),
            3,
        )
        .unwrap();
        check(&t, &format!("threads {}", s.label()));
    }
}
