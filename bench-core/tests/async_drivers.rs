//! The ASYNC family under every driver: SGD, ASGD, SAGA and ASAGA learn least squares, the
//! simulator is deterministic, and the history broadcast costs no parameter bytes.

use bench_core::data::RandomDesign;
use bench_core::driver::sim::{self, SimConfig};
use bench_core::driver::threads::{self, ThreadsConfig};
use bench_core::driver::{ComputeModel, NetworkModel};
use bench_core::metrics::RunRecords;
use bench_core::protocol::coord::{BarrierPredicate, Collect};
use bench_core::protocol::AsyncSpec;
use bench_core::straggler::{SlowWorker, StragglerConfig};
use bench_core::workload::{AsyncLearning, AsyncLearningConfig, LeastSquares, Method};
use std::sync::Arc;

const WORKERS: usize = 4;
const ROUNDS: u64 = 40;

fn learning(method: Method, sync: bool) -> Arc<AsyncLearning> {
    let data = RandomDesign {
        rows: 2000,
        features: 30,
        density: 1.0,
        nonnegative: false,
        label_noise: 0.1,
    }
    .generate(5);
    let problem = Arc::new(LeastSquares::new(data).unwrap());
    let opt = problem.optimum(1e-10, 1000).unwrap().objective;
    let step = match method {
        Method::Sgd => 8.0,
        Method::Saga => 4.0,
    };
    let cfg = AsyncLearningConfig {
        method,
        step: if sync { step } else { step / WORKERS as f64 },
        decay: method == Method::Sgd,
        staleness_lr: false,
        sampling_rate: 0.1,
        seed: 11,
    };
    Arc::new(AsyncLearning::new(problem, cfg, opt).unwrap())
}

fn spec(sync: bool) -> AsyncSpec {
    AsyncSpec {
        workers: WORKERS,
        tasks: ROUNDS * WORKERS as u64,
        barrier: if sync {
            BarrierPredicate::Bsp
        } else {
            BarrierPredicate::Asp
        },
        collect: if sync { Collect::Round } else { Collect::Each },
    }
}

fn stragglers() -> StragglerConfig {
    StragglerConfig {
        slow: vec![SlowWorker {
            worker: 1,
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

fn run_sim(method: Method, sync: bool, seed: u64) -> RunRecords {
    let cfg = SimConfig {
        network: NetworkModel::default(),
        compute: COMPUTE,
        eval_every: WORKERS as u64,
        max_events: 1_000_000,
        iteration_ns: None,
        wire_bytes: None,
    };
    sim::run(
        spec(sync).build().unwrap(),
        &*learning(method, sync),
        &cfg,
        &stragglers(),
        seed,
        &mut sim::NoObserver,
    )
    .unwrap()
}

fn run_threads(method: Method, sync: bool) -> RunRecords {
    let cfg = ThreadsConfig {
        compute: COMPUTE,
        ring_depth: 4,
        eval_every: WORKERS as u64,
        stall_timeout_ms: 10_000,
    };
    threads::run(
        spec(sync).build().unwrap(),
        learning(method, sync),
        &cfg,
        &stragglers(),
        1,
    )
    .unwrap()
}

fn check_learns(r: &RunRecords, what: &str) {
    let first = r.progress.first().unwrap().loss;
    let last = r.progress.last().unwrap().loss;
    assert!(
        first > 0.0 && last >= -1e-6,
        "{what}: errors {first} -> {last}"
    );
    assert!(last < 0.2 * first, "{what}: error {first} -> {last}");
    assert_eq!(r.iterations.len() as u64, ROUNDS * WORKERS as u64, "{what}");
    assert_eq!(r.waits.len() as u64, ROUNDS * WORKERS as u64, "{what}");
}

#[test]
fn every_method_learns_under_every_driver() {
    for method in [Method::Sgd, Method::Saga] {
        for sync in [true, false] {
            let what = format!("{method:?} sync={sync}");
            check_learns(&run_sim(method, sync, 3), &format!("sim {what}"));
            check_learns(&run_threads(method, sync), &format!("threads {what}"));
        }
    }
}

#[test]
fn sim_runs_are_deterministic_and_asgd_beats_sgd_with_a_straggler() {
    let a = run_sim(Method::Sgd, false, 9);
    let b = run_sim(Method::Sgd, false, 9);
    assert_eq!(a, b);
    let sync = run_sim(Method::Sgd, true, 9);
    // The straggler is 2x slower: the synchronous run is gated by it, the asynchronous not.
    assert!(
        a.makespan < sync.makespan,
        "{} vs {}",
        a.makespan,
        sync.makespan
    );
    let mean_wait =
        |r: &RunRecords| r.waits.iter().map(|w| w.wait as f64).sum::<f64>() / r.waits.len() as f64;
    assert!(mean_wait(&a) < mean_wait(&sync));
    // ASGD results arrive stale; SGD's never.
    assert!(a.iterations.iter().any(|r| r.staleness > 0));
    assert!(sync.iterations.iter().all(|r| r.staleness == 0));
}

/// SAGA needs the model version of every row's historical gradient. The history broadcast
/// sends only IDs and the worker holds those versions, so a SAGA run sends exactly the bytes
/// of the SGD run with the same schedule: not one parameter byte for the history.
#[test]
fn history_broadcast_of_held_versions_sends_no_parameter_bytes() {
    for sync in [true, false] {
        let sgd = run_sim(Method::Sgd, sync, 4);
        let saga = run_sim(Method::Saga, sync, 4);
        assert_eq!(sgd.bytes_sent, saga.bytes_sent, "sync={sync}");
        assert_eq!(sgd.makespan, saga.makespan, "same schedule, sync={sync}");
        assert_ne!(
            sgd.progress.last().unwrap().loss,
            saga.progress.last().unwrap().loss,
            "the history changed the updates"
        );
    }
}
