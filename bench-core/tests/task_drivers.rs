//! A generic workload under the ASYNC coordinator ([`TaskLearning`]): a BSP round with mean
//! aggregation is the parameter server's BSP clock with mean aggregation (same model, up to
//! float rounding), ASP learns under both drivers, and the simulator is deterministic.

use bench_core::data::Rcv1Shape;
use bench_core::driver::sim::{self, SimConfig};
use bench_core::driver::threads::{self, ThreadsConfig};
use bench_core::driver::{ComputeModel, NetworkModel};
use bench_core::metrics::RunRecords;
use bench_core::protocol::coord::{BarrierPredicate, Collect};
use bench_core::protocol::{AsyncSpec, ProtocolSpec, SyncMode};
use bench_core::straggler::{SlowWorker, StragglerConfig};
use bench_core::workload::{Aggregation, Loss, SvmConfig, SvmSgd, TaskLearning, Workload};
use std::sync::Arc;

const WORKERS: usize = 4;
const ROUNDS: u64 = 40;

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

fn sim_cfg() -> SimConfig {
    SimConfig {
        network: NetworkModel::default(),
        compute: COMPUTE,
        eval_every: WORKERS as u64,
        max_events: 1_000_000,
        iteration_ns: None,
        wire_bytes: None,
    }
}

fn spec(barrier: BarrierPredicate) -> AsyncSpec {
    AsyncSpec {
        workers: WORKERS,
        tasks: ROUNDS * WORKERS as u64,
        collect: if matches!(barrier, BarrierPredicate::Bsp) {
            Collect::Round
        } else {
            Collect::Each
        },
        barrier,
    }
}

fn learning() -> Arc<TaskLearning> {
    Arc::new(TaskLearning::new(workload(), Aggregation::Mean, false))
}

fn run_coord_sim(barrier: BarrierPredicate, seed: u64) -> RunRecords {
    sim::run(
        spec(barrier).build().unwrap(),
        &*learning(),
        &sim_cfg(),
        &stragglers(),
        seed,
        &mut sim::NoObserver,
    )
    .unwrap()
}

fn last_loss(r: &RunRecords) -> f64 {
    r.progress.last().unwrap().loss
}

/// Averaged mini-batch SGD is averaged mini-batch SGD whichever family runs it: the
/// coordinator's BSP rounds and the parameter server's BSP clocks (both with mean
/// aggregation) compute the same updates from the same models, so their evaluated losses
/// agree at every evaluation up to f32 summation order.
#[test]
fn a_coordinator_bsp_round_is_a_parameter_server_bsp_clock() {
    let coord = run_coord_sim(BarrierPredicate::Bsp, 5);
    let ps = sim::run(
        ProtocolSpec {
            mode: SyncMode::bsp(),
            workers: WORKERS,
            iterations: ROUNDS,
        }
        .build()
        .unwrap(),
        &*Aggregation::Mean.wrap(workload()),
        &sim_cfg(),
        &stragglers(),
        5,
        &mut sim::NoObserver,
    )
    .unwrap();
    assert_eq!(coord.progress.len(), ps.progress.len());
    for (c, p) in coord.progress.iter().zip(&ps.progress) {
        assert_eq!(c.iteration, p.iteration);
        assert!(
            (c.loss - p.loss).abs() <= 1e-4 * p.loss.abs().max(1.0),
            "after {} updates: coordinator {} vs parameter server {}",
            c.iteration,
            c.loss,
            p.loss
        );
    }
    let first = ps.progress.first().unwrap().loss;
    assert!(
        last_loss(&ps) < 0.9 * first,
        "{first} -> {}",
        last_loss(&ps)
    );
}

#[test]
fn asp_learns_under_both_drivers_and_the_simulator_is_deterministic() {
    let a = run_coord_sim(BarrierPredicate::Asp, 9);
    assert_eq!(a, run_coord_sim(BarrierPredicate::Asp, 9));
    let t = threads::run(
        spec(BarrierPredicate::Asp).build().unwrap(),
        learning(),
        &ThreadsConfig {
            compute: COMPUTE,
            ring_depth: 4,
            eval_every: WORKERS as u64,
            stall_timeout_ms: 10_000,
        },
        &stragglers(),
        1,
    )
    .unwrap();
    for (r, what) in [(&a, "sim"), (&t, "threads")] {
        assert_eq!(r.iterations.len() as u64, ROUNDS * WORKERS as u64, "{what}");
        let first = r.progress.first().unwrap().loss;
        assert!(
            last_loss(r) < 0.9 * first,
            "{what}: {first} -> {}",
            last_loss(r)
        );
    }
    // The straggler gates every BSP round, not the asynchronous run.
    let bsp = run_coord_sim(BarrierPredicate::Bsp, 9);
    assert!(
        a.makespan < bsp.makespan,
        "{} vs {}",
        a.makespan,
        bsp.makespan
    );
}

/// Sum aggregation moves the model P times as far per round as mean.
#[test]
fn sum_and_mean_differ_by_the_worker_count() {
    let run = |agg| {
        sim::run(
            spec(BarrierPredicate::Bsp).build().unwrap(),
            &TaskLearning::new(workload(), agg, false),
            &SimConfig {
                eval_every: 1_000_000,
                ..sim_cfg()
            },
            &StragglerConfig::default(),
            1,
            &mut sim::NoObserver,
        )
        .unwrap()
    };
    let (sum, mean) = (run(Aggregation::Sum), run(Aggregation::Mean));
    assert_ne!(last_loss(&sum), last_loss(&mean));
}
