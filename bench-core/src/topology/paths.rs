//! Reachability and shortest paths (unweighted hops) on a [`Topology`].

use super::Topology;
use std::collections::VecDeque;

/// Hop distances from `src` along the directed edges of `out` (each node's out-neighbours);
/// `None` where unreachable.
fn bfs(out: &[Vec<usize>], src: usize) -> Vec<Option<usize>> {
    let mut dist = vec![None; out.len()];
    dist[src] = Some(0);
    let mut q = VecDeque::from([src]);
    while let Some(u) = q.pop_front() {
        let du = dist[u].unwrap_or(0);
        for &v in &out[u] {
            if dist[v].is_none() {
                dist[v] = Some(du + 1);
                q.push_back(v);
            }
        }
    }
    dist
}

/// All-pairs hop distances: `result[src][dst]`, `None` where `dst` is unreachable from `src`.
///
/// The out-neighbour lists are built once (a scan of the weight matrix per node): a search
/// per node over the matrix itself made this cubic in the nodes, 5 s at 1,024 peers.
pub fn shortest_path_lengths(t: &Topology) -> Vec<Vec<Option<usize>>> {
    let out: Vec<Vec<usize>> = (0..t.nodes()).map(|u| t.out_neighbors(u)).collect();
    (0..t.nodes()).map(|s| bfs(&out, s)).collect()
}

/// True when every node reaches every other.
pub(super) fn strongly_connected(t: &Topology) -> bool {
    shortest_path_lengths(t)
        .iter()
        .all(|row| row.iter().all(Option::is_some))
}

/// Diameter and mean distance over reachable ordered pairs `src != dst`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PathSummary {
    /// Longest shortest path among reachable pairs.
    pub diameter: usize,
    /// Mean shortest path among reachable pairs.
    pub mean: f64,
    /// Ordered pairs with no path.
    pub unreachable_pairs: usize,
}

impl PathSummary {
    /// Summarises the all-pairs distances of `t`.
    pub fn of(t: &Topology) -> Self {
        let d = shortest_path_lengths(t);
        let (mut diameter, mut sum, mut count, mut unreachable) = (0, 0usize, 0usize, 0);
        for (s, row) in d.iter().enumerate() {
            for (dst, v) in row.iter().enumerate() {
                if s == dst {
                    continue;
                }
                match v {
                    Some(h) => {
                        diameter = diameter.max(*h);
                        sum += h;
                        count += 1;
                    }
                    None => unreachable += 1,
                }
            }
        }
        PathSummary {
            diameter,
            mean: if count == 0 {
                0.0
            } else {
                sum as f64 / count as f64
            },
            unreachable_pairs: unreachable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologyKind;

    #[test]
    fn chain_distances() {
        let c = TopologyKind::Chain.build(4).unwrap();
        let d = shortest_path_lengths(&c);
        assert_eq!(d[0][3], Some(3));
        assert_eq!(d[3][0], None);
        let s = PathSummary::of(&c);
        assert_eq!(s.diameter, 3);
        assert_eq!(s.unreachable_pairs, 6);
        let r = TopologyKind::Ring.build(8).unwrap();
        assert_eq!(PathSummary::of(&r).diameter, 4);
    }
}
