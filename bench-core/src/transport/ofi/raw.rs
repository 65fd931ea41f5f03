//! The provider's own path, as transport-bench's baseline for the ofi backend: one
//! `fi_writemsg` with remote completion data per message between two endpoints of the same
//! provider, each side's completion queue read by the thread that waits on it (no progress
//! thread, no slot chain, no staging copy). What the backend adds over it (three writes and a
//! notification per message, the copy into staging, the progress thread's hand-off) is the
//! ratio transport-bench prints.

use super::bridge::{post_write, Write};
use super::domain::Domain;
use super::err;
use super::ffi;
use super::memory::Registered;
use crate::error::Result;
use crate::transport::perf::{gbps, histogram, peak, BandwidthGbps, LatencyNs};
use crate::transport::AlignedWords;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a side waits for one completion.
const TIMEOUT: Duration = Duration::from_secs(30);

/// One side: its registered buffer, its objects, and the other side's address and buffer.
/// Drop closes the endpoint, then the registration, then the domain.
struct Side {
    buf: Registered,
    domain: Arc<Domain>,
    peer: ffi::fi_addr_t,
    remote: (u64, u64),
}

impl Drop for Side {
    fn drop(&mut self) {
        if let Some(d) = Arc::get_mut(&mut self.domain) {
            d.close_endpoint();
        }
    }
}

// SAFETY: the domain is FI_THREAD_SAFE and the buffer's words are atomics.
unsafe impl Send for Side {}

impl Side {
    /// A write of `bytes` from this side's buffer into the other's, with remote data and, if
    /// `signaled`, a completion. The loops signal every write: the sockets provider (1.17)
    /// never delivered the remote data of a write posted without FI_COMPLETION on an
    /// endpoint bound with FI_SELECTIVE_COMPLETION (the backend's notifications end their
    /// chains, so they are always signaled).
    fn write(&self, bytes: usize, signaled: bool) -> Result<()> {
        let w = Write {
            local: self.buf.local(0),
            desc: self.buf.desc(),
            bytes,
            remote: self.remote.0,
            key: self.remote.1,
            to: self.peer,
            id: 1,
            signaled,
            data: Some(1),
        };
        // SAFETY: the buffer is registered while this side lives, which outlasts every
        // completion it waits for; a write in flight over an older one only moves bytes.
        let rc = unsafe { post_write(self.domain.ep, &w) };
        if rc != 0 {
            return Err(err(format!(
                "raw fi_writemsg failed: {}",
                ffi::strerror(rc as i64)
            )));
        }
        Ok(())
    }

