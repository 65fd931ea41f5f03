//! The measured tiers' suite: transport and simulator numbers taken beside an in-run
//! reference, repeated in rounds.
//!
//! One round measures everything once, in a fixed order: memcpy, the transports' own word copy
//! run bare (`perf::word_copy`, the reference of their ratios: the same instructions, so a
//! shared machine's memory contention moves both alike, where glibc's non-temporal memcpy
//! moves differently) and the threads and shm transports' 4 MiB one-sided writes
//! (page-aligned, through an 8-slot ring), a raw loopback
//! socket and the tcp transport streaming 1 MiB messages, a cache-line ping-pong and the threads
//! and shm transports' 2-byte notification latency, the simulator's events per second (a
//! 64-worker SSP(3) run with a counting workload, so the event loop itself is measured) and a
//! calibration loop of the same kind of work (a binary heap's pushes and pops). Every
//! bandwidth and rate is the best of three runs (noise on a shared machine only ever slows a
//! run down, so the best is the stable statistic); latencies are medians of 2,000. Rounds
//! interleave the metrics, so a slow minute of a shared machine lands on every metric alike
//! instead of on one.
//!
//! Each round gives one sample of every absolute number (Gb/s, ns, events/s) and of every
//! ratio (transport over its reference). The ratio tier gates on the ratios, which a shared or
//! hosted machine's speed moves much less than the absolute numbers; the absolute tier compares
//! only on the testbed the baseline was taken on.

use super::inject::{Injection, SlowCopy};
use anyhow::{Context, Result};
use bench_core::driver::sim::{self, SimConfig};
use bench_core::driver::{ComputeModel, NetworkModel};
use bench_core::protocol::{ProtocolSpec, SyncMode};
use bench_core::straggler::StragglerConfig;
use bench_core::transport::perf;
use bench_core::transport::shm::{self, ShmFabric};
use bench_core::transport::tcp::TcpFabric;
use bench_core::transport::threads::ThreadsFabric;
use bench_core::transport::Endpoint;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BinaryHeap};
use std::time::{Duration, Instant};

/// Which tier a metric belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A ratio to an in-run reference: gated everywhere.
    Ratio,
    /// An absolute number: gated only on the baseline's testbed.
    Absolute,
}

/// Which direction is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Bandwidth, throughput.
    Higher,
    /// Latency.
    Lower,
}

/// One metric of the suite.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// Its name (`backend/what[/reference]`).
    pub name: &'static str,
    /// Its unit.
    pub unit: &'static str,
    /// The tier.
    pub kind: Kind,
    /// Which way is better.
    pub better: Better,
    /// The relative change of the median that counts (0.15: 15% worse). Set from
    /// base-against-base comparisons on the development machine (`make regress-selftest`,
    /// docs/regression.md): 15% for copies and rates, 30% for latencies (a median of 2,000 round trips moves
    /// in steps of 5 to 10 ns on 60 to 200 ns), 40% for loopback tcp, whose ratio to the raw
    /// socket moved by more than 25% twice in a row between two unchanged measurements.
    pub tolerance: f64,
}

use Better::{Higher, Lower};
use Kind::{Absolute, Ratio};

