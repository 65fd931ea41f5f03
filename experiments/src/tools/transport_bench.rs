//! `syncbench transport-bench`: perftest-style latency and bandwidth of the transport backends
//! at message sizes from 2 B to 8 MiB, beside memcpy, a raw loopback socket and a cache-line
//! ping-pong measured in the same run, with the ratios to them.

use crate::harness::transport_costs::backend_costs;
use anyhow::{bail, Result};
use bench_core::transport::perf::{self, BandwidthGbps, LatencyNs};
use clap::Args;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Flags of `syncbench transport-bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Backends, comma-separated: threads (in-process copy engines), shm (shared-memory
    /// segments in /dev/shm), tcp (loopback), rdma (builds with `--features rdma`; loopback
    /// through the device named by $SYNCBENCH_RDMA_DEVICE) and ofi (builds with `--features
    /// ofi`; loopback on the libfabric provider $SYNCBENCH_OFI_PROVIDER names).
    #[arg(long, value_delimiter = ',', default_value = "threads,shm,tcp")]
    backends: Vec<String>,
    /// Message sizes in bytes, comma-separated (rounded up to whole 8-byte words on the wire).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "2,64,1024,16384,262144,1048576,4194304,8388608"
    )]
    sizes: Vec<usize>,
    /// Measured iterations per size (fewer for large sizes: at most 256 MiB moved per size).
    #[arg(long, default_value_t = 1000)]
    iters: usize,
    /// Slots per ring; the memcpy baseline copies into as many buffers in turn, so both touch
    /// the same memory (at 4 MiB, 8 slots overflow a 32 MiB cache where 2 do not).
    #[arg(long, default_value_t = 8)]
    depth: usize,
    /// Unrecorded warm-up iterations per size.
    #[arg(long, default_value_t = 50)]
    warmup: usize,
    /// Write one JSON object here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write one CSV row per backend and size here.
    #[arg(long)]
    csv: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
struct Point {
    latency_ns: LatencyNs,
    bandwidth_gbps: BandwidthGbps,
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio_to_memcpy: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio_to_socket: Option<f64>,
    /// ofi: bandwidth over the same provider's own write loop (ofi-raw).
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio_to_provider: Option<f64>,
    /// ofi: median one-way latency over ofi-raw's.
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_over_provider: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Report {
    sizes_bytes: Vec<usize>,
    iterations: usize,
    warmup: usize,
    /// Slots per ring, and buffers the memcpy baseline rotates over.
    depth: usize,
    /// Backend -> size in bytes -> measurements.
    backends: BTreeMap<String, BTreeMap<usize, Point>>,
    /// memcpy and raw socket per size, and the cache-line ping-pong.
    baselines: BTreeMap<String, BTreeMap<usize, Point>>,
    cache_line_ping_pong_ns: LatencyNs,
    /// Notification latency (2-byte ping-pong median) of each backend over the cache-line
    /// ping-pong median.
    notification_over_cache_line: BTreeMap<String, f64>,
    host: String,
    cores: usize,
}

#[derive(Serialize)]
struct CsvRow<'a> {
    backend: &'a str,
    size_bytes: usize,
    lat_min_ns: f64,
    lat_median_ns: f64,
    lat_avg_ns: f64,
    lat_p99_ns: f64,
    lat_p999_ns: f64,
    bw_avg_gbps: f64,
    bw_peak_gbps: f64,
    ratio: String,
}

fn iters_for(size: usize, iters: usize) -> usize {
    iters.min((256 << 20) / size.max(1)).max(10)
}

