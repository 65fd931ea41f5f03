//! Hierarchical graphs for workers placed unevenly on machines (Hop §7.3.6, Fig 21): an
//! all-reduce (complete graph) inside every machine and a bidirectional ring between machines.

use super::Topology;
use crate::error::{CoreError, Result};

/// Which nodes of a machine carry its links to the previous and the next machine of the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gateways {
    /// One node (the machine's first) carries both links (Hop Fig 21 b, gap 0.2682 for 4/2/2).
    Shared,
    /// The machine's first node links to the previous machine, its last to the next (Fig 21 c,
    /// gap 0.2688 for 4/2/2; a one-node machine uses its only node for both).
    Spread,
}

impl Gateways {
    /// Label used in graph names.
    pub fn label(&self) -> &'static str {
        match self {
            Gateways::Shared => "shared",
            Gateways::Spread => "spread",
        }
    }
}

/// The hierarchical graph of `placement` (`placement[node]` = its machine, machines numbered
/// `0..M` with every one used): complete inside each machine; machine `m`'s outgoing gateway
/// linked both ways to machine `m + 1`'s incoming gateway, around a ring of the machines (two
/// machines: one link; one machine: none).
///
/// # Errors
/// [`CoreError::Topology`] for fewer than 2 nodes or a machine number with no node.
pub fn hierarchical(placement: &[usize], gateways: Gateways) -> Result<Topology> {
    let n = placement.len();
    let machines = placement.iter().max().map_or(0, |m| m + 1);
    let members: Vec<Vec<usize>> = (0..machines)
        .map(|m| (0..n).filter(|&i| placement[i] == m).collect())
        .collect();
    if let Some(m) = members.iter().position(|v| v.is_empty()) {
        return Err(CoreError::Topology(format!(
            "machine {m} has no worker in placement {placement:?}"
        )));
    }
    let label = members
        .iter()
        .map(|v| v.len().to_string())
        .collect::<Vec<_>>()
        .join("-");
    let mut t = Topology::with_self_loops(n, format!("hierarchical-{}-{label}", gateways.label()))?;
    for v in &members {
        for (k, &a) in v.iter().enumerate() {
            for &b in &v[k + 1..] {
                t.add_undirected(a, b);
            }
        }
    }
    let incoming = |m: usize| members[m][0];
    let outgoing = |m: usize| match gateways {
        Gateways::Shared => members[m][0],
        Gateways::Spread => *members[m].last().expect("non-empty"),
    };
    let links = match machines {
        0 | 1 => 0,
        2 => 1,
        m => m,
    };
    for m in 0..links {
        t.add_undirected(outgoing(m), incoming((m + 1) % machines));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{spectral_gap_laplacian, TopologyKind};

    #[test]
    fn reproduces_hop_fig21_gaps() {
        let placement = [0, 0, 0, 0, 1, 1, 2, 2];
        let shared = hierarchical(&placement, Gateways::Shared).unwrap();
        let spread = hierarchical(&placement, Gateways::Spread).unwrap();
        let ring_based = TopologyKind::parse("ring-based").unwrap().build(8).unwrap();
        let g = |t| spectral_gap_laplacian(t).unwrap();
        assert!((g(&ring_based) - 0.6667).abs() < 5e-5, "{}", g(&ring_based));
        assert!((g(&shared) - 0.2682).abs() < 5e-5, "{}", g(&shared));
        assert!((g(&spread) - 0.2688).abs() < 5e-5, "{}", g(&spread));
        assert!(shared.is_strongly_connected() && spread.is_strongly_connected());
        assert_eq!(shared.name(), "hierarchical-shared-4-2-2");
        // 6 + 1 + 1 edges inside machines, 3 between: 11 undirected = 22 directed.
        assert_eq!(shared.edges().len(), 22);
    }

    #[test]
    fn an_empty_machine_is_an_error() {
        let e = hierarchical(&[0, 0, 2], Gateways::Shared).unwrap_err();
        assert!(e.to_string().contains("machine 1 has no worker"), "{e}");
    }
}