/// Every metric, ratios first.
pub const METRICS: &[Metric] = &[
    Metric {
        name: "threads/write-4MiB/word-copy",
        unit: "x",
        kind: Ratio,
        better: Higher,
        tolerance: 0.15,
    },
    Metric {
        name: "shm/write-4MiB/word-copy",
        unit: "x",
        kind: Ratio,
        better: Higher,
        tolerance: 0.15,
    },
    Metric {
        name: "tcp/stream-1MiB/raw-socket",
        unit: "x",
        kind: Ratio,
        better: Higher,
        tolerance: 0.40,
    },
    Metric {
        name: "threads/notify-2B/cache-line",
        unit: "x",
        kind: Ratio,
        better: Lower,
        tolerance: 0.30,
    },
    Metric {
        name: "shm/notify-2B/cache-line",
        unit: "x",
        kind: Ratio,
        better: Lower,
        tolerance: 0.30,
    },
    Metric {
        name: "sim/events/heap-calibration",
        unit: "x",
        kind: Ratio,
        better: Higher,
        tolerance: 0.15,
    },
    Metric {
        name: "rdma/write-4MiB/word-copy",
        unit: "x",
        kind: Ratio,
        better: Higher,
        tolerance: 0.15,
    },
    Metric {
        name: "rdma/notify-2B/cache-line",
        unit: "x",
        kind: Ratio,
        better: Lower,
        tolerance: 0.30,
    },
    Metric {
        name: "memcpy/4MiB",
        unit: "Gb/s",
        kind: Absolute,
        better: Higher,
        tolerance: 0.20,
    },
    Metric {
        name: "word-copy/4MiB",
        unit: "Gb/s",
        kind: Absolute,
        better: Higher,
        tolerance: 0.20,
    },
    Metric {
        name: "threads/write-4MiB",
        unit: "Gb/s",
        kind: Absolute,
        better: Higher,
        tolerance: 0.20,
    },
    Metric {
        name: "shm/write-4MiB",
        unit: "Gb/s",
        kind: Absolute,
        better: Higher,
        tolerance: 0.20,
    },
    Metric {
        name: "raw-socket/stream-1MiB",
        unit: "Gb/s",
        kind: Absolute,
        better: Higher,
        tolerance: 0.25,
    },
    Metric {
        name: "tcp/stream-1MiB",
        unit: "Gb/s",
        kind: Absolute,
        better: Higher,
        tolerance: 0.25,
    },
    Metric {
        name: "cache-line/ping-pong",
        unit: "ns",
        kind: Absolute,
        better: Lower,
        tolerance: 0.30,
    },
    Metric {
        name: "threads/notify-2B",
        unit: "ns",
        kind: Absolute,
        better: Lower,
        tolerance: 0.30,
    },
    Metric {
        name: "shm/notify-2B",
        unit: "ns",
        kind: Absolute,
        better: Lower,
        tolerance: 0.30,
    },
    Metric {
        name: "sim/events",
        unit: "events/s",
        kind: Absolute,
        better: Higher,
        tolerance: 0.20,
    },
    Metric {
        name: "heap-calibration",
        unit: "ops/s",
        kind: Absolute,
        better: Higher,
        tolerance: 0.20,
    },
    Metric {
        name: "rdma/write-4MiB",
        unit: "Gb/s",
        kind: Absolute,
        better: Higher,
        tolerance: 0.20,
    },
    Metric {
        name: "rdma/notify-2B",
        unit: "ns",
        kind: Absolute,
        better: Lower,
        tolerance: 0.30,
    },
];

/// The metric named `name`.
pub fn metric(name: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.name == name)
}

/// Samples of every metric, in round order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Samples {
    /// Rounds measured.
    pub rounds: usize,
    /// Metric name to one sample per round.
    pub values: BTreeMap<String, Vec<f64>>,
}

const BIG: usize = 4 << 20;
const MID: usize = 1 << 20;
const DEPTH: usize = 8;
/// Wall time of one run of the simulator or the calibration loop (the best of [`BEST`] runs
/// counts).
const BUSY: Duration = Duration::from_millis(60);

/// Measures `rounds` rounds of the whole suite, with `inject` applied; `progress` is told
/// after each round.
///
/// # Errors
/// A transport that fails to set up or to deliver (e.g. no /dev/shm, no loopback).
pub fn measure(
    rounds: usize,
    inject: Injection,
    rdma: bool,
    mut progress: impl FnMut(usize),
) -> Result<Samples> {
    let mut s = Samples {
        rounds,
        values: BTreeMap::new(),
    };
    for r in 0..rounds {
        let mut values = round(inject, r as u64)
            .with_context(|| format!("regress: round {} of the measured suite", r + 1))?;
        if rdma {
            values.extend(
                rdma_round(
                    values
                        .iter()
                        .find(|v| v.0 == "word-copy/4MiB")
                        .map_or(1.0, |v| v.1),
                    values
                        .iter()
                        .find(|v| v.0 == "cache-line/ping-pong")
                        .map_or(1.0, |v| v.1),
                )
                .with_context(|| format!("regress: round {} of the measured suite, rdma", r + 1))?,
            );
        }
        for (name, v) in values {
            s.values.entry(name.to_string()).or_default().push(v);
        }
        progress(r + 1);
    }
    Ok(s)
}

