//! perftest-style measurements of a backend and of the physical limits it is compared with:
//! one-way latency by ping-pong (half the round trip of a write with notification answered by
//! one of the same size), bandwidth by streaming writes, and the baselines memcpy, a raw
//! loopback socket and a cache-line ping-pong between two spinning threads.

use super::{AlignedWords, Endpoint};
use crate::error::{CoreError, Result, TransportFault};
use hdrhistogram::Histogram;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Latency percentiles in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct LatencyNs {
    /// Smallest.
    pub min: f64,
    /// Median.
    pub median: f64,
    /// Mean.
    pub avg: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
}

impl LatencyNs {
    pub(crate) fn of(h: &Histogram<u64>) -> Self {
        LatencyNs {
            min: h.min() as f64,
            median: h.value_at_quantile(0.5) as f64,
            avg: h.mean(),
            p99: h.value_at_quantile(0.99) as f64,
            p999: h.value_at_quantile(0.999) as f64,
        }
    }
}

/// Bandwidth in Gbit/s.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct BandwidthGbps {
    /// Over the whole stream.
    pub average: f64,
    /// Best window of a tenth of the messages.
    pub peak: f64,
}

pub(crate) fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds")
}

pub(crate) fn gbps(bytes: f64, ns: f64) -> f64 {
    if ns <= 0.0 {
        0.0
    } else {
        bytes * 8.0 / ns
    }
}

/// Peak over windows of a tenth of `arrivals` (ns since the start), `size` bytes each.
pub(crate) fn peak(arrivals: &[u64], size: usize) -> f64 {
    let k = (arrivals.len() / 10).max(1);
    (0..arrivals.len().saturating_sub(k))
        .map(|i| gbps((k * size) as f64, (arrivals[i + k] - arrivals[i]) as f64))
        .fold(0.0, f64::max)
}

const TIMEOUT: Duration = Duration::from_secs(30);

fn timeout(what: &str) -> CoreError {
    CoreError::transport(
        TransportFault::Unreachable,
        format!("transport-bench: no notification within 30 s ({what})"),
    )
}

/// Half round trips of `iters` ping-pongs of `words`-word writes with notification between
/// `a` (node 0) and `b` (node 1), after `warmup` unrecorded ones. Both need a ring of at least
/// one slot of `words` words towards the other.
///
/// # Errors
/// Any transport error, or a notification missing for 30 s.
pub fn latency<E: Endpoint + 'static>(
    mut a: E,
    mut b: E,
    words: usize,
    iters: usize,
    warmup: usize,
) -> Result<(LatencyNs, E, E)> {
    let total = iters + warmup;
    let src_b = Arc::new(AlignedWords::zeroed(words.max(1)));
    let echo = std::thread::spawn(move || -> Result<E> {
        for k in 0..total {
            b.wait_notification(TIMEOUT)
                .ok_or_else(|| timeout("echo"))?;
            b.post_write(0, 0, k as u64 + 1, Some(src_b.clone()), words, Some([0, 0]))?;
            while b.poll_completion().is_some() {}
        }
        Ok(b)
    });
    let src = Arc::new(AlignedWords::zeroed(words.max(1)));
    let mut h = histogram();
    for k in 0..total {
        let t0 = Instant::now();
        a.post_write(1, 0, k as u64 + 1, Some(src.clone()), words, Some([0, 0]))?;
        a.wait_notification(TIMEOUT)
            .ok_or_else(|| timeout("ping"))?;
        let rtt = t0.elapsed().as_nanos() as u64;
        while a.poll_completion().is_some() {}
        if k >= warmup {
            h.record((rtt / 2).max(1)).expect("in range");
        }
    }
    let b = echo
        .join()
        .map_err(|_| CoreError::transport(TransportFault::Setup, "echo thread panicked"))??;
    Ok((LatencyNs::of(&h), a, b))
}

