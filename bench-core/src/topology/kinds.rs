//! Named graph families used by the papers.
//!
//! Conventions (documented because the papers leave them open):
//! * root expander (ASAP Fig 3c): `i -> (i+1) mod n` and `i -> (i+floor(sqrt n)) mod n`.
//! * chain (ASAP Fig 3d): `i -> i+1` for `i < n-1`, no wrap-around.
//! * star (ASAP Fig 3b, parameter server): node 0 is the server, `0 <-> i` for every worker.
//! * ring (Hop Fig 11.1): `i <-> i+1 mod n`.
//! * ring-based (Hop Fig 11.2): ring plus `i <-> i + n/2` (the most distant node).
//! * double-ring (Hop Fig 11.3): two ring-based graphs on the halves `0..n/2` and `n/2..n`, node
//!   `i` of the first joined to node `i` of the second (`i <-> i + n/2`). Needs even `n >= 4`.
//! * MALT Halton of degree k (ASAP Fig 10, MALT): `i -> (i + o_j) mod n` where `o_j = floor(n h_j)`
//!   and `h_1, h_2, ... = 1/2, 1/4, 3/4, 1/8, 5/8, ...` is the base-2 Halton (van der Corput)
//!   sequence. Offsets of 0 (small n) add nothing beyond the self-loop.

use super::Topology;
use crate::error::{CoreError, Result};

/// The graph families the harness can build by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopologyKind {
    /// Every node sends to every other (all-reduce).
    Complete,
    /// Parameter server: node 0 exchanges with every other node.
    Star,
    /// ASAP's root expander of out-degree 2.
    RootExpander,
    /// Directed chain without wrap-around.
    Chain,
    /// Bidirectional ring.
    Ring,
    /// Ring plus a chord to the most distant node.
    RingBased,
    /// Two ring-based graphs joined node to node.
    DoubleRing,
    /// MALT's Halton graph with the given out-degree.
    MaltHalton(usize),
}

impl TopologyKind {
    /// Every accepted spelling, for `--help` and error messages.
    pub const NAMES: &'static str =
        "complete (all-reduce), star (ps), root-expander (expander), chain, ring, ring-based, double-ring, malt (malt-K for degree K, default 2)";

    /// Parses a kind name as used on the command line.
    ///
    /// # Errors
    /// [`CoreError::Topology`] naming the unknown kind and the accepted ones.
    pub fn parse(name: &str) -> Result<Self> {
        let lower = name.to_ascii_lowercase();
        Ok(match lower.as_str() {
            "complete" | "all-reduce" | "allreduce" => TopologyKind::Complete,
            "star" | "ps" | "parameter-server" => TopologyKind::Star,
            "root-expander" | "expander" | "root" => TopologyKind::RootExpander,
            "chain" => TopologyKind::Chain,
            "ring" => TopologyKind::Ring,
            "ring-based" => TopologyKind::RingBased,
            "double-ring" => TopologyKind::DoubleRing,
            "malt" | "malt-halton" => TopologyKind::MaltHalton(2),
            other => {
                if let Some(k) = other
                    .strip_prefix("malt-")
                    .and_then(|d| d.parse::<usize>().ok())
                {
                    if k == 0 {
                        return Err(CoreError::Topology("malt degree must be >= 1".into()));
                    }
                    TopologyKind::MaltHalton(k)
                } else {
                    return Err(CoreError::Topology(format!(
                        "unknown graph kind '{name}'; known kinds: {}",
                        Self::NAMES
                    )));
                }
            }
        })
    }

    /// Short stable name used in CSV files.
    pub fn label(&self) -> String {
        match self {
            TopologyKind::Complete => "complete".into(),
            TopologyKind::Star => "star".into(),
            TopologyKind::RootExpander => "root-expander".into(),
            TopologyKind::Chain => "chain".into(),
            TopologyKind::Ring => "ring".into(),
            TopologyKind::RingBased => "ring-based".into(),
            TopologyKind::DoubleRing => "double-ring".into(),
            TopologyKind::MaltHalton(k) => format!("malt-{k}"),
        }
    }