fn round(inject: Injection, salt: u64) -> Result<Vec<(&'static str, f64)>> {
    let words = BIG / 8;
    let n_big = 64;
    // Bandwidths are the best of BEST runs: a shared machine's noise only ever slows a copy
    // down, so the best run is the stable statistic (as perftest and criterion's minimum).
    let memcpy = best(|| Ok(perf::memcpy(BIG, n_big, DEPTH).1.average))?;
    let word_copy = best(|| Ok(perf::word_copy(BIG, n_big, DEPTH).average))?;
    let threads_bw = best(|| {
        let mut f = ThreadsFabric::new(2);
        f.register(0, 1, words, DEPTH)?;
        f.register(1, 0, words, DEPTH)?;
        let mut e = f.endpoints();
        let (b, a) = (e.pop().expect("2"), e.pop().expect("2"));
        warm_bandwidth(a, b, words, n_big)
    })?;
    let token = 0x7e57_0000 ^ u64::from(std::process::id()) ^ (salt << 40);
    let mut k = 0;
    let shm_bw = best(|| {
        k += 2;
        let mut f = ShmFabric::new(2, token ^ k, shm::default_dir());
        f.register(0, 1, words, DEPTH)?;
        f.register(1, 0, words, DEPTH)?;
        let mut e = f.endpoints()?;
        let (b, a) = (e.pop().expect("2"), e.pop().expect("2"));
        warm_bandwidth(
            SlowCopy::new(a, inject.shm_copy),
            SlowCopy::new(b, 1.0),
            words,
            n_big,
        )
    })?;
    let n_mid = 128;
    let socket = best(|| Ok(perf::raw_socket(MID, n_mid, 4)?.1.average))?;
    let tcp_bw = best(|| {
        let mut f = TcpFabric::new(2, 0x7e57 ^ salt);
        f.register(0, 1, MID / 8, DEPTH)?;
        f.register(1, 0, MID / 8, DEPTH)?;
        let mut e = f.endpoints()?;
        let (b, a) = (e.pop().expect("2"), e.pop().expect("2"));
        Ok(perf::bandwidth(a, b, MID / 8, n_mid)?.0.average)
    })?;
    let cache_line = perf::cache_line_ping_pong(50_000).median;
    let notify = |a: Box<dyn Endpoint>, b: Box<dyn Endpoint>| -> Result<f64> {
        Ok(perf::latency(a, b, 1, 2_000, 200)?.0.median)
    };
    let threads_lat = {
        let mut f = ThreadsFabric::new(2);
        f.register(0, 1, 1, DEPTH)?;
        f.register(1, 0, 1, DEPTH)?;
        let mut e = f.endpoints();
        let (b, a) = (e.pop().expect("2"), e.pop().expect("2"));
        notify(Box::new(a), Box::new(b))?
    };
    let shm_lat = {
        let mut f = ShmFabric::new(2, token ^ 1, shm::default_dir());
        f.register(0, 1, 1, DEPTH)?;
        f.register(1, 0, 1, DEPTH)?;
        let mut e = f.endpoints()?;
        let (b, a) = (e.pop().expect("2"), e.pop().expect("2"));
        notify(Box::new(SlowCopy::new(a, inject.shm_copy)), Box::new(b))?
    };
    let events = best(sim_events_per_second)?;
    let heap = best(|| Ok(heap_ops_per_second(salt)))?;
    Ok(vec![
        ("threads/write-4MiB/word-copy", threads_bw / word_copy),
        ("shm/write-4MiB/word-copy", shm_bw / word_copy),
        ("tcp/stream-1MiB/raw-socket", tcp_bw / socket),
        (
            "threads/notify-2B/cache-line",
            threads_lat / cache_line.max(1.0),
        ),
        ("shm/notify-2B/cache-line", shm_lat / cache_line.max(1.0)),
        ("sim/events/heap-calibration", events / heap),
        ("memcpy/4MiB", memcpy),
        ("word-copy/4MiB", word_copy),
        ("threads/write-4MiB", threads_bw),
        ("shm/write-4MiB", shm_bw),
        ("raw-socket/stream-1MiB", socket),
        ("tcp/stream-1MiB", tcp_bw),
        ("cache-line/ping-pong", cache_line),
        ("threads/notify-2B", threads_lat),
        ("shm/notify-2B", shm_lat),
        ("sim/events", events),
        ("heap-calibration", heap),
    ])
}

/// The rdma backend's 4 MiB writes and 2-byte notifications, loopback through the device
/// $SYNCBENCH_RDMA_DEVICE names (or the first), over this round's word copy and ping-pong.
#[cfg(feature = "rdma")]
fn rdma_round(word_copy: f64, cache_line: f64) -> Result<Vec<(&'static str, f64)>> {
    let pair = |words: usize| crate::harness::transport_costs::rdma_loopback(words, DEPTH);
    let bw = best(|| {
        let (a, b) = pair(BIG / 8)?;
        warm_bandwidth(a, b, BIG / 8, 64)
    })?;
    let (a, b) = pair(1)?;
    let lat = perf::latency(a, b, 1, 2_000, 200)?.0.median;
    Ok(vec![
        ("rdma/write-4MiB/word-copy", bw / word_copy),
        ("rdma/notify-2B/cache-line", lat / cache_line.max(1.0)),
        ("rdma/write-4MiB", bw),
        ("rdma/notify-2B", lat),
    ])
}

