//! Setting an endpoint up, in two typed steps: [`RdmaEndpoint::create`] registers the receive
//! region (laid out as [`crate::transport::region`] places it), the completion queues and a
//! prepared queue pair and staging region per peer, and gives the address to publish;
//! [`PreparedEndpoint::connect`] with every node's address connects the queue pairs and posts
//! the receive requests, giving the [`RdmaEndpoint`] that moves messages.

use super::completion::{checked_entries, CompletionQueue};
use super::endpoint::*;
use super::memory::{self, MemoryRegion};
use super::queue_pair::{PreparedQp, RemoteQp};
use super::{err, RdmaDevice, QUEUE};
use crate::error::Result;
use crate::transport::one_sided::layout::{region_layout, staging_words};
use crate::transport::one_sided::send_tracker::{SendTracker, Signaling};
use crate::transport::one_sided::send_window::STAGED_ENTRIES;
use crate::transport::one_sided::slot_write::SLOT_WRITE_WRS;
use crate::transport::{AlignedWords, NodeId, RingShape};
use std::collections::HashMap;
use std::sync::Arc;

/// The largest node id a work-request id can name ([`super::wr_id`]).
pub(super) const MAX_NODE: NodeId = 0xFFFF;

impl RdmaEndpoint {
    /// Creates node `node`'s verbs objects: its receive region (a ring of the given shape per
    /// sender in `local`), a queue pair and staging region per peer (`local` senders and
    /// `remote` receivers), and the address peers connect with.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when a verbs object cannot be created (what was made is
    /// released).
    pub fn create(
        dev: Arc<RdmaDevice>,
        node: NodeId,
        local: &HashMap<NodeId, RingShape>,
        remote: &HashMap<NodeId, RingShape>,
    ) -> Result<(PreparedEndpoint, RdmaAddress)> {
        if let Some(&big) = local.keys().chain(remote.keys()).chain([&node]).max() {
            if big > MAX_NODE {
                return Err(err(format!(
                    "node ids up to {MAX_NODE} (work-request ids carry 16 bits of peer), got node {big}"
                )));
            }
        }
        let (layout, words) = region_layout(local, QUEUE);
        let region = MemoryRegion::register(&dev, AlignedWords::zeroed(words), true)?;
        // Send completions: per peer at most STAGED_ENTRIES chains in flight, each of at most
        // SLOT_WRITE_WRS + 1 requests (header, length and payload, footer, notification),
        // every one of which completes when it fails (parts are unsignaled).
        // Receive completions: one per posted receive request.
        let chain = SLOT_WRITE_WRS as usize + 1;
        let send_cq = Arc::new(CompletionQueue::create(
            &dev,
            checked_entries(chain * STAGED_ENTRIES * remote.len(), dev.max_cqe(), "send")?,
        )?);
        let recv_cq = Arc::new(CompletionQueue::create(
            &dev,
            checked_entries(QUEUE * local.len(), dev.max_cqe(), "receive")?,
        )?);
        let mut all: Vec<NodeId> = local.keys().chain(remote.keys()).copied().collect();
        all.sort_unstable();
        all.dedup();
        let mut qpn = HashMap::new();
        let mut psn = HashMap::new();
        let mut peers = HashMap::new();
        for peer in all {
            let staging = AlignedWords::zeroed(staging_words(remote.get(&peer).copied()));
            let staging = MemoryRegion::register(&dev, staging, false)?;
            let qp = PreparedQp::create(&dev, &send_cq, &recv_cq, QUEUE as u32)
                .map_err(|e| err(format!("node {node}: queue pair for node {peer}: {e}")))?;
            qpn.insert(peer, qp.number());
            psn.insert(peer, qp.psn());
            peers.insert(peer, (qp, staging));
        }
        let (gid, _) = dev.gid();
        let address = RdmaAddress {
            lid: dev.lid(),
            gid,
            mtu: dev.mtu(),
            qpn,
            psn,
            addr: region.addr(),
            rkey: region.rkey(),
            region: layout.clone(),
        };
        let ep = PreparedEndpoint {
            peers,
            node,
            dev,
            send_cq,
            recv_cq,
            region,
            senders: layout,
        };
        Ok((ep, address))
    }
}

impl PreparedEndpoint {
    /// Connects every queue pair to its peer's (`table[j]` is node `j`'s address), posts the
    /// receive requests, and records where this node writes.
    ///
    /// # Errors
    /// [`CoreError::Transport`] naming the peer whose address lacks this node or whose queue
    /// pair cannot be brought to ready-to-send.
    pub fn connect(self, table: &[RdmaAddress]) -> Result<RdmaEndpoint> {
        let node = self.node;
        let mut ep = RdmaEndpoint {
            peers: HashMap::new(),
            node,
            send_cq: self.send_cq,
            recv_cq: self.recv_cq,
            region: self.region,
            heads: self.senders.keys().map(|&k| (k, 0)).collect(),
            senders: self.senders,
            by_qpn: HashMap::new(),
            sends: SendTracker::new("rdma", node, Signaling::Last),
            dev: self.dev.clone(),
        };
        let mut prepared: Vec<(NodeId, (PreparedQp, MemoryRegion))> =
            self.peers.into_iter().collect();
        prepared.sort_by_key(|p| p.0);
        for (peer, (qp, staging)) in prepared {
            let theirs = table
                .get(peer)
                .ok_or_else(|| err(format!("node {node}: no address for node {peer}")))?;
            let dest = *theirs
                .qpn
                .get(&node)
                .ok_or_else(|| err(format!("node {peer} made no queue pair for node {node}")))?;
            let psn = *theirs
                .psn
                .get(&node)
                .ok_or_else(|| err(format!("node {peer} published no PSN for node {node}")))?;
            let remote = RemoteQp {
                lid: theirs.lid,
                gid: theirs.gid,
                qpn: dest,
                psn,
                mtu: theirs.mtu,
            };
            let qp = qp.connect(
                &self.dev,
                remote,
                &format!("node {node}: queue pair to node {peer}"),
            )?;
            ep.by_qpn.insert(qp.number(), peer);
            ep.peers.insert(
                peer,
                Peer {
                    qp,
                    remote: theirs
                        .region
                        .get(&node)
                        .map(|entry| (theirs.addr, theirs.rkey, *entry)),
                    staging,
                },
            );
            ep.sends.add_peer(peer);
            if ep.senders.contains_key(&peer) {
                for _ in 0..QUEUE {
                    ep.post_recv(peer)?;
                }
            }
        }
        eprintln!(
            "rdma: node {node}: connected to {} peer(s) on {} port {}; {} pinned by this endpoint, {} by this process",
            ep.peers.len(),
            ep.dev.name(),
            ep.dev.port(),
            mib(ep.pinned_bytes()),
            mib(memory::pinned_bytes())
        );
        Ok(ep)
    }
}

/// `bytes` as MiB, with the exact count.
pub(super) fn mib(bytes: u64) -> String {
    format!(
        "{:.1} MiB ({bytes} bytes)",
        bytes as f64 / f64::from(1u32 << 20)
    )
}