/// Streams `iters` writes of `words` words from `a` to `b`, each with a notification, in
/// five rounds: a round's bandwidth is its bytes over the time from its first post to its last
/// arrival at `b`; the average is over all rounds, the peak the best round.
///
/// # Errors
/// Any transport error, or a notification missing for 30 s.
pub fn bandwidth<E: Endpoint + 'static>(
    mut a: E,
    mut b: E,
    words: usize,
    iters: usize,
) -> Result<(BandwidthGbps, E, E)> {
    let start = Instant::now();
    let received = Arc::new(AtomicU64::new(0));
    let last_arrival = Arc::new(AtomicU64::new(0));
    let (r2, l2) = (received.clone(), last_arrival.clone());
    let sink = std::thread::spawn(move || -> Result<E> {
        for _ in 0..iters {
            b.wait_notification(TIMEOUT)
                .ok_or_else(|| timeout("stream"))?;
            l2.store(start.elapsed().as_nanos() as u64, Ordering::Release);
            r2.fetch_add(1, Ordering::AcqRel);
        }
        Ok(b)
    });
    let src = Arc::new(AlignedWords::zeroed(words.max(1)));
    let depth = a.remote_depth(1)?;
    let rounds = 5.min(iters).max(1);
    let bytes = (words * 8) as f64;
    let (mut total_ns, mut best) = (0.0, 0.0f64);
    let mut posted = 0usize;
    for r in 0..rounds {
        let n = iters / rounds + usize::from(r < iters % rounds);
        let t0 = start.elapsed().as_nanos() as u64;
        for _ in 0..n {
            a.post_write(
                1,
                posted % depth,
                posted as u64 + 1,
                Some(src.clone()),
                words,
                Some([0, 0]),
            )?;
            posted += 1;
            while a.poll_completion().is_some() {}
        }
        let deadline = Instant::now() + TIMEOUT;
        while received.load(Ordering::Acquire) < posted as u64 {
            if Instant::now() > deadline {
                return Err(timeout("stream round"));
            }
            std::thread::yield_now();
        }
        let ns = last_arrival
            .load(Ordering::Acquire)
            .saturating_sub(t0)
            .max(1) as f64;
        total_ns += ns;
        best = best.max(gbps(bytes * n as f64, ns));
    }
    let b = sink
        .join()
        .map_err(|_| CoreError::transport(TransportFault::Setup, "sink thread panicked"))??;
    Ok((
        BandwidthGbps {
            average: gbps(bytes * iters as f64, total_ns),
            peak: best,
        },
        a,
        b,
    ))
}

/// memcpy from one page-aligned buffer of `bytes` into `buffers` destinations in turn, as a
/// transport writes into the slots of a ring of that depth (the same memory footprint, so the
/// same cache behaviour): (time per copy as latency, bandwidth).
pub fn memcpy(bytes: usize, iters: usize, buffers: usize) -> (LatencyNs, BandwidthGbps) {
    let src = AlignedWords::from_words(&vec![7u64; bytes.div_ceil(8).max(1)]);
    let mut dsts: Vec<Vec<u8>> = (0..buffers.max(1))
        .map(|_| vec![1u8; bytes.max(1)])
        .collect();
    let s = &src.bytes_unchanging()[..bytes.max(1)];
    let mut h = histogram();
    let mut arrivals = Vec::with_capacity(iters);
    let start = Instant::now();
    for k in 0..iters {
        let t0 = Instant::now();
        let dst = &mut dsts[k % buffers.max(1)];
        dst.copy_from_slice(s);
        std::hint::black_box(dst);
        h.record((t0.elapsed().as_nanos() as u64).max(1))
            .expect("in range");
        arrivals.push(start.elapsed().as_nanos() as u64);
    }
    let total = start.elapsed().as_nanos() as f64;
    (
        LatencyNs::of(&h),
        BandwidthGbps {
            average: gbps((bytes * iters) as f64, total),
            peak: peak(&arrivals, bytes),
        },
    )
}

/// The copy a one-sided write of the threads and shm transports performs (`copy_words` of
/// the transport's aligned buffers: the SSE2 block copy for large payloads), run bare from one
/// page-aligned buffer into `buffers` page-aligned destinations in turn: the limit those
/// transports can reach on this machine, and a reference that a shared machine's memory
/// contention moves the same way as the transports (glibc's memcpy switches to non-temporal
/// stores at large sizes, so it responds to contention differently). Bandwidth over `iters`
/// copies.
pub fn word_copy(bytes: usize, iters: usize, buffers: usize) -> BandwidthGbps {
    let words = bytes.div_ceil(8).max(1);
    let src = AlignedWords::from_words(&vec![7u64; words]);
    let dsts: Vec<AlignedWords> = (0..buffers.max(1))
        .map(|_| AlignedWords::from_words(&vec![1u64; words]))
        .collect();
    let mut arrivals = Vec::with_capacity(iters);
    let start = Instant::now();
    for k in 0..iters {
        let dst = &dsts[k % dsts.len()];
        super::aligned::copy_words(dst.as_slice(), src.as_slice());
        std::hint::black_box(dst);
        arrivals.push(start.elapsed().as_nanos() as u64);
    }
    let total = start.elapsed().as_nanos() as f64;
    BandwidthGbps {
        average: gbps((words * 8 * iters) as f64, total),
        peak: peak(&arrivals, words * 8),
    }
}

