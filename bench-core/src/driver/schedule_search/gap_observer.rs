//! A simulator observer that measures iteration gaps between peers against Table 1's bounds.

use crate::driver::sim::SimObserver;
use crate::error::Result;
use crate::protocol::peer::{gap_bound, GapBound, PeerSettings};
use crate::protocol::{NodeId, Protocol};

/// Per ordered pair `(i, j)`: the largest `Iter(i) - Iter(j)` seen after any step, and the
/// bound it must respect.
#[derive(Debug, Clone)]
pub struct GapObserver {
    bound: Vec<Vec<GapBound>>,
    /// `max_gap[i][j]`: largest `Iter(i) - Iter(j)` observed (0 when never ahead).
    pub max_gap: Vec<Vec<u64>>,
    /// Observations above the bound: `(time, i, j, gap)`, first 16 kept.
    pub violations: Vec<(u64, usize, usize, u64)>,
    /// Total observations above the bound (pairs compared when one of them changed iteration).
    pub violation_count: u64,
    /// Each node's iteration when it was last compared: a step that leaves it unchanged
    /// changes no gap (the others' changes were compared at their own steps).
    last: Vec<Option<u64>>,
}

impl GapObserver {
    /// An observer for `settings` on a graph with hop distances `paths`.
    pub fn new(settings: &PeerSettings, paths: &[Vec<Option<usize>>]) -> Self {
        let n = paths.len();
        GapObserver {
            bound: (0..n)
                .map(|i| (0..n).map(|j| gap_bound(settings, paths, i, j)).collect())
                .collect(),
            max_gap: vec![vec![0; n]; n],
            violations: Vec::new(),
            violation_count: 0,
            last: vec![None; n],
        }
    }

    /// The bound of pair `(i, j)`.
    pub fn bound(&self, i: usize, j: usize) -> GapBound {
        self.bound[i][j]
    }

    /// Pairs whose observed gap reached their finite bound.
    pub fn pairs_at_bound(&self) -> usize {
        let n = self.max_gap.len();
        (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .filter(|&(i, j)| i != j && self.bound[i][j].finite() == Some(self.max_gap[i][j]))
            .count()
    }
}

impl SimObserver for GapObserver {
    fn after_step(&mut self, now: u64, node: NodeId, nodes: &[Box<dyn Protocol>]) -> Result<()> {
        let Some(me) = nodes[node].iteration() else {
            return Ok(());
        };
        if self.last.get(node) == Some(&Some(me)) {
            return Ok(());
        }
        if let Some(l) = self.last.get_mut(node) {
            *l = Some(me);
        }
        for (j, other) in nodes.iter().enumerate() {
            let Some(it) = other.iteration() else {
                continue;
            };
            // Only `node` changed: compare it both ways with everyone else.
            for (a, b, gap) in [
                (node, j, me.saturating_sub(it)),
                (j, node, it.saturating_sub(me)),
            ] {
                if gap > self.max_gap[a][b] {
                    self.max_gap[a][b] = gap;
                }
                if matches!(self.bound[a][b], GapBound::Finite(x) if gap > x) {
                    self.violation_count += 1;
                    if self.violations.len() < 16 {
                        self.violations.push((now, a, b, gap));
                    }
                }
            }
        }
        Ok(())
    }
}