/// Runs the benchmark and prints a table; writes JSON and CSV when asked.
///
/// # Errors
/// Bad flags, or a transport failure during the runs.
pub fn run(args: BenchArgs) -> Result<()> {
    if args.sizes.is_empty() || args.sizes.iter().any(|&s| s == 0 || s > 64 << 20) {
        bail!("--sizes must list sizes in 1..=64 MiB");
    }
    if args.iters == 0 {
        bail!("--iters must be >= 1");
    }
    if args.depth == 0 {
        bail!("--depth must be >= 1");
    }
    for b in &args.backends {
        if !["threads", "tcp", "shm", "rdma", "ofi"].contains(&b.as_str()) {
            bail!("unknown backend '{b}' (threads, shm, tcp, rdma, ofi)");
        }
    }
    let cl = perf::cache_line_ping_pong(100_000);
    let mut report = Report {
        sizes_bytes: args.sizes.clone(),
        iterations: args.iters,
        depth: args.depth,
        warmup: args.warmup,
        backends: BTreeMap::new(),
        baselines: BTreeMap::new(),
        cache_line_ping_pong_ns: cl,
        notification_over_cache_line: BTreeMap::new(),
        host: std::env::var("HOSTNAME").unwrap_or_default(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let pb = crate::harness::output::progress(
        (args.sizes.len() * (args.backends.len() + 2)) as u64,
        "transport-bench",
    );
    for &size in &args.sizes {
        let n = iters_for(size, args.iters);
        let words = size.div_ceil(8);
        pb.set_message(format!("memcpy {size} B"));
        let (ml, mb) = perf::memcpy(size, n, args.depth);
        pb.inc(1);
        pb.set_message(format!("raw socket {size} B"));
        let (sl, sb) = perf::raw_socket(size, n, args.warmup)?;
        pb.inc(1);
        report.baselines.entry("memcpy".into()).or_default().insert(
            size,
            Point {
                latency_ns: ml,
                bandwidth_gbps: mb,
                ratio_to_memcpy: None,
                ratio_to_socket: None,
                ratio_to_provider: None,
                latency_over_provider: None,
            },
        );
        report
            .baselines
            .entry("raw-socket".into())
            .or_default()
            .insert(
                size,
                Point {
                    latency_ns: sl,
                    bandwidth_gbps: sb,
                    ratio_to_memcpy: None,
                    ratio_to_socket: None,
                    ratio_to_provider: None,
                    latency_over_provider: None,
                },
            );
        // ofi's baseline: the same provider's own loop of writes with data.
        #[cfg(feature = "ofi")]
        let ofi_raw = if args.backends.iter().any(|b| b == "ofi") {
            pb.set_message(format!("ofi-raw {size} B"));
            let provider = bench_core::transport::ofi::provider_from_env();
            let (rl, rb) = bench_core::transport::ofi::raw_costs(
                provider.as_deref(),
                words * 8,
                n,
                args.warmup,
                args.depth,
            )?;
            report
                .baselines
                .entry("ofi-raw".into())
                .or_default()
                .insert(
                    size,
                    Point {
                        latency_ns: rl,
                        bandwidth_gbps: rb,
                        ratio_to_memcpy: None,
                        ratio_to_socket: None,
                        ratio_to_provider: None,
                        latency_over_provider: None,
                    },
                );
            Some((rl, rb))
        } else {
            None
        };
        for b in &args.backends {
            pb.set_message(format!("{b} {size} B"));
            let (lat, bw) = backend_costs(b, words, n, args.warmup, args.depth)?;
            pb.inc(1);
            let (rm, rs) = match b.as_str() {
                "tcp" => (None, Some(bw.average / sb.average.max(1e-12))),
                _ => (Some(bw.average / mb.average.max(1e-12)), None),
            };
            #[allow(unused_mut)]
            let (mut rp, mut lp) = (None, None);
            #[cfg(feature = "ofi")]
            if let (true, Some((rl, rb))) = (b == "ofi", ofi_raw) {
                rp = Some(bw.average / rb.average.max(1e-12));
                lp = Some(lat.median / rl.median.max(1.0));
            }
            report.backends.entry(b.clone()).or_default().insert(
                size,
                Point {
                    latency_ns: lat,
                    bandwidth_gbps: bw,
                    ratio_to_memcpy: rm,
                    ratio_to_socket: rs,
                    ratio_to_provider: rp,
                    latency_over_provider: lp,
                },
            );
        }
    }
    pb.finish_and_clear();
    let smallest = *args.sizes.iter().min().expect("non-empty");
    for (b, points) in &report.backends {
        if let Some(p) = points.get(&smallest) {
            report
                .notification_over_cache_line
                .insert(b.clone(), p.latency_ns.median / cl.median.max(1.0));
        }
    }
    println!(
        "{:<11} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  ratio",
        "backend", "bytes", "lat min", "median", "avg", "p99", "p99.9", "bw avg", "bw peak"
    );
    let mut rows = Vec::new();
    for group in [&report.baselines, &report.backends] {
        for (b, points) in group {
            for (&size, p) in points {
                let mut ratio = match (p.ratio_to_memcpy, p.ratio_to_socket) {
                    (Some(r), _) => format!("{r:.2}x memcpy"),
                    (_, Some(r)) => format!("{r:.2}x socket"),
                    _ => String::new(),
                };
                if let (Some(r), Some(l)) = (p.ratio_to_provider, p.latency_over_provider) {
                    ratio.push_str(&format!("; {r:.2}x ofi-raw bandwidth, {l:.2}x its latency"));
                }
                let l = &p.latency_ns;
                println!(
                    "{b:<11} {size:>9} {:>8.0}ns {:>8.0}ns {:>8.0}ns {:>8.0}ns {:>8.0}ns {:>6.2}Gb/s {:>6.2}Gb/s  {ratio}",
                    l.min, l.median, l.avg, l.p99, l.p999, p.bandwidth_gbps.average, p.bandwidth_gbps.peak
                );
                rows.push(CsvRow {
                    backend: b,
                    size_bytes: size,
                    lat_min_ns: l.min,
                    lat_median_ns: l.median,
                    lat_avg_ns: l.avg,
                    lat_p99_ns: l.p99,
                    lat_p999_ns: l.p999,
                    bw_avg_gbps: p.bandwidth_gbps.average,
                    bw_peak_gbps: p.bandwidth_gbps.peak,
                    ratio,
                });
            }
        }
    }
    println!("cache-line ping-pong: {:.0} ns one way (median)", cl.median);
    for (b, r) in &report.notification_over_cache_line {
        println!("{b}: notification latency {r:.1}x the cache-line ping-pong ({smallest} B ping-pong median)");
    }
    if let Some(p) = &args.json {
        let tmp = p.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_string_pretty(&report)?)?;
        std::fs::rename(&tmp, p)?;
    }
    if let Some(p) = &args.csv {
        let tmp = p.with_extension("csv.tmp");
        let mut w = csv::Writer::from_path(&tmp)?;
        for r in &rows {
            w.serialize(r)?;
        }
        w.flush()?;
        drop(w);
        std::fs::rename(&tmp, p)?;
    }
    Ok(())
}