    /// Reads the completion queue until an entry of the wanted kind (remote data landed here,
    /// or a send completion) comes; counts the other kind into `other`.
    fn next(&self, remote: bool, other: &mut u64) -> Result<()> {
        let started = Instant::now();
        let mut e = [ffi::fi_cq_data_entry::default(); 1];
        let mut empty = 0u32;
        loop {
            // SAFETY: the queue is open while the domain lives; e is one entry.
            let n = unsafe { ffi::cq_read(self.domain.cq, e.as_mut_ptr(), 1) };
            if n == 1 {
                let landed = e[0].flags & u64::from(ffi::FI_REMOTE_CQ_DATA) != 0
                    && (e[0].flags & u64::from(ffi::FI_REMOTE_WRITE) != 0
                        || e[0].op_context.is_null());
                if landed == remote {
                    return Ok(());
                }
                *other += 1;
                continue;
            }
            if n == -(ffi::FI_EAVAIL as isize) {
                let mut ee = ffi::fi_cq_err_entry::default();
                // SAFETY: an error entry is waiting.
                unsafe { ffi::cq_readerr(self.domain.cq, &mut ee) };
                return Err(err(format!(
                    "raw write failed: {}",
                    ffi::strerror(-i64::from(ee.err))
                )));
            }
            if started.elapsed() > TIMEOUT {
                return Err(err(format!(
                    "raw loop: no completion within 30 s (waiting for {})",
                    if remote {
                        "remote data"
                    } else {
                        "a send completion"
                    }
                )));
            }
            // Spin, then yield: a provider's own threads (sockets' progress, shm's peers)
            // take the locks cq_read takes, and a reader that never lets go starves them.
            empty += 1;
            if empty < 256 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Two sides on `provider` (else libfabric's first match), with buffers of `bytes`.
fn pair(provider: Option<&str>, bytes: usize, depth: usize) -> Result<(Side, Side)> {
    let lo = Some(IpAddr::from([127, 0, 0, 1]));
    let cq = 4 * depth + 64;
    let a = Arc::new(Domain::open(provider, lo, 2, cq)?);
    let b = Arc::new(Domain::open(provider, lo, 2, cq)?);
    let access = u64::from(ffi::FI_WRITE | ffi::FI_REMOTE_WRITE);
    let words = bytes.div_ceil(8).max(1);
    let ba = Registered::register(&a, AlignedWords::zeroed(words), access, 1, "raw buffer")?;
    let bb = Registered::register(&b, AlignedWords::zeroed(words), access, 1, "raw buffer")?;
    let (a_name, b_name) = (a.name()?, b.name()?);
    let (to_b, to_a) = (a.insert(&b_name)?, b.insert(&a_name)?);
    let (ra, rb) = ((ba.base(), ba.key()), (bb.base(), bb.key()));
    Ok((
        Side {
            buf: ba,
            domain: a,
            peer: to_b,
            remote: rb,
        },
        Side {
            buf: bb,
            domain: b,
            peer: to_a,
            remote: ra,
        },
    ))
}

/// One-way latency (half the round trip of a write with data answered by one of the same
/// size, `iters` recorded after `warmup`) and streaming bandwidth (`iters + warmup` writes with
/// data, at most `depth` in flight) of `bytes`-byte writes on the provider's own path.
///
/// # Errors
/// No provider fits, an object cannot be opened, a write fails, or a completion is missing
/// for 30 s.
pub fn raw_costs(
    provider: Option<&str>,
    bytes: usize,
    iters: usize,
    warmup: usize,
    depth: usize,
) -> Result<(LatencyNs, BandwidthGbps)> {
    let bytes = bytes.max(8);
    let (a, b) = pair(provider, bytes, depth)?;
    let total = iters + warmup;
    let echo = std::thread::spawn(move || -> Result<(Side, Vec<u64>)> {
        let mut sends = 0u64;
        for _ in 0..total {
            b.next(true, &mut sends)?;
            b.write(bytes, true)?;
        }
        // Then the stream: time each arrival.
        let start = Instant::now();
        let mut arrivals = Vec::with_capacity(total);
        for _ in 0..total {
            b.next(true, &mut sends)?;
            arrivals.push(start.elapsed().as_nanos() as u64);
        }
        b.write(8, true)?;
        Ok((b, arrivals))
    });
    let mut h = histogram();
    let mut stray = 0u64;
    for k in 0..total {
        let t0 = Instant::now();
        a.write(bytes, true)?;
        a.next(true, &mut stray)?;
        if k >= warmup {
            h.record((t0.elapsed().as_nanos() as u64 / 2).max(1))
                .expect("in range");
        }
    }
    let mut in_flight = 0usize;
    for _ in 0..total {
        while in_flight >= depth.max(1) {
            let mut landed = 0u64;
            a.next(false, &mut landed)?;
            in_flight -= 1;
        }
        a.write(bytes, true)?;
        in_flight += 1;
    }
    let mut fin = 0u64;
    a.next(true, &mut fin)?;
    let (b, arrivals) = echo
        .join()
        .map_err(|_| err("raw loop: the echo thread panicked"))??;
    drop(b);
    let first = arrivals.first().copied().unwrap_or(0);
    let last = arrivals.last().copied().unwrap_or(1);
    let span = (last - first).max(1) as f64;
    Ok((
        LatencyNs::of(&h),
        BandwidthGbps {
            average: gbps((bytes * (total - 1)) as f64, span),
            peak: peak(&arrivals, bytes),
        },
    ))
}
