//! The TCP backend: one connection per ordered peer pair; each endpoint's receiver threads land
//! incoming frames into the registered slot rings (header first, payload in pieces as it
//! arrives, footer last, the same seqlock as every backend) and deliver the notification after
//! the data.
//!
//! Start-up: every endpoint connects to each node it exchanges rings with (either way) before the
//! run starts, retrying a refused or reset connection with backoff until a start-up deadline,
//! and then waits until each of those nodes has connected to it ([`TcpEndpoint::connect_peers`],
//! [`TcpEndpoint::await_peers`]). No connection is opened lazily mid-run to a peer that may
//! already have finished and closed its listener (the race that made 4-rank runs fail with
//! "connection refused" or "connection reset": a peer connected for the first time to a node
//! whose endpoint had just been dropped).
//!
//! A connection opens with a handshake `[magic, job token, sender]`; a connection with another
//! token is rejected and logged, and the run goes on. Every frame is
//! `[magic | kind, job token, slot, version, length in words, imm0, imm1]` then the payload;
//! the length is bounded by the slot the receiver registered, so a peer sending garbage is cut
//! off with an error naming it. A connection that ends without its closing frame is a lost
//! peer: [`Endpoint::health`] names it, and writes to it fail.

mod connect;
mod endpoint;
mod fabric;
mod receive;
#[cfg(test)]
mod tests;
mod wire;

use std::time::Duration;

/// Start-up deadline of endpoints built outside a cluster job (in-process fabrics), and of a
/// connection opened lazily to a node outside an endpoint's peers.
pub const DEFAULT_STARTUP: Duration = Duration::from_secs(10);

pub use super::RingShape;
pub use endpoint::TcpEndpoint;
pub use fabric::TcpFabric;