/// A raw loopback TCP socket (no framing, no slots): ping-pong latency and streaming bandwidth
/// of `bytes`-byte messages.
///
/// # Errors
/// Socket errors.
pub fn raw_socket(bytes: usize, iters: usize, warmup: usize) -> Result<(LatencyNs, BandwidthGbps)> {
    let io =
        |e: std::io::Error| CoreError::transport(TransportFault::Setup, format!("raw socket: {e}"));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(io)?;
    let addr = listener.local_addr().map_err(io)?;
    let n = bytes.max(1);
    let total = iters + warmup;
    let server = std::thread::spawn(move || -> std::io::Result<Vec<u64>> {
        let (mut s, _) = listener.accept()?;
        s.set_nodelay(true)?;
        let mut buf = vec![0u8; n];
        for _ in 0..total {
            s.read_exact(&mut buf)?;
            s.write_all(&buf)?;
        }
        // Then the stream: time each message's arrival.
        let start = Instant::now();
        let mut arrivals = Vec::with_capacity(total);
        for _ in 0..total {
            s.read_exact(&mut buf)?;
            arrivals.push(start.elapsed().as_nanos() as u64);
        }
        s.write_all(&[1])?;
        Ok(arrivals)
    });
    let mut c = std::net::TcpStream::connect(addr).map_err(io)?;
    c.set_nodelay(true).map_err(io)?;
    let buf = AlignedWords::zeroed(n.div_ceil(8));
    let out = &buf.bytes_unchanging()[..n];
    let mut back = vec![0u8; n];
    let mut h = histogram();
    for k in 0..total {
        let t0 = Instant::now();
        c.write_all(out).map_err(io)?;
        c.read_exact(&mut back).map_err(io)?;
        if k >= warmup {
            h.record((t0.elapsed().as_nanos() as u64 / 2).max(1))
                .expect("in range");
        }
    }
    for _ in 0..total {
        c.write_all(out).map_err(io)?;
    }
    let mut done = [0u8; 1];
    c.read_exact(&mut done).map_err(io)?;
    let arrivals = server
        .join()
        .map_err(|_| CoreError::transport(TransportFault::Setup, "raw socket thread panicked"))?
        .map_err(io)?;
    let first = arrivals.first().copied().unwrap_or(0);
    let last = arrivals.last().copied().unwrap_or(1);
    // The first arrival starts the clock: the sender began before the receiver's timer.
    let span = (last - first).max(1) as f64;
    Ok((
        LatencyNs::of(&h),
        BandwidthGbps {
            average: gbps((n * (total - 1)) as f64, span),
            peak: peak(&arrivals, n),
        },
    ))
}

/// One-way latency of a cache line bounced between two spinning threads.
pub fn cache_line_ping_pong(iters: usize) -> LatencyNs {
    let flag = Arc::new(AtomicU64::new(0));
    let f2 = flag.clone();
    let total = iters as u64;
    let other = std::thread::spawn(move || {
        for k in 0..total {
            while f2.load(Ordering::Acquire) != 2 * k + 1 {
                std::hint::spin_loop();
            }
            f2.store(2 * k + 2, Ordering::Release);
        }
    });
    let mut h = histogram();
    for k in 0..total {
        let t0 = Instant::now();
        flag.store(2 * k + 1, Ordering::Release);
        while flag.load(Ordering::Acquire) != 2 * k + 2 {
            std::hint::spin_loop();
        }
        h.record((t0.elapsed().as_nanos() as u64 / 2).max(1))
            .expect("in range");
    }
    let _ = other.join();
    LatencyNs::of(&h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::TcpFabric;
    use crate::transport::threads::ThreadsFabric;

    #[test]
    fn every_measurement_returns_sane_numbers() {
        let mut f = ThreadsFabric::new(2);
        f.register(0, 1, 1024, 4).unwrap();
        f.register(1, 0, 1024, 4).unwrap();
        let mut eps = f.endpoints();
        let (b, a) = (eps.pop().unwrap(), eps.pop().unwrap());
        let (lat, a, b) = latency(a, b, 1024, 50, 5).unwrap();
        assert!(lat.min > 0.0 && lat.min <= lat.median && lat.median <= lat.p999);
        let (bw, _, _) = bandwidth(a, b, 1024, 200).unwrap();
        assert!(bw.average > 0.0 && bw.peak >= bw.average * 0.5);

        let mut f = TcpFabric::new(2, 1);
        f.register(0, 1, 1024, 4).unwrap();
        f.register(1, 0, 1024, 4).unwrap();
        let mut eps = f.endpoints().unwrap();
        let (b, a) = (eps.pop().unwrap(), eps.pop().unwrap());
        let (lat, a, b) = latency(a, b, 1024, 20, 2).unwrap();
        assert!(lat.median > 0.0);
        let (bw, _, _) = bandwidth(a, b, 1024, 50).unwrap();
        assert!(bw.average > 0.0);

        let (l, b) = memcpy(1 << 16, 50, 2);
        assert!(l.min > 0.0 && b.average > 0.0);
        let (l, b) = raw_socket(1 << 12, 20, 2).unwrap();
        assert!(l.median > 0.0 && b.average > 0.0);
        assert!(cache_line_ping_pong(1000).median > 0.0);
    }
}
