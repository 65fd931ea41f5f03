//! The transports a cluster run can use, as the three steps the job runner takes with each:
//! prepare a node's receive side and say where it is reached, build the endpoint once every
//! address is known (connecting to its peers), wait until its peers have connected to it, and a
//! hook once every rank has built its endpoints.

use crate::error::{CoreError, Result, TransportFault};
use crate::protocol::NodeId;
use crate::transport::shm::{self, ShmEndpoint};
use crate::transport::tcp::{RingShape, TcpEndpoint};
use crate::transport::Endpoint;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::time::Instant;

/// What a transport does at each step of a cluster run.
pub(crate) trait Backend {
    /// A node's endpoint between its address being published and the table being known.
    type Pending;
    type Ep: Endpoint + 'static;
    /// Prepares node `node`'s receive side; returns the address peers reach it by.
    fn prepare(
        ip: IpAddr,
        token: u64,
        node: NodeId,
        local: HashMap<NodeId, RingShape>,
        remote: HashMap<NodeId, RingShape>,
    ) -> Result<(String, Self::Pending)>;
    /// Completes the endpoint once every node's address is known (every receive side was
    /// prepared before the addresses were exchanged), connecting to its peers by `deadline`.
    fn build(
        pending: Self::Pending,
        token: u64,
        node: NodeId,
        table: &[String],
        deadline: Instant,
    ) -> Result<Self::Ep>;
    /// Waits, after every endpoint of this rank was built, until the peers of `ep` have
    /// connected to it; the run starts only then.
    fn ready(_ep: &Self::Ep, _deadline: Instant) -> Result<()> {
        Ok(())
    }
    /// Called once every rank built its endpoints (after the start barrier).
    fn started(_ep: &mut Self::Ep) {}
}

pub(crate) struct TcpBackend;

impl Backend for TcpBackend {
    type Pending = (
        TcpListener,
        HashMap<NodeId, RingShape>,
        HashMap<NodeId, RingShape>,
    );
    type Ep = TcpEndpoint;

    fn prepare(
        ip: IpAddr,
        _token: u64,
        node: NodeId,
        local: HashMap<NodeId, RingShape>,
        remote: HashMap<NodeId, RingShape>,
    ) -> Result<(String, Self::Pending)> {
        let l = TcpListener::bind((ip, 0)).map_err(|e| {
            CoreError::transport(
                TransportFault::Setup,
                format!("node {node}: cannot listen on {ip}: {e}"),
            )
        })?;
        let a = l
            .local_addr()
            .map_err(|e| CoreError::transport(TransportFault::Setup, e.to_string()))?;
        Ok((a.to_string(), (l, local, remote)))
    }

