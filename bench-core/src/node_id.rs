//! The one name for a node: protocols, transports, drivers and results all index nodes (servers,
//! workers, peers, coordinators) the same way, from 0 to the run's node count.

/// Index of a node (server, worker, peer or coordinator) in a run, and of its endpoint on the
/// fabric: protocol node `n` is transport node `n` under every driver.
pub type NodeId = usize;
