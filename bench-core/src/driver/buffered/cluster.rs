//! The receive-buffer reduce across processes: peer `i` runs on rank `i mod size` over tcp or
//! shm, each receiver registering one single-slot ring per in-neighbour as under [`super::threads`];
//! BSP's barrier is the cluster barrier, on a path of its own, so it does not wait for writes in
//! flight. Over tcp, writes land in pieces as bytes arrive while readers read: tearing is real.

use super::threads::{join_peers, merge, spawn_peers, PeerOutcome};
use super::{BufferedConfig, BufferedRecords, BufferedSetup};
use crate::driver::cluster::job::{self, JobPlan, Joiner};
use crate::driver::cluster::{ClusterTransport, PeerBarrier, Session};
use crate::error::{CoreError, Result};
use crate::protocol::buffered::BufferedPeer;
use crate::transport::tcp::RingShape;
use std::collections::HashMap;
use std::sync::Arc;

/// Runs the peers of `setup` across the job's ranks (this process runs its share).
///
/// # Errors
/// Bad settings, or [`CoreError::Cluster`] naming the rank that failed or was lost; the same
/// error on every rank.
pub fn run(
    session: &mut Session,
    transport: ClusterTransport,
    cfg: &BufferedConfig,
    setup: &BufferedSetup<'_>,
) -> Result<BufferedRecords> {
    let n = setup.topology.nodes();
    cfg.validate(n)?;
    let peers = setup.peers(cfg.iterations)?;
    let shape = RingShape {
        capacity: setup.workload.dim().div_ceil(2),
        depth: 1,
    };
    let rings = peers
        .iter()
        .flat_map(|p| p.ins().iter().map(move |&from| (from, p.node(), shape)))
        .collect();
    let plan = JobPlan {
        nodes: n,
        fingerprint: format!(
            "buffered {} {} {:?} {shape:?} {}",
            setup.mode.label(),
            setup.topology.name(),
            setup.topology.edges(),
            cfg.iterations
        ),
        seed: setup.seed,
        rings,
        barrier: true,
    };
    let (rank, size) = (session.spec().rank, session.spec().size);
    let mut mine: HashMap<usize, BufferedPeer> = peers
        .into_iter()
        .filter(|p| p.node() % size == rank)
        .map(|p| (p.node(), p))
        .collect();
    let mut outcomes: Vec<PeerOutcome> = job::run_job(session, transport, &plan, |js| {
        let own = js
            .endpoints
            .into_iter()
            .map(|(node, ep)| {
                let peer = mine.remove(&node).ok_or_else(|| CoreError::Protocol {
                    node,
                    message: "no peer for this node on its rank".into(),
                })?;
                Ok((peer, ep))
            })
            .collect::<Result<Vec<_>>>()?;
        let barrier: Arc<dyn PeerBarrier> = js
            .barrier
            .ok_or_else(|| CoreError::Config("the job was planned without a barrier".into()))?;
        let handles = spawn_peers(cfg, setup, own, barrier, js.start, js.abort)?;
        Ok(Box::new(move || join_peers(handles)) as Joiner<PeerOutcome>)
    })?;
    outcomes.sort_by_key(|o| o.node);
    Ok(merge(n, outcomes))
}
