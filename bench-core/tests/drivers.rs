//! The same parameter-server scenario under every driver: each finishes every iteration with
//! the mode's staleness guarantee, and the learning makes progress.

use bench_core::data::Rcv1Shape;
use bench_core::driver::sim::{self, SimConfig};
use bench_core::driver::threads::{self, ThreadsConfig};
use bench_core::driver::{ComputeModel, NetworkModel};
use bench_core::metrics::{objective_span, RunRecords};
use bench_core::protocol::ps::modes::BspBackup;
use bench_core::protocol::{ProtocolSpec, SyncMode};
use bench_core::straggler::{SlowWorker, StragglerConfig};
use bench_core::workload::{Loss, SvmConfig, SvmSgd, Workload};
use std::sync::Arc;

fn workload() -> Arc<dyn Workload> {
    let mut shape = Rcv1Shape::with_rows(2400);
    shape.features = 4096;
    let d = shape.generate(3);
    let cfg = SvmConfig {
        loss: Loss::Hinge,
        lambda: 1e-4,
        eta0: 20.0,
        batch: 16,
    };
    Arc::new(SvmSgd::new(cfg, d.slice_rows(0..2000), d.slice_rows(2000..2400)).unwrap())
}

fn stragglers() -> StragglerConfig {
    StragglerConfig {
        slow: vec![SlowWorker {
            worker: 0,
            factor: 2.0,
        }],
        jitter_sigma: 0.1,
        production: None,
        random: None,
        trace: None,
    }
}

const COMPUTE: ComputeModel = ComputeModel {
    ns_per_example: 20_000.0,
    measured: false,
};

fn run_sim(mode: SyncMode, seed: u64) -> RunRecords {
    let spec = ProtocolSpec {
        mode,
        workers: 4,
        iterations: 30,
    };
    let cfg = SimConfig {
        network: NetworkModel::default(),
        compute: COMPUTE,
        eval_every: 20,
        max_events: 1_000_000,
        iteration_ns: None,
        wire_bytes: None,
    };
    sim::run(
        spec.build().unwrap(),
        &*workload(),
        &cfg,
        &stragglers(),
        seed,
        &mut sim::NoObserver,
    )
    .unwrap()
}

fn run_threads(mode: SyncMode) -> RunRecords {
    let spec = ProtocolSpec {
        mode,
        workers: 4,
        iterations: 30,
    };
    let cfg = ThreadsConfig {
        compute: COMPUTE,
        ring_depth: 16,
        eval_every: 20,
        stall_timeout_ms: 5_000,
    };
    threads::run(spec.build().unwrap(), workload(), &cfg, &stragglers(), 1).unwrap()
}

fn check(r: &RunRecords, mode: SyncMode, driver: &str) {
    match mode {
        SyncMode::BspBackup(BspBackup { backups }) => {
            // 3 of 4 updates complete each of the 30 clocks; late ones are dropped
            let needed = (4 - backups) as u64 * 30;
            assert_eq!(
                r.iterations.len() as u64,
                needed + r.dropped_updates,
                "{driver}"
            );
        }
        _ => assert_eq!(r.iterations.len(), 120, "{driver} {mode:?}"),
    }
    if let Some(s) = mode.bound() {
        let worst = r.iterations.iter().map(|x| x.staleness).max().unwrap();
        assert!(worst <= s, "{driver} {mode:?}: staleness {worst} > {s}");
    }
    if mode == SyncMode::bsp() {
        assert!(r.iterations.iter().all(|x| x.staleness == 0), "{driver}");
    }
    let first = r.progress.first().unwrap().loss;
    let last = r.progress.last().unwrap().loss;
    assert!(last < first, "{driver} {mode:?}: loss {first} -> {last}");
    assert!(r.bytes_sent.iter().sum::<u64>() > 0);
    // The training objective at the first evaluation (the zero model: hinge F(0) = 1) and at
    // the last, below it, and at no other.
    let (f0, f1) = objective_span(&r.progress).expect("a training objective at both ends");
    assert_eq!(f0, 1.0, "{driver} {mode:?}");
    assert!(f1 < f0, "{driver} {mode:?}: objective {f0} -> {f1}");
    let inner = &r.progress[1..r.progress.len() - 1];
    assert!(
        inner.iter().all(|p| p.train_objective.is_none()),
        "{driver}"
    );
}

#[test]
fn every_mode_under_every_driver() {
    for mode in [
        SyncMode::bsp(),
        SyncMode::asp(),
        SyncMode::ssp(2),
        SyncMode::essp(2),
        SyncMode::dssp(1, 3),
        SyncMode::bsp_backup(1),
        SyncMode::asp_pull(),
        SyncMode::ssp_pull(2),
    ] {
        check(&run_sim(mode, 1), mode, "sim");
        check(&run_threads(mode), mode, "threads");
    }
}

fn csv_bytes(r: &RunRecords) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(vec![]);
    for row in &r.iterations {
        w.serialize(row).unwrap();
    }
    let mut out = w.into_inner().unwrap();
    let mut w = csv::Writer::from_writer(vec![]);
    for row in &r.progress {
        w.serialize(row).unwrap();
    }
    out.extend(w.into_inner().unwrap());
    out
}

#[test]
fn sim_same_seed_same_bytes_other_seed_other_bytes() {
    let mode = SyncMode::ssp(2);
    let a = csv_bytes(&run_sim(mode, 5));
    let b = csv_bytes(&run_sim(mode, 5));
    let c = csv_bytes(&run_sim(mode, 6));
    assert_eq!(a, b);
    assert_ne!(a, c);
}