/// Without the rdma feature there is no rdma backend to measure.
#[cfg(not(feature = "rdma"))]
fn rdma_round(_word_copy: f64, _cache_line: f64) -> Result<Vec<(&'static str, f64)>> {
    anyhow::bail!(
        "--require rdma: this build has no rdma backend (build with `cargo build --release --features rdma`)"
    )
}

/// Streaming bandwidth (Gb/s) of `iters` writes of `words` words from `a` to `b`, after one
/// unrecorded pass over every slot of the ring: a fresh fabric's pages are faulted in by its
/// first writes, and in a virtual machine those faults cost more, and vary more, than the
/// copies.
fn warm_bandwidth<E: Endpoint + 'static>(a: E, b: E, words: usize, iters: usize) -> Result<f64> {
    let depth = a.remote_depth(1)?;
    let (_, a, b) = perf::bandwidth(a, b, words, depth)?;
    Ok(perf::bandwidth(a, b, words, iters)?.0.average)
}

/// Runs of each bandwidth per round; the best counts.
const BEST: usize = 3;

fn best(mut f: impl FnMut() -> Result<f64>) -> Result<f64> {
    let mut b = f64::MIN;
    for _ in 0..BEST {
        b = b.max(f()?);
    }
    Ok(b)
}

/// Simulator events per second: 64-worker SSP(3) runs of 100 clocks with a counting workload
/// (the event loop, the network model and the protocol, no learning), repeated for `BUSY`.
fn sim_events_per_second() -> Result<f64> {
    let cfg = SimConfig {
        network: NetworkModel::default(),
        compute: ComputeModel {
            ns_per_example: 1000.0,
            measured: false,
        },
        eval_every: 0,
        max_events: u64::MAX,
        iteration_ns: None,
        wire_bytes: None,
    };
    let st = StragglerConfig {
        jitter_sigma: 0.2,
        ..StragglerConfig::default()
    };
    let spec = ProtocolSpec {
        mode: SyncMode::ssp(3),
        workers: 64,
        iterations: 100,
    };
    let (mut events, start) = (0u64, Instant::now());
    while start.elapsed() < BUSY {
        let r = sim::run(
            spec.build()?,
            &bench_core::learning::CountingProbe,
            &cfg,
            &st,
            1,
            &mut sim::NoObserver,
        )?;
        events += r.events;
    }
    Ok(events as f64 / start.elapsed().as_secs_f64())
}

/// The calibration loop: pushes and pops on a binary heap of 4,096 pseudo-random timestamps,
/// as the simulator's event queue does, per second of wall time over `BUSY`.
fn heap_ops_per_second(salt: u64) -> f64 {
    let mut heap: BinaryHeap<std::cmp::Reverse<u64>> = BinaryHeap::with_capacity(4096);
    let mut x = 0x9e37_79b9_7f4a_7c15 ^ salt;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..4096 {
        heap.push(std::cmp::Reverse(next() >> 20));
    }
    let (mut ops, start) = (0u64, Instant::now());
    while start.elapsed() < BUSY {
        for _ in 0..10_000 {
            let std::cmp::Reverse(t) = heap.pop().expect("never empty");
            heap.push(std::cmp::Reverse(t + (next() >> 40)));
        }
        ops += 20_000;
    }
    std::hint::black_box(&heap);
    ops as f64 / start.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_is_consistent() {
        let mut names: Vec<&str> = METRICS.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), METRICS.len(), "unique names");
        for m in METRICS {
            assert!(m.tolerance > 0.0 && m.tolerance < 1.0, "{}", m.name);
            assert_eq!(m.kind == Kind::Ratio, m.unit == "x", "{}", m.name);
        }
        assert!(metric("shm/write-4MiB/word-copy").is_some());
        assert!(metric("nope").is_none());
    }

    /// Whether a metric is measured only with `--require rdma`.
    fn needs_rdma(name: &str) -> bool {
        name.starts_with("rdma/")
    }

    #[test]
    fn one_round_measures_every_metric_once() {
        let s = measure(1, Injection::none(), false, |_| {}).unwrap();
        assert_eq!(s.rounds, 1);
        for m in METRICS.iter().filter(|m| !needs_rdma(m.name)) {
            let v = &s.values[m.name];
            assert_eq!(v.len(), 1, "{}", m.name);
            assert!(v[0].is_finite() && v[0] > 0.0, "{}: {}", m.name, v[0]);
        }
        assert_eq!(
            s.values.len(),
            METRICS.len() - 4,
            "all but the four rdma metrics"
        );
    }
}