    fn build(
        pending: Self::Pending,
        token: u64,
        node: NodeId,
        table: &[String],
        deadline: Instant,
    ) -> Result<TcpEndpoint> {
        let addrs = table
            .iter()
            .enumerate()
            .map(|(j, a)| {
                a.parse::<SocketAddr>().map_err(|_| {
                    CoreError::transport(
                        TransportFault::Malformed,
                        format!("node {j} announced {a:?}, not a socket address"),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let (listener, local, remote) = pending;
        let mut ep = TcpEndpoint::start(node, token, listener, addrs, local, remote)?;
        ep.connect_peers(deadline)?;
        Ok(ep)
    }

    fn ready(ep: &TcpEndpoint, deadline: Instant) -> Result<()> {
        ep.await_peers(deadline)
    }
}

pub(crate) struct ShmBackend;

impl Backend for ShmBackend {
    type Pending = ShmEndpoint;
    type Ep = ShmEndpoint;

    fn prepare(
        _ip: IpAddr,
        token: u64,
        node: NodeId,
        local: HashMap<NodeId, RingShape>,
        remote: HashMap<NodeId, RingShape>,
    ) -> Result<(String, ShmEndpoint)> {
        let path = shm::segment_path(&shm::default_dir(), token, node);
        let ep = ShmEndpoint::create(node, token, path.clone(), local, remote)?;
        Ok((path.to_string_lossy().into_owned(), ep))
    }

    fn build(
        mut ep: ShmEndpoint,
        _token: u64,
        _node: NodeId,
        table: &[String],
        _deadline: Instant,
    ) -> Result<ShmEndpoint> {
        let paths: Vec<PathBuf> = table.iter().map(PathBuf::from).collect();
        ep.connect(&paths)?;
        Ok(ep)
    }

    fn started(ep: &mut ShmEndpoint) {
        ep.unlink();
    }
}

/// RDMA verbs: the device is opened once per process.
#[cfg(feature = "rdma")]
pub(crate) struct RdmaBackend;

#[cfg(feature = "rdma")]
fn rdma_device() -> Result<std::sync::Arc<crate::transport::rdma::RdmaDevice>> {
    use crate::transport::rdma::RdmaDevice;
    static DEVICE: std::sync::OnceLock<std::sync::Arc<RdmaDevice>> = std::sync::OnceLock::new();
    if let Some(d) = DEVICE.get() {
        return Ok(d.clone());
    }
    let d = RdmaDevice::open(None)?;
    Ok(DEVICE.get_or_init(|| d).clone())
}

#[cfg(feature = "rdma")]
impl Backend for RdmaBackend {
    type Pending = crate::transport::rdma::PreparedEndpoint;
    type Ep = crate::transport::rdma::RdmaEndpoint;

    fn prepare(
        _ip: IpAddr,
        _token: u64,
        node: NodeId,
        local: HashMap<NodeId, RingShape>,
        remote: HashMap<NodeId, RingShape>,
    ) -> Result<(String, Self::Pending)> {
        let (ep, addr) =
            crate::transport::rdma::RdmaEndpoint::create(rdma_device()?, node, &local, &remote)?;
        Ok((serde_json::to_string(&addr)?, ep))
    }

    fn build(
        ep: Self::Pending,
        _token: u64,
        _node: NodeId,
        table: &[String],
        _deadline: Instant,
    ) -> Result<Self::Ep> {
        let addrs = table
            .iter()
            .enumerate()
            .map(|(j, a)| {
                serde_json::from_str(a).map_err(|e| {
                    CoreError::transport(
                        TransportFault::Malformed,
                        format!("node {j} announced a malformed RDMA address: {e}"),
                    )
                })
            })
            .collect::<Result<Vec<crate::transport::rdma::RdmaAddress>>>()?;
        ep.connect(&addrs)
    }
}

/// libfabric: an RDM endpoint per node on the provider `SYNCBENCH_OFI_PROVIDER` names, bound
/// to the rank's address where the provider is an IP one.
#[cfg(feature = "ofi")]
pub(crate) struct OfiBackend;

#[cfg(feature = "ofi")]
impl Backend for OfiBackend {
    type Pending = crate::transport::ofi::PreparedOfi;
    type Ep = crate::transport::ofi::OfiEndpoint;

    fn prepare(
        ip: IpAddr,
        _token: u64,
        node: NodeId,
        local: HashMap<NodeId, RingShape>,
        remote: HashMap<NodeId, RingShape>,
    ) -> Result<(String, Self::Pending)> {
        use crate::transport::ofi;
        let provider = ofi::provider_from_env();
        let (ep, addr) =
            ofi::OfiEndpoint::create(node, &local, &remote, provider.as_deref(), Some(ip))?;
        Ok((serde_json::to_string(&addr)?, ep))
    }

    fn build(
        ep: Self::Pending,
        _token: u64,
        _node: NodeId,
        table: &[String],
        _deadline: Instant,
    ) -> Result<Self::Ep> {
        let addrs = table
            .iter()
            .enumerate()
            .map(|(j, a)| {
                serde_json::from_str(a).map_err(|e| {
                    CoreError::transport(
                        TransportFault::Malformed,
                        format!("node {j} announced a malformed libfabric address: {e}"),
                    )
                })
            })
            .collect::<Result<Vec<crate::transport::ofi::OfiAddress>>>()?;
        ep.connect(&addrs)
    }
}
