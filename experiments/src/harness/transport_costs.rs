//! What moving messages costs on each transport backend, measured in this process: one-way
//! latency and streaming bandwidth between two endpoints. `syncbench transport-bench` reports
//! them beside the physical references; sim-validation feeds them to the simulator's network
//! model, so the two read the same measurement.

use anyhow::{bail, Result};
use bench_core::transport::perf::{self, BandwidthGbps, LatencyNs};
use bench_core::transport::shm::{self, ShmFabric};
use bench_core::transport::tcp::TcpFabric;
use bench_core::transport::threads::ThreadsFabric;

/// One-way latency (ping-pong, after `warmup`) and streaming bandwidth of `n` messages of
/// `words` words between two endpoints of backend `name` (`threads`, `tcp`, `shm`, `rdma`) in
/// this process, with rings of `depth` slots.
///
/// # Errors
/// An unknown backend, one this build lacks, or a transport error.
pub fn backend_costs(
    name: &str,
    words: usize,
    n: usize,
    warmup: usize,
    depth: usize,
) -> Result<(LatencyNs, BandwidthGbps)> {
    Ok(match name {
        "threads" => {
            let mut f = ThreadsFabric::new(2);
            f.register(0, 1, words, depth)?;
            f.register(1, 0, words, depth)?;
            let mut e = f.endpoints();
            let (b, a) = (e.pop().expect("2"), e.pop().expect("2"));
            let (lat, a, b) = perf::latency(a, b, words, n, warmup)?;
            let (bw, _, _) = perf::bandwidth(a, b, words, n)?;
            (lat, bw)
        }
        "tcp" => {
            let mut f = TcpFabric::new(2, 0x5eed);
            f.register(0, 1, words, depth)?;
            f.register(1, 0, words, depth)?;
            let mut e = f.endpoints()?;
            let (b, a) = (e.pop().expect("2"), e.pop().expect("2"));
            let (lat, a, b) = perf::latency(a, b, words, n, warmup)?;
            let (bw, _, _) = perf::bandwidth(a, b, words, n)?;
            (lat, bw)
        }
        "shm" => {
            let token = 0x5eed_0000 ^ u64::from(std::process::id()) ^ ((words as u64) << 32);
            let mut f = ShmFabric::new(2, token, shm::default_dir());
            f.register(0, 1, words, depth)?;
            f.register(1, 0, words, depth)?;
            let mut e = f.endpoints()?;
            let (b, a) = (e.pop().expect("2"), e.pop().expect("2"));
            let (lat, a, b) = perf::latency(a, b, words, n, warmup)?;
            let (bw, _, _) = perf::bandwidth(a, b, words, n)?;
            (lat, bw)
        }
        #[cfg(feature = "rdma")]
        "rdma" => {
            let (a, b) = rdma_loopback(words, depth)?;
            let (lat, a, b) = perf::latency(a, b, words, n, warmup)?;
            let (bw, _, _) = perf::bandwidth(a, b, words, n)?;
            (lat, bw)
        }
        #[cfg(not(feature = "rdma"))]
        "rdma" => bail!(
            "this build has no rdma backend: build with `cargo build --release --features rdma`"
        ),
        #[cfg(feature = "ofi")]
        "ofi" => {
            let (a, b) = ofi_loopback(words, depth)?;
            let (lat, a, b) = perf::latency(a, b, words, n, warmup)?;
            let (bw, _, _) = perf::bandwidth(a, b, words, n)?;
            (lat, bw)
        }
        #[cfg(not(feature = "ofi"))]
        "ofi" => bail!(
            "this build has no ofi backend: build with `cargo build --release --features ofi`"
        ),
        other => bail!("unknown backend '{other}' (threads, shm, tcp, rdma, ofi)"),
    })
}

/// Two connected ofi endpoints, nodes 0 and 1, each with a ring of `depth` slots of `words`
/// words towards the other, on the provider $SYNCBENCH_OFI_PROVIDER names (or libfabric's
/// first match), bound to 127.0.0.1 where the provider is an IP one.
///
/// # Errors
/// No provider fits, or an endpoint cannot be opened or connected.
#[cfg(feature = "ofi")]
pub fn ofi_loopback(
    words: usize,
    depth: usize,
) -> Result<(
    bench_core::transport::ofi::OfiEndpoint,
    bench_core::transport::ofi::OfiEndpoint,
)> {
    use bench_core::transport::ofi::{provider_from_env, OfiEndpoint};
    use bench_core::transport::RingShape;
    use std::collections::HashMap;
    let shape = RingShape {
        capacity: words,
        depth,
    };
    let provider = provider_from_env();
    let lo = Some(std::net::IpAddr::from([127, 0, 0, 1]));
    let ring = |peer| HashMap::from([(peer, shape)]);
    let (a, aa) = OfiEndpoint::create(0, &ring(1), &ring(1), provider.as_deref(), lo)?;
    let (b, ba) = OfiEndpoint::create(1, &ring(0), &ring(0), provider.as_deref(), lo)?;
    let table = vec![aa, ba];
    Ok((a.connect(&table)?, b.connect(&table)?))
}

/// Two connected rdma endpoints, nodes 0 and 1, each with a ring of `depth` slots of `words`
/// words towards the other, loopback through the device $SYNCBENCH_RDMA_DEVICE names (or the
/// first one).
///
/// # Errors
/// No device, or a queue pair that cannot be created or connected.
#[cfg(feature = "rdma")]
pub fn rdma_loopback(
    words: usize,
    depth: usize,
) -> Result<(
    bench_core::transport::rdma::RdmaEndpoint,
    bench_core::transport::rdma::RdmaEndpoint,
)> {
    use bench_core::transport::rdma::{RdmaDevice, RdmaEndpoint};
    use bench_core::transport::RingShape;
    use std::collections::HashMap;
    let dev = RdmaDevice::open(None)?;
    let shape = RingShape {
        capacity: words,
        depth,
    };
    let (a, aa) = RdmaEndpoint::create(
        dev.clone(),
        0,
        &HashMap::from([(1, shape)]),
        &HashMap::from([(1, shape)]),
    )?;
    let (b, ba) = RdmaEndpoint::create(
        dev,
        1,
        &HashMap::from([(0, shape)]),
        &HashMap::from([(0, shape)]),
    )?;
    let table = vec![aa, ba];
    Ok((a.connect(&table)?, b.connect(&table)?))
}
