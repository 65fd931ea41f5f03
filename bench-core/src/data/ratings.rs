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

#[cfg(test)]
mod tests {
    use super::*;

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
