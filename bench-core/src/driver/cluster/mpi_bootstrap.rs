//! Bootstrap through MPI (cargo feature `mpi`): under `mpirun`, MPI gives each process its rank
//! and size; rank 0 binds a free port, and MPI broadcasts its address and a fresh job token to
//! the others, so no root address needs configuring even across hosts. MPI is finalized before
//! the run: everything after goes over the job's own TCP session, as with every launcher.

use super::rank::RankSpec;
use crate::error::{CoreError, Result, TransportFault};
use mpi::traits::*;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, ToSocketAddrs};
use std::time::Duration;

const NAME: usize = 256;

fn fixed(text: &str) -> [u8; NAME] {
    let mut b = [0u8; NAME];
    let t = text.as_bytes();
    b[..t.len().min(NAME)].copy_from_slice(&t[..t.len().min(NAME)]);
    b
}

fn unfixed(b: &[u8]) -> String {
    String::from_utf8_lossy(b)
        .trim_end_matches('\0')
        .to_string()
}

/// An address of this host other hosts can reach: the first non-loopback IPv4 address its
/// name resolves to.
fn routable(host: &str) -> Result<IpAddr> {
    (host, 0)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.find(|a| a.is_ipv4() && !a.ip().is_loopback()))
        .map(|a| a.ip())
        .ok_or_else(|| {
            CoreError::Config(format!(
                "rank 0's host '{host}' resolves to no address other hosts can reach; set SYNCBENCH_ROOT=HOST:PORT instead of --bootstrap mpi"
            ))
        })
}

/// Joins the job through MPI. Returns this rank's spec and, on rank 0, the listener the
/// session accepts on.
///
/// # Errors
/// [`CoreError::Config`] when MPI cannot be initialised (not started by mpirun, or initialised
/// twice) or rank 0 has no address the others can reach; [`CoreError::Cluster`] when rank 0
/// cannot bind a port.
pub fn bootstrap(timeout: Duration, startup: Duration) -> Result<(RankSpec, Option<TcpListener>)> {
    let universe = mpi::initialize().ok_or_else(|| {
        CoreError::Config(
            "MPI could not be initialised (already initialised in this process?)".into(),
        )
    })?;
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let host = mpi::environment::processor_name().unwrap_or_else(|_| "localhost".into());
    // Every rank's host name, to decide whether loopback is enough.
    let mine = fixed(&host);
    let mut names = vec![0u8; NAME * size];
    world.all_gather_into(&mine[..], &mut names[..]);
    let one_host = names.chunks(NAME).all(|n| unfixed(n) == host);
    let mut announce = [0u8; NAME];
    let mut listener = None;
    let mut failure = [0u8; NAME];
    if rank == 0 {
        let ip = if one_host {
            Ok(IpAddr::V4(Ipv4Addr::LOCALHOST))
        } else {
            routable(&host)
        };
        match ip.and_then(|ip| {
            let bind = if one_host {
                ip
            } else {
                IpAddr::V4(Ipv4Addr::UNSPECIFIED)
            };
            let l = TcpListener::bind((bind, 0)).map_err(|e| CoreError::Cluster {
                rank: 0,
                message: format!("cannot bind a port for the job: {e}"),
            })?;
            let port = l
                .local_addr()
                .map_err(|e| CoreError::transport(TransportFault::Setup, e.to_string()))?
                .port();
            Ok((l, SocketAddr::new(ip, port)))
        }) {
            Ok((l, addr)) => {
                let token = {
                    let t = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_nanos() as u64);
                    t ^ ((std::process::id() as u64) << 32) ^ 0x5eed_5eed
                };
                announce = fixed(&format!("{addr} {token:x}"));
                listener = Some(l);
            }
            Err(e) => failure = fixed(&e.to_string()),
        }
    }
    let root = world.process_at_rank(0);
    root.broadcast_into(&mut failure[..]);
    root.broadcast_into(&mut announce[..]);
    drop(universe);
    let failure = unfixed(&failure);
    if !failure.is_empty() {
        return Err(CoreError::Cluster {
            rank: 0,
            message: failure,
        });
    }
    let text = unfixed(&announce);
    let (addr, token) = text.split_once(' ').ok_or_else(|| CoreError::Cluster {
        rank: 0,
        message: format!("broadcast a malformed address {text:?}"),
    })?;
    let root: SocketAddr = addr.parse().map_err(|_| CoreError::Cluster {
        rank: 0,
        message: format!("broadcast a malformed address {addr:?}"),
    })?;
    let token = u64::from_str_radix(token, 16).map_err(|_| CoreError::Cluster {
        rank: 0,
        message: format!("broadcast a malformed token {token:?}"),
    })?;
    Ok((
        RankSpec {
            rank,
            size,
            root,
            token,
            timeout,
            startup,
            source: format!("MPI (rank 0 on {})", unfixed(&names[..NAME])),
        },
        listener,
    ))
}
