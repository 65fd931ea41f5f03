//! Hop's Table 1: upper bounds on the iteration gap Iter(i) - Iter(j).

use super::{PeerMode, PeerSettings};

/// An upper bound on an iteration gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GapBound {
    /// At most this many iterations.
    Finite(u64),
    /// No bound.
    Unbounded,
}

impl GapBound {
    /// The finite value, if any.
    pub fn finite(self) -> Option<u64> {
        match self {
            GapBound::Finite(b) => Some(b),
            GapBound::Unbounded => None,
        }
    }

    fn min(self, o: GapBound) -> GapBound {
        std::cmp::min(self, o)
    }
}

/// Table 1's bound on `Iter(i) - Iter(j)` for `settings`, with `paths[a][b]` the hop distance
/// from a to b (strongly connected graph, so every entry is Some).
///
/// * standard: len(j->i); bounded staleness s: (s+1) len(j->i); backup workers: unbounded;
/// * NOTIFY-ACK: min(len(j->i), 2 len(i->j));
/// * with token queues: min(b0 len(j->i), max_i len(i->j)), where b0 is the per-edge bound of
///   the setting without tokens (1, s+1, or unbounded for backup workers).
pub fn gap_bound(
    settings: &PeerSettings,
    paths: &[Vec<Option<usize>>],
    i: usize,
    j: usize,
) -> GapBound {
    if i == j {
        return GapBound::Finite(0);
    }
    let len = |a: usize, b: usize| paths[a][b].map_or(u64::MAX, |l| l as u64);
    let (ji, ij) = (len(j, i), len(i, j));
    let forward = match settings.mode {
        PeerMode::Standard | PeerMode::NotifyAck => GapBound::Finite(ji),
        PeerMode::Staleness { s } => GapBound::Finite((s + 1).saturating_mul(ji)),
        PeerMode::Backup { .. } => GapBound::Unbounded,
    };
    let mut b = forward;
    if settings.mode == PeerMode::NotifyAck {
        b = b.min(GapBound::Finite(2u64.saturating_mul(ij)));
    }
    if let Some(m) = settings.max_i {
        b = b.min(GapBound::Finite(m.saturating_mul(ij)));
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{shortest_path_lengths, TopologyKind};

    #[test]
    fn table1_on_a_ring() {
        let t = TopologyKind::Ring.build(8).unwrap();
        let p = shortest_path_lengths(&t);
        let s = |mode, max_i| PeerSettings {
            serial: false,
            mode,
            max_i,
            iterations: 10,
            skip: None,
        };
        // Nodes 0 and 2 are two hops apart both ways on a bidirectional ring.
        assert_eq!(
            gap_bound(&s(PeerMode::Standard, None), &p, 0, 2),
            GapBound::Finite(2)
        );
        assert_eq!(
            gap_bound(&s(PeerMode::Staleness { s: 3 }, None), &p, 0, 2),
            GapBound::Finite(8)
        );
        assert_eq!(
            gap_bound(&s(PeerMode::Backup { backups: 1 }, None), &p, 0, 2),
            GapBound::Unbounded
        );
        assert_eq!(
            gap_bound(&s(PeerMode::Backup { backups: 1 }, Some(3)), &p, 0, 2),
            GapBound::Finite(6)
        );
        assert_eq!(
            gap_bound(&s(PeerMode::NotifyAck, None), &p, 0, 1),
            GapBound::Finite(1)
        );
        assert_eq!(
            gap_bound(&s(PeerMode::Staleness { s: 3 }, Some(2)), &p, 0, 1),
            GapBound::Finite(2)
        );
    }
}
