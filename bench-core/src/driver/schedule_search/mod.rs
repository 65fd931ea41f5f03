//! Seeded schedule search for Hop's Table 1: many simulator runs of a peer setting with random
//! latencies, jitter and stragglers, every iteration gap checked against its bound.

mod gap_observer;

pub use gap_observer::GapObserver;

use crate::driver::sim::{self, SimConfig};
use crate::driver::{ComputeModel, NetworkModel};
use crate::error::Result;
use crate::learning::ControlOnly;
use crate::protocol::peer::{GapBound, PeerSettings};
use crate::straggler::{SlowWorker, StragglerConfig};
use crate::topology::{shortest_path_lengths, Topology};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What a search found for one setting on one graph.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GapReport {
    /// Schedules run.
    pub schedules: u64,
    /// Largest `Iter(i) - Iter(j)` over all pairs and schedules.
    pub max_observed_gap: u64,
    /// Largest finite Table 1 bound over all pairs (None: some pair is unbounded).
    pub bound: Option<u64>,
    /// Observations above a pair's bound, over all schedules.
    pub violations: u64,
    /// Ordered pairs whose bound some schedule reached, of `pairs` with a finite bound.
    pub pairs_at_bound: usize,
    /// Ordered pairs `i != j` with a finite bound.
    pub pairs: usize,
    /// The largest finite bound was reached by some pair.
    pub max_bound_reached: bool,
    /// First violations seen, for the report.
    pub examples: Vec<String>,
}

/// Runs `schedules` seeded schedules of `settings` on `topology` (seed `seed + k` for the k-th).
///
/// Each schedule draws a latency (1 us to 1 ms) with jitter up to the latency, a compute time
/// per iteration (10 us to 1 ms) with log-normal jitter (sigma up to 1.5), and with probability
/// 0.8 one or two stragglers 2 to 50 times slower: slow nodes are what open the gaps.
///
/// # Errors
/// A protocol violation or deadlock in any schedule (with the schedule's seed in the context).
pub fn explore(
    settings: &PeerSettings,
    topology: &Topology,
    schedules: u64,
    seed: u64,
) -> Result<GapReport> {
    let n = topology.nodes();
    let paths = shortest_path_lengths(topology);
    let mut total = GapObserver::new(settings, &paths);
    for k in 0..schedules {
        let s = seed.wrapping_add(k);
        let mut rng = ChaCha8Rng::seed_from_u64(s);
        let latency = rng.gen_range(1_000..1_000_000u64);
        let cfg = SimConfig {
            network: NetworkModel {
                latency_ns: latency,
                bandwidth_gbps: 10.0,
                latency_jitter_ns: rng.gen_range(0..=latency),
                links: vec![],
                hosts: None,
                send_overhead_ns: 0,
            },
            compute: ComputeModel {
                ns_per_example: rng.gen_range(10_000.0..1_000_000.0),
                measured: false,
            },
            eval_every: 0,
            max_events: 50_000_000,
            iteration_ns: None,
            wire_bytes: None,
        };
        let mut slow = Vec::new();
        if rng.gen_bool(0.8) {
            for _ in 0..rng.gen_range(1..=2) {
                let worker = rng.gen_range(0..n);
                if slow.iter().all(|w: &SlowWorker| w.worker != worker) {
                    slow.push(SlowWorker {
                        worker,
                        factor: rng.gen_range(2.0..50.0),
                    });
                }
            }
        }
        let stragglers = StragglerConfig {
            slow,
            jitter_sigma: rng.gen_range(0.0..1.5),
            production: None,
            random: None,
            trace: None,
        };
        let mut obs = GapObserver::new(settings, &paths);
        sim::run(
            settings.build(topology)?,
            &ControlOnly { batch: 1 },
            &cfg,
            &stragglers,
            s,
            &mut obs,
        )
        .map_err(|e| crate::CoreError::Protocol {
            node: 0,
            message: format!(
                "{} on {} schedule seed {s}: {e}",
                settings.label(),
                topology.name()
            ),
        })?;
        for i in 0..n {
            for j in 0..n {
                total.max_gap[i][j] = total.max_gap[i][j].max(obs.max_gap[i][j]);
            }
        }
        total.violation_count += obs.violation_count;
        for (t, i, j, g) in obs.violations {
            if total.violations.len() < 4 {
                total.violations.push((t, i, j, g));
            }
        }
    }
    let mut bound = Some(0u64);
    let mut pairs = 0;
    let mut max_observed = 0;
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            max_observed = max_observed.max(total.max_gap[i][j]);
            match total.bound(i, j) {
                GapBound::Finite(b) => {
                    pairs += 1;
                    bound = bound.map(|x| x.max(b));
                }
                GapBound::Unbounded => bound = None,
            }
        }
    }
    let max_bound_reached = bound.is_some_and(|b| {
        (0..n).any(|i| {
            (0..n).any(|j| {
                i != j && total.bound(i, j) == GapBound::Finite(b) && total.max_gap[i][j] == b
            })
        })
    });
    Ok(GapReport {
        schedules,
        max_observed_gap: max_observed,
        bound,
        violations: total.violation_count,
        pairs_at_bound: total.pairs_at_bound(),
        pairs,
        max_bound_reached,
        examples: total
            .violations
            .iter()
            .map(|(t, i, j, g)| {
                format!(
                    "t={t} ns: Iter({i}) - Iter({j}) = {g} > {:?}",
                    total.bound(*i, *j)
                )
            })
            .collect(),
    })
}
