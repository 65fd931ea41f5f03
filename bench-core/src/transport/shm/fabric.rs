//! Builder of a shared-memory fabric whose endpoints all live in this process (tests,
//! benchmarks), the pattern each rank follows with its own nodes.

use super::super::ring::RingTable;
use super::super::NodeId;
use super::endpoint::*;
use super::segment::*;
use crate::error::Result;
use std::path::PathBuf;

/// Builder of a shared-memory fabric whose endpoints all live in this process (tests,
/// benchmarks), the pattern each rank follows with its own nodes.
#[derive(Debug)]
pub struct ShmFabric {
    token: u64,
    dir: PathBuf,
    rings: RingTable,
}

impl ShmFabric {
    /// A fabric of `nodes` endpoints with segments in `dir` under job token `token`.
    pub fn new(nodes: usize, token: u64, dir: PathBuf) -> Self {
        ShmFabric {
            token,
            dir,
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

    /// Creates every segment, connects every endpoint and unlinks the files; endpoints in
    /// node order.
    ///
    /// # Errors
    /// [`CoreError::Transport`] when a segment cannot be created or mapped.
    pub fn endpoints(self) -> Result<Vec<ShmEndpoint>> {
        let paths: Vec<PathBuf> = (0..self.rings.nodes())
            .map(|n| segment_path(&self.dir, self.token, n))
            .collect();
        let mut eps = (0..self.rings.nodes())
            .map(|node| {
                ShmEndpoint::create(
                    node,
                    self.token,
                    paths[node].clone(),
                    self.rings.local(node),
                    self.rings.remote(node),
                )
            })
            .collect::<Result<Vec<_>>>()?;
        for e in &mut eps {
            e.connect(&paths)?;
        }
        for e in &mut eps {
            e.unlink();
        }
        Ok(eps)
    }
}
