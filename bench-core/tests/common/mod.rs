//! What several integration tests of bench-core share.

use bench_core::driver::sim::SimConfig;
use bench_core::driver::{ComputeModel, NetworkModel};
use bench_core::straggler::{SlowWorker, StragglerConfig};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// A random simulated cluster for a model check of `workers` workers: latency, bandwidth,
/// jitter and compute speed drawn from `rng`, with up to two slow workers and per-clock
/// compute jitter.
pub fn random_cluster(rng: &mut ChaCha8Rng, workers: usize) -> (SimConfig, StragglerConfig) {
    let cfg = SimConfig {
        network: NetworkModel {
            latency_ns: rng.gen_range(0..50_000),
            bandwidth_gbps: rng.gen_range(0.01..100.0),
            latency_jitter_ns: rng.gen_range(0..100_000),
            links: Vec::new(),
            hosts: None,
            // Per-message software cost (ASYNC's Spark dispatch), under every invariant too.
            send_overhead_ns: rng.gen_range(0..20_000),
        },
        compute: ComputeModel {
            ns_per_example: rng.gen_range(1.0..100_000.0),
            measured: false,
        },
        eval_every: 0,
        max_events: 10_000_000,
        iteration_ns: None,
        wire_bytes: None,
    };
    let slow = (0..rng.gen_range(0..=2))
        .map(|_| SlowWorker {
            worker: rng.gen_range(0..workers),
            factor: rng.gen_range(0.2..10.0),
        })
        .collect();
    let stragglers = StragglerConfig {
        slow,
        jitter_sigma: rng.gen_range(0.0..1.5),
        production: None,
        random: None,
        trace: None,
    };
    (cfg, stragglers)
}
