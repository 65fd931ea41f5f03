//! The TCP fabric builder: every endpoint of a job in this process (tests, benchmarks), and the
//! pattern each rank follows with its own part of the ring table.

use super::super::ring::RingTable;
use super::super::NodeId;
use super::endpoint::*;
use super::DEFAULT_STARTUP;
use crate::error::{CoreError, Result, TransportFault};
use std::net::TcpListener;
use std::time::Instant;

/// Builder of a TCP fabric whose endpoints all live in this process (tests, benchmarks, and
/// the pattern each rank follows with its own part of the table).
#[derive(Debug)]
pub struct TcpFabric {
    token: u64,
    rings: RingTable,
}

impl TcpFabric {
    /// A fabric of `nodes` endpoints sharing job token `token`.
    pub fn new(nodes: usize, token: u64) -> Self {
        TcpFabric {
            token,
            rings: RingTable::new(nodes),
        }
    }

    /// Receiver `to` registers a ring of `depth` slots of `capacity` words for `from`.
    ///
    /// # Errors
    /// [`CoreError::Transport`] for a node out of range or a zero depth.
    pub fn register(
        &mut self,
        from: NodeId,
        to: NodeId,
        capacity: usize,
        depth: usize,
    ) -> Result<()> {
        self.rings.register(from, to, capacity, depth)
    }

    /// Binds every endpoint to a loopback port, connects each to its peers, and returns them
    /// once every expected connection is in, in node order.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when a port cannot be bound or a peer not reached within
    /// [`DEFAULT_STARTUP`].
    pub fn endpoints(self) -> Result<Vec<TcpEndpoint>> {
        let listeners = (0..self.rings.nodes())
            .map(|i| {
                TcpListener::bind("127.0.0.1:0").map_err(|e| {
                    CoreError::transport(
                        TransportFault::Setup,
                        format!("node {i}: cannot bind a loopback port: {e}"),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let addrs = listeners
            .iter()
            .map(|l| {
                l.local_addr()
                    .map_err(|e| CoreError::transport(TransportFault::Setup, e.to_string()))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut eps = listeners
            .into_iter()
            .enumerate()
            .map(|(node, listener)| {
                TcpEndpoint::start(
                    node,
                    self.token,
                    listener,
                    addrs.clone(),
                    self.rings.local(node),
                    self.rings.remote(node),
                )
            })
            .collect::<Result<Vec<_>>>()?;
        let deadline = Instant::now() + DEFAULT_STARTUP;
        for ep in &mut eps {
            ep.connect_peers(deadline)?;
        }
        for ep in &eps {
            ep.await_peers(deadline)?;
        }
        Ok(eps)
    }
}
