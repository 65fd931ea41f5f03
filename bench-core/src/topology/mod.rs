//! Communication graphs between workers.
//!
//! A [`Topology`] is a weighted directed graph on nodes `0..n`. An edge `src -> dst` means `src`
//! sends its model (or update) to `dst`; it is stored as `A[dst][src] = weight`, so that row `dst`
//! of the adjacency matrix lists what `dst` reduces over. Every node carries a self-loop, because
//! every worker reduces over its own model too (ASAP §3, Hop §2).

mod file;
mod hierarchical;
mod kinds;
mod paths;
mod random;
mod spectral;

pub use file::{parse_edge_list, read_edge_list};
pub use hierarchical::{hierarchical, Gateways};
pub use kinds::TopologyKind;
pub use paths::{shortest_path_lengths, PathSummary};
pub use random::random_regular;
pub use spectral::{
    spectral_gap_eig, spectral_gap_laplacian, spectral_gap_sv, transition_matrix, GraphReport,
    GAP_CONVENTION,
};

use crate::error::{CoreError, Result};

/// Largest graph: weights are a dense n x n matrix (16,384 nodes: 2 GiB of weights).
pub const MAX_NODES: usize = 16_384;

/// A weighted directed communication graph with self-loops on every node.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    n: usize,
    /// Row-major `n x n`; `adj[dst * n + src]` is the weight of edge `src -> dst` (0 = no edge).
    adj: Vec<f64>,
    name: String,
}

impl Topology {
    /// An empty graph on `n` nodes holding only self-loops of weight 1.
    ///
    /// # Errors
    /// [`CoreError::Topology`] when `n < 2`: a single worker has nothing to synchronise with.
    pub fn with_self_loops(n: usize, name: impl Into<String>) -> Result<Self> {
        if n < 2 {
            return Err(CoreError::Topology(format!(
                "a communication graph needs at least 2 nodes, got {n}"
            )));
        }
        if n > MAX_NODES {
            return Err(CoreError::Topology(format!(
                "a communication graph of {n} nodes: graphs are kept as dense n x n weights, at most {MAX_NODES} nodes"
            )));
        }
        let mut adj = vec![0.0; n * n];
        for i in 0..n {
            adj[i * n + i] = 1.0;
        }
        Ok(Topology {
            n,
            adj,
            name: name.into(),
        })
    }

    /// Sets the weight of edge `src -> dst` (overwrites; weight 0 removes it).
    ///
    /// # Panics
    /// When a node index is `>= n` (a programming error; file input is checked before).
    pub fn set_edge(&mut self, src: usize, dst: usize, weight: f64) {
        assert!(
            src < self.n && dst < self.n,
            "edge {src}->{dst} out of range"
        );
        self.adj[dst * self.n + src] = weight;
    }

    /// Adds the edge `src -> dst` with weight 1 unless present.
    pub fn add_edge(&mut self, src: usize, dst: usize) {
        if self.weight(src, dst) == 0.0 {
            self.set_edge(src, dst, 1.0);
        }
    }

    /// Adds `a -> b` and `b -> a`.
    pub fn add_undirected(&mut self, a: usize, b: usize) {
        self.add_edge(a, b);
        self.add_edge(b, a);
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.n
    }

    /// Human-readable name (kind and size, or the file it came from).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Weight of edge `src -> dst` (0 when absent).
    pub fn weight(&self, src: usize, dst: usize) -> f64 {
        self.adj[dst * self.n + src]
    }

    /// Dense adjacency, row `dst`, column `src`.
    pub fn adjacency(&self) -> &[f64] {
        &self.adj
    }

    /// Directed edges `(src, dst, weight)` excluding self-loops, ordered by `(src, dst)`.
    pub fn edges(&self) -> Vec<(usize, usize, f64)> {
        let mut out = Vec::new();
        for src in 0..self.n {
            for dst in 0..self.n {
                let w = self.weight(src, dst);
                if src != dst && w != 0.0 {
                    out.push((src, dst, w));
                }
            }
        }
        out
    }

    /// Nodes that send to `dst`, excluding `dst` itself, ascending.
    pub fn in_neighbors(&self, dst: usize) -> Vec<usize> {
        (0..self.n)
            .filter(|&s| s != dst && self.weight(s, dst) != 0.0)
            .collect()
    }

    /// Nodes that `src` sends to, excluding `src` itself, ascending.
    pub fn out_neighbors(&self, src: usize) -> Vec<usize> {
        (0..self.n)
            .filter(|&d| d != src && self.weight(src, d) != 0.0)
            .collect()
    }

    /// In-degree of `dst` including its self-loop.
    pub fn in_degree(&self, dst: usize) -> usize {
        self.in_neighbors(dst).len() + 1
    }

    /// Out-degree of `src` including its self-loop.
    pub fn out_degree(&self, src: usize) -> usize {
        self.out_neighbors(src).len() + 1
    }

    /// True when every node has the same in-degree and the same out-degree.
    pub fn is_regular(&self) -> bool {
        let d_in = self.in_degree(0);
        let d_out = self.out_degree(0);
        (0..self.n).all(|i| self.in_degree(i) == d_in && self.out_degree(i) == d_out)
    }

    /// True when every node can reach every other along directed edges.
    pub fn is_strongly_connected(&self) -> bool {
        paths::strongly_connected(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_loops_and_edges() {
        let mut t = Topology::with_self_loops(3, "t").unwrap();
        t.add_edge(0, 1);
        assert_eq!(t.weight(0, 1), 1.0);
        assert_eq!(t.weight(1, 0), 0.0);
        assert_eq!(t.in_degree(1), 2);
        assert_eq!(t.out_degree(0), 2);
        assert_eq!(t.edges(), vec![(0, 1, 1.0)]);
        assert!(!t.is_strongly_connected());
    }

    #[test]
    fn rejects_single_node() {
        assert!(Topology::with_self_loops(1, "x").is_err());
    }
}
