//! Seeded ratings generator: a low-rank model plus noise, with power-law item popularity
//! (Netflix-shaped at small scale).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

/// One observed rating.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Rating {
    /// Row (user) index.
    pub user: u32,
    /// Column (item) index.
    pub item: u32,
    /// Observed value.
    pub value: f32,
}

/// Shape of a synthetic ratings matrix.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatingsShape {
    /// Users (rows of D).
    pub users: usize,
    /// Items (columns of D).
    pub items: usize,
    /// Observed entries to draw.
    pub ratings: usize,
    /// Rank of the hidden model.
    pub rank: usize,
    /// Standard deviation of the additive noise.
    pub noise: f64,
    /// Zipf exponent of item popularity (0 = uniform).
    pub popularity_exponent: f64,
}

impl RatingsShape {
    /// Draws the ratings from `seed`: `D_ij = <u_i, v_j> + noise`, with `u`, `v` Gaussian of
    /// variance `1/sqrt(rank)` per entry (so values are O(1)), items drawn with probability
    /// proportional to `(j+1)^-exponent`, users uniformly. Duplicate (user, item) pairs are
    /// allowed, as repeated observations.
    pub fn generate(&self, seed: u64) -> Vec<Rating> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let scale = (1.0 / (self.rank.max(1) as f64).sqrt()).sqrt();
        let normal = Normal::new(0.0, scale).expect("valid normal");
        let u: Vec<f64> = (0..self.users * self.rank)
            .map(|_| normal.sample(&mut rng))
            .collect();
        let v: Vec<f64> = (0..self.items * self.rank)
            .map(|_| normal.sample(&mut rng))
            .collect();
        let noise = Normal::new(0.0, self.noise.max(0.0)).expect("valid normal");
        // cumulative popularity for inverse-CDF sampling
        let mut cdf: Vec<f64> = (0..self.items)
            .map(|j| ((j + 1) as f64).powf(-self.popularity_exponent))
            .collect();
        let mut acc = 0.0;
        for c in cdf.iter_mut() {
            acc += *c;
            *c = acc;
        }
        (0..self.ratings)
            .map(|_| {
                let i = rng.gen_range(0..self.users);
                let x = rng.gen::<f64>() * acc;
                let j = cdf.partition_point(|&c| c < x).min(self.items - 1);
                let dot: f64 = (0..self.rank)
                    .map(|k| u[i * self.rank + k] * v[j * self.rank + k])
                    .sum();
                Rating {
                    user: i as u32,
                    item: j as u32,
                    value: (dot + noise.sample(&mut rng)) as f32,
                }
            })
            .collect()
    }
}

/// Partitions `ratings` by user over `parts` workers, as
/// ESSP §"SGD for Low Rank Matrix Factorization" stores `D_obs` on the workers: sorted by user, so
/// each contiguous share of `len / parts` ratings (the share
/// [`crate::workload::MatrixFactorization`] gives a worker) holds whole users except at its edges,
/// then shuffled within each share from `seed`, so mini-batches mix that worker's users.
pub fn partition_by_user(ratings: &mut [Rating], parts: usize, seed: u64) {
    ratings.sort_by_key(|r| r.user);
    let share = (ratings.len() / parts.max(1)).max(1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for chunk in ratings.chunks_mut(share) {
        shuffle(chunk, &mut rng);
    }
}

/// Shuffles `items` in a seeded order (Fisher-Yates over ChaCha8).
pub fn seeded_shuffle<T>(items: &mut [T], seed: u64) {
    shuffle(items, &mut ChaCha8Rng::seed_from_u64(seed));
}

fn shuffle<T>(items: &mut [T], rng: &mut ChaCha8Rng) {
    for i in (1..items.len()).rev() {
        items.swap(i, rng.gen_range(0..=i));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_keeps_users_on_one_worker() {
        let s = RatingsShape {
            users: 40,
            items: 30,
            ratings: 4000,
            rank: 3,
            noise: 0.1,
            popularity_exponent: 1.0,
        };
        let mut a = s.generate(1);
        let mut before = a.clone();
        partition_by_user(&mut a, 4, 9);
        // Same ratings, each user within one share (40 users, 10 per share on average, a
        // share boundary may split one).
        let key = |r: &Rating| (r.user, r.item, r.value.to_bits());
        let mut sorted = a.clone();
        sorted.sort_by_key(key);
        before.sort_by_key(key);
        assert_eq!(sorted, before);
        let mut owners = vec![std::collections::BTreeSet::new(); 40];
        for (i, r) in a.iter().enumerate() {
            owners[r.user as usize].insert(i / 1000);
        }
        assert!(owners.iter().all(|o| o.len() <= 2), "{owners:?}");
        assert!(owners.iter().filter(|o| o.len() == 2).count() <= 3);
        // Shuffled within a share: not sorted by user any more.
        assert!(a[..1000].windows(2).any(|w| w[0].user > w[1].user));
    }

    #[test]
    fn seeded_power_law() {
        let s = RatingsShape {
            users: 100,
            items: 50,
            ratings: 5000,
            rank: 5,
            noise: 0.1,
            popularity_exponent: 1.0,
        };
        let a = s.generate(1);
        assert_eq!(a, s.generate(1));
        assert_ne!(a, s.generate(2));
        let first = a.iter().filter(|r| r.item == 0).count();
        let last = a.iter().filter(|r| r.item == 49).count();
        assert!(first > 10 * last.max(1), "{first} vs {last}");
        assert!(a
            .iter()
            .all(|r| (r.user as usize) < 100 && r.value.is_finite()));
    }
}
