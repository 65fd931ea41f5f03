//! Hot-path benchmarks (run with `make bench`):
//! * `sim_events`: discrete-event simulator throughput (events/s; goal >= 2 M/s) on a
//!   parameter-server run with a trivial workload, so the event loop itself is measured;
//! * `transport_4MiB`: threads- and shm-transport one-sided writes of 4 MiB vs memcpy of the
//!   same size between page-aligned buffers, all in this run, and their bandwidth ratios
//!   (goal >= 0.9). The writes go to the two slots of a ring in turn, so memcpy
//!   copies into two destinations in turn too: both touch 12 MiB, not 12 against 8;
//! * `notify_2B`: a 2-byte write with notification, ping-pong (half a round trip), threads and
//!   shm, beside a cache-line ping-pong in the ratio report (goal <= 3x);
//! * `svm_sgd`: SVM-SGD examples/s on RCV1-shaped data (47,236 features, ~75 nnz/row).

use bench_core::data::Rcv1Shape;
use bench_core::driver::sim::{self, SimConfig};
use bench_core::driver::{ComputeModel, NetworkModel};
use bench_core::protocol::{ProtocolSpec, SyncMode};
use bench_core::straggler::StragglerConfig;
use bench_core::transport::perf;
use bench_core::transport::shm::{self, ShmEndpoint, ShmFabric};
use bench_core::transport::threads::{ThreadsEndpoint, ThreadsFabric};
use bench_core::transport::{AlignedWords, Endpoint};
use bench_core::workload::{Loss, SvmConfig, SvmSgd, Workload};
use criterion::{black_box, criterion_group, BenchmarkId, Criterion, Throughput};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn sim_run(mode: SyncMode) -> u64 {
    let spec = ProtocolSpec {
        mode,
        workers: 64,
        iterations: 100,
    };
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
        slow: vec![],
        jitter_sigma: 0.2,
        production: None,
        random: None,
        trace: None,
    };
    sim::run(
        spec.build().unwrap(),
        &bench_core::learning::CountingProbe,
        &cfg,
        &st,
        1,
        &mut sim::NoObserver,
    )
    .unwrap()
    .events
}

fn sim_events(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim_events");
    for mode in [SyncMode::bsp(), SyncMode::ssp(3), SyncMode::asp()] {
        let events = sim_run(mode);
        g.throughput(Throughput::Elements(events));
        g.bench_function(BenchmarkId::from_parameter(mode.label()), |b| {
            b.iter(|| black_box(sim_run(mode)))
        });
    }
    g.finish();
}

const WORDS_4MIB: usize = 4 * 1024 * 1024 / 8;

fn transport_pair() -> (ThreadsEndpoint, ThreadsEndpoint) {
    let mut f = ThreadsFabric::new(2);
    f.register(0, 1, WORDS_4MIB, 2).unwrap();
    let mut eps = f.endpoints();
    let b = eps.pop().unwrap();
    let a = eps.pop().unwrap();
    (a, b)
}

fn shm_pair(words: usize, tag: u64) -> (ShmEndpoint, ShmEndpoint) {
    let token = 0xbe00 ^ tag ^ (u64::from(std::process::id()) << 20);
    let mut f = ShmFabric::new(2, token, shm::default_dir());
    f.register(0, 1, words, 2).unwrap();
    f.register(1, 0, words, 2).unwrap();
    let mut eps = f.endpoints().unwrap();
    let b = eps.pop().unwrap();
    let a = eps.pop().unwrap();
    (a, b)
}

fn transport_write<E: Endpoint>(a: &mut E, src: &Arc<AlignedWords>, v: u64) {
    a.post_write(1, (v % 2) as usize, v, Some(src.clone()), WORDS_4MIB, None)
        .unwrap();
    while a.poll_completion().is_none() {
        std::hint::spin_loop();
    }
}

/// Two page-aligned destinations, as the transports' two slots, copied into in turn.
struct MemcpyPeer {
    dst: [(Vec<u64>, usize); 2],
    next: usize,
}

impl MemcpyPeer {
    fn new() -> Self {
        MemcpyPeer {
            dst: [aligned_vec(WORDS_4MIB), aligned_vec(WORDS_4MIB)],
            next: 0,
        }
    }

    fn copy(&mut self, src: &[u64]) {
        let (d, off) = &mut self.dst[self.next];
        memcpy_4mib(&mut d[*off..*off + WORDS_4MIB], src);
        self.next ^= 1;
    }
}

fn memcpy_4mib(dst: &mut [u64], src: &[u64]) {
    dst.copy_from_slice(src);
    black_box(dst);
}

/// Page-aligned plain buffer for the memcpy peer.
fn aligned_vec(words: usize) -> (Vec<u64>, usize) {
    let mut v = vec![0u64; words + 512];
    let off = (4096 - (v.as_ptr() as usize % 4096)) % 4096 / 8;
    for (i, w) in v.iter_mut().enumerate() {
        *w = i as u64;
    }
    (v, off)
}

fn transport(c: &mut Criterion) {
    let mut g = c.benchmark_group("transport_4MiB");
    g.throughput(Throughput::Bytes((WORDS_4MIB * 8) as u64));
    let (mut src, so) = aligned_vec(WORDS_4MIB);
    let mut peer = MemcpyPeer::new();
    g.bench_function("memcpy", |b| {
        b.iter(|| peer.copy(&src[so..so + WORDS_4MIB]))
    });
    let (mut a, _b) = transport_pair();
    let tsrc = Arc::new(AlignedWords::from_words(&src[so..so + WORDS_4MIB]));
    let mut v = 0;
    g.bench_function("threads_write", |b| {
        b.iter(|| {
            v += 1;
            transport_write(&mut a, &tsrc, v)
        })
    });
    let (mut sa, _sb) = shm_pair(WORDS_4MIB, 1);
    g.bench_function("shm_write", |b| {
        b.iter(|| {
            v += 1;
            transport_write(&mut sa, &tsrc, v)
        })
    });
    g.finish();
    src[so] = tsrc.as_slice()[0].load(Ordering::Relaxed);
}