    /// Builds the graph on `n` nodes.
    ///
    /// # Errors
    /// [`CoreError::Topology`] when `n < 2`, or for double-ring when `n` is odd or below 4.
    pub fn build(&self, n: usize) -> Result<Topology> {
        let mut t = Topology::with_self_loops(n, format!("{}-{n}", self.label()))?;
        match *self {
            TopologyKind::Complete => {
                for a in 0..n {
                    for b in 0..n {
                        if a != b {
                            t.add_edge(a, b);
                        }
                    }
                }
            }
            TopologyKind::Star => {
                for w in 1..n {
                    t.add_undirected(0, w);
                }
            }
            TopologyKind::RootExpander => {
                let root = (n as f64).sqrt().floor() as usize;
                for i in 0..n {
                    for off in [1, root] {
                        let j = (i + off) % n;
                        if j != i {
                            t.add_edge(i, j);
                        }
                    }
                }
            }
            TopologyKind::Chain => {
                for i in 0..n - 1 {
                    t.add_edge(i, i + 1);
                }
            }
            TopologyKind::Ring => ring(&mut t, 0, n),
            TopologyKind::RingBased => ring_based(&mut t, 0, n),
            TopologyKind::DoubleRing => {
                if n < 4 || !n.is_multiple_of(2) {
                    return Err(CoreError::Topology(format!(
                        "double-ring needs an even node count >= 4, got {n}"
                    )));
                }
                let h = n / 2;
                ring_based(&mut t, 0, h);
                ring_based(&mut t, h, h);
                for i in 0..h {
                    t.add_undirected(i, i + h);
                }
            }
            TopologyKind::MaltHalton(k) => {
                for off in halton_offsets(n, k) {
                    for i in 0..n {
                        let j = (i + off) % n;
                        if j != i {
                            t.add_edge(i, j);
                        }
                    }
                }
            }
        }
        Ok(t)
    }
}

fn ring(t: &mut Topology, base: usize, len: usize) {
    if len < 2 {
        return;
    }
    for i in 0..len {
        t.add_undirected(base + i, base + (i + 1) % len);
    }
}

fn ring_based(t: &mut Topology, base: usize, len: usize) {
    ring(t, base, len);
    if len >= 3 {
        for i in 0..len {
            t.add_undirected(base + i, base + (i + len / 2) % len);
        }
    }
}

/// The first `k` base-2 Halton (van der Corput) fractions: 1/2, 1/4, 3/4, 1/8, 5/8, 3/8, 7/8, ...
pub fn halton_base2(k: usize) -> Vec<f64> {
    (1..=k)
        .map(|mut i| {
            let (mut f, mut r) = (1.0, 0.0);
            while i > 0 {
                f /= 2.0;
                r += f * (i % 2) as f64;
                i /= 2;
            }
            r
        })
        .collect()
}

/// MALT's offsets `floor(n * h_j)` for the first `k` Halton fractions.
pub fn halton_offsets(n: usize, k: usize) -> Vec<usize> {
    halton_base2(k)
        .into_iter()
        .map(|h| (n as f64 * h).floor() as usize)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halton_sequence() {
        assert_eq!(halton_base2(5), vec![0.5, 0.25, 0.75, 0.125, 0.625]);
        assert_eq!(halton_offsets(16, 3), vec![8, 4, 12]);
    }

    #[test]
    fn degrees() {
        let e = TopologyKind::RootExpander.build(25).unwrap();
        assert!((0..25).all(|i| e.out_degree(i) == 3));
        assert!(e.is_regular());
        let c = TopologyKind::Chain.build(5).unwrap();
        assert_eq!(c.edges().len(), 4);
        let s = TopologyKind::Star.build(6).unwrap();
        assert_eq!(s.in_degree(0), 6);
        let rb = TopologyKind::RingBased.build(16).unwrap();
        assert!((0..16).all(|i| rb.in_degree(i) == 4));
        let dr = TopologyKind::DoubleRing.build(16).unwrap();
        assert!((0..16).all(|i| dr.in_degree(i) == 5));
        assert!(dr.is_strongly_connected());
    }

    #[test]
    fn parse_names() {
        assert_eq!(TopologyKind::parse("ps").unwrap(), TopologyKind::Star);
        assert_eq!(
            TopologyKind::parse("malt-3").unwrap(),
            TopologyKind::MaltHalton(3)
        );
        let e = TopologyKind::parse("hypercube").unwrap_err().to_string();
        assert!(e.contains("hypercube"), "{e}");
        assert!(TopologyKind::DoubleRing.build(5).is_err());
    }
}
