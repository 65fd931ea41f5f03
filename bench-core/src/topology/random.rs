//! Seeded random regular directed graphs (Hop's property tests use them beside rings).

use super::Topology;
use crate::error::{CoreError, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// A strongly connected directed graph on `n` nodes where every node has in- and out-degree
/// `d` (plus its self-loop): the union of `d` random permutations without fixed points or
/// repeated edges, redrawn until strongly connected.
///
/// # Errors
/// [`CoreError::Topology`] when `d` is 0 or `>= n`, or no such graph was drawn in 1,000 tries.
pub fn random_regular(n: usize, d: usize, seed: u64) -> Result<Topology> {
    if d == 0 || d >= n {
        return Err(CoreError::Topology(format!(
            "a random regular graph on {n} nodes needs a degree in 1..{n}, got {d}"
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5245_4755_4C41_5200);
    'attempt: for _ in 0..1000 {
        let mut t = Topology::with_self_loops(n, format!("random-regular-{d}"))?;
        for _ in 0..d {
            // Draw permutations until one adds n new edges and no self-loop.
            let mut perm: Vec<usize> = (0..n).collect();
            let mut found = false;
            for _ in 0..1000 {
                perm.shuffle(&mut rng);
                if perm
                    .iter()
                    .enumerate()
                    .all(|(src, &dst)| src != dst && t.weight(src, dst) == 0.0)
                {
                    found = true;
                    break;
                }
            }
            if !found {
                continue 'attempt;
            }
            for (src, &dst) in perm.iter().enumerate() {
                t.add_edge(src, dst);
            }
        }
        if t.is_strongly_connected() {
            return Ok(t);
        }
    }
    Err(CoreError::Topology(format!(
        "no strongly connected {d}-regular graph on {n} nodes drawn in 1000 tries"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_and_seeded() {
        let t = random_regular(10, 3, 4).unwrap();
        assert_eq!(t, random_regular(10, 3, 4).unwrap());
        for i in 0..10 {
            assert_eq!(
                (t.in_neighbors(i).len(), t.out_neighbors(i).len()),
                (3, 3),
                "node {i}"
            );
        }
        assert!(t.is_strongly_connected());
        assert!(random_regular(4, 4, 1).is_err());
    }
}