/// Ping-pong of 2-byte writes with notification; criterion gets the one-way time per message.
fn notify(c: &mut Criterion) {
    let mut g = c.benchmark_group("notify_2B");
    g.bench_function("threads", |b| {
        b.iter_custom(|iters| {
            let mut f = ThreadsFabric::new(2);
            f.register(0, 1, 1, 2).unwrap();
            f.register(1, 0, 1, 2).unwrap();
            let mut e = f.endpoints();
            let (y, x) = (e.pop().unwrap(), e.pop().unwrap());
            let t = Instant::now();
            perf::latency(x, y, 1, iters as usize, 0).unwrap();
            t.elapsed() / 2
        })
    });
    let mut tag = 10;
    g.bench_function("shm", |b| {
        b.iter_custom(|iters| {
            tag += 1;
            let (x, y) = shm_pair(1, tag);
            let t = Instant::now();
            perf::latency(x, y, 1, iters as usize, 0).unwrap();
            t.elapsed() / 2
        })
    });
    g.finish();
}

fn svm_sgd(c: &mut Criterion) {
    let data = Rcv1Shape::with_rows(20_000).generate(1);
    let cfg = SvmConfig {
        loss: Loss::Hinge,
        lambda: 1e-4,
        eta0: 50.0,
        batch: 64,
    };
    let w = SvmSgd::new(
        cfg,
        data.slice_rows(0..18_000),
        data.slice_rows(18_000..20_000),
    )
    .unwrap();
    let model = vec![0.01f32; w.dim()];
    let mut g = c.benchmark_group("svm_sgd");
    g.throughput(Throughput::Elements(64));
    let mut it = 0;
    g.bench_function("rcv1_shape_batch64", |b| {
        b.iter(|| {
            it += 1;
            black_box(w.update(&model, 0, 1, it))
        })
    });
    g.finish();
}

/// The transport-vs-memcpy bandwidth ratio (goal >= 0.9), measured in one run: alternating
/// repetitions of memcpy and a transport write of 4 MiB, best-of-N bandwidth of each.
fn ratio_report() {
    // The event loop first, before any transport endpoint exists (best of 5 after one warm-up
    // run): its rate without other threads' or buffers' noise.
    sim_run(SyncMode::asp());
    let mut best = f64::MAX;
    let mut events = 0;
    for _ in 0..5 {
        let t = Instant::now();
        events = sim_run(SyncMode::asp());
        best = best.min(t.elapsed().as_secs_f64());
    }
    let sim_rate = events as f64 / best / 1e6;
    {
        let (src, so) = aligned_vec(WORDS_4MIB);
        let mut peer = MemcpyPeer::new();
        let (mut a, _b) = transport_pair();
        let (mut sa, _sb) = shm_pair(WORDS_4MIB, 2);
        let tsrc = Arc::new(AlignedWords::from_words(&src[so..so + WORDS_4MIB]));
        let (mut best_mem, mut best_tr, mut best_shm) =
            (Duration::MAX, Duration::MAX, Duration::MAX);
        for v in 1..=200u64 {
            let t = Instant::now();
            peer.copy(&src[so..so + WORDS_4MIB]);
            best_mem = best_mem.min(t.elapsed());
            let t = Instant::now();
            transport_write(&mut a, &tsrc, v);
            best_tr = best_tr.min(t.elapsed());
            let t = Instant::now();
            transport_write(&mut sa, &tsrc, v);
            best_shm = best_shm.min(t.elapsed());
        }
        let gbps = |d: Duration| (WORDS_4MIB * 8) as f64 / d.as_secs_f64() / 1e9;
        for (name, best) in [("threads", best_tr), ("shm", best_shm)] {
            println!(
                "transport_4MiB ratio: {name} write {:.2} GB/s vs memcpy {:.2} GB/s = {:.2}x memcpy (goal >= 0.9)",
                gbps(best),
                gbps(best_mem),
                gbps(best) / gbps(best_mem)
            );
        }
    }
    // Each notification pair alone (the 4 MiB endpoints above are gone).
    let cl = perf::cache_line_ping_pong(100_000).median;
    for name in ["threads", "shm"] {
        let lat = if name == "threads" {
            let mut f = ThreadsFabric::new(2);
            f.register(0, 1, 1, 2).unwrap();
            f.register(1, 0, 1, 2).unwrap();
            let mut e = f.endpoints();
            let (y, x) = (e.pop().unwrap(), e.pop().unwrap());
            perf::latency(x, y, 1, 20_000, 1_000).unwrap().0.median
        } else {
            let (x, y) = shm_pair(1, 3);
            perf::latency(x, y, 1, 20_000, 1_000).unwrap().0.median
        };
        println!(
            "notify_2B ratio: {name} {lat:.0} ns one way vs cache-line ping-pong {cl:.0} ns = {:.1}x (goal <= 3x)",
            lat / cl
        );
    }
    println!("sim_events (ASP, 64 workers, best of 5): {sim_rate:.2} M events/s (goal >= 2 M/s)");
}

criterion_group!(benches, sim_events, transport, notify, svm_sgd);

fn main() {
    benches();
    ratio_report();
    Criterion::default().configure_from_args().final_summary();
}
