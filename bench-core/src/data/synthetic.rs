//! Seeded generators of sparse classification data with the papers' dataset shapes.

use super::CsrMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal, Normal, Poisson};

/// Shape of a sparse binary-classification dataset.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SparseClassification {
    /// Rows to generate.
    pub rows: usize,
    /// Feature count.
    pub features: usize,
    /// Mean non-zeros per row (Poisson distributed, at least 1).
    pub nnz_per_row: f64,
    /// Share of labels flipped after labelling with the hidden model.
    pub label_noise: f64,
    /// Share of features (the most frequent ones) that carry the class: the hidden model's
    /// support, or with `topic_share > 0` the two classes' topic vocabularies.
    pub informative: f64,
    /// Share of each row's non-zeros drawn from its class's topic vocabulary (0: labels from
    /// a hidden linear model instead; see [`SparseClassification::generate`]).
    #[serde(default)]
    pub topic_share: f64,
}

/// RCV1 (binary) shape: 47,236 features, about 75 non-zeros per row, 10% flipped labels.
pub struct Rcv1Shape;

impl Rcv1Shape {
    /// RCV1-shaped data with `rows` rows.
    pub fn with_rows(rows: usize) -> SparseClassification {
        SparseClassification {
            rows,
            features: 47_236,
            nnz_per_row: 75.0,
            label_noise: 0.10,
            informative: 0.01,
            topic_share: 0.0,
        }
    }
}

impl SparseClassification {
    /// Generates the data from `seed`. Same seed, same matrix.
    ///
    /// Feature popularity follows a Zipf-like law (index drawn as `features * u^2`, so low indices
    /// are frequent as in tf-idf corpora); values are log-normal term weights normalised to unit
    /// L2 norm per row. Labels come from one of two models:
    ///
    /// * `topic_share == 0`: the sign of a hidden Gaussian model's score over the `informative`
    ///   share of most frequent features, then flipped with probability `label_noise`.
    /// * `topic_share > 0`, a class-conditional (topic) model, as text classes are: the class
    ///   is drawn first (balanced), and each non-zero comes with probability `topic_share` from
    ///   the class's topic vocabulary (the even, resp. odd, indices among the `informative`
    ///   share of most frequent features, Zipf-like within it), else from the shared Zipf law;
    ///   then the label is flipped with probability `label_noise`. A linear model separates
    ///   the classes by the log-odds of the topic words, as it does on RCV1 or webspam, and
    ///   `topic_share` and `label_noise` set how well (see `syncbench twins`).
    pub fn generate(&self, seed: u64) -> CsrMatrix {
        if self.topic_share > 0.0 {
            return self.generate_topics(seed);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let normal = Normal::new(0.0f32, 1.0).expect("valid normal");
        let informative = ((self.features as f64) * self.informative).ceil() as usize;
        let hidden: Vec<f32> = (0..self.features)
            .map(|i| {
                if i < informative {
                    normal.sample(&mut rng)
                } else {
                    0.0
                }
            })
            .collect();
        let nnz = Poisson::new(self.nnz_per_row.max(1e-9)).expect("valid poisson");
        let weight = LogNormal::new(0.0f32, 0.6).expect("valid lognormal");
        let mut m = CsrMatrix::new(self.features);
        let mut row: Vec<(u32, f32)> = Vec::new();
        for _ in 0..self.rows {
            let k = (nnz.sample(&mut rng) as usize).clamp(1, self.features);
            row.clear();
            while row.len() < k {
                let u: f64 = rng.gen();
                let idx = ((self.features as f64) * u * u) as u32;
                let idx = idx.min(self.features as u32 - 1);
                if !row.iter().any(|&(i, _)| i == idx) {
                    row.push((idx, weight.sample(&mut rng)));
                }
            }
            unit_norm(&mut row);
            let score: f32 = row.iter().map(|&(i, v)| hidden[i as usize] * v).sum();
            let mut label = if score >= 0.0 { 1.0 } else { -1.0 };
            if rng.gen::<f64>() < self.label_noise {
                label = -label;
            }
            m.push_row(&row, label);
        }
        m
    }

    fn generate_topics(&self, seed: u64) -> CsrMatrix {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let nnz = Poisson::new(self.nnz_per_row.max(1e-9)).expect("valid poisson");
        let weight = LogNormal::new(0.0f32, 0.6).expect("valid lognormal");
        // Each class's topic words: half of the informative head (at least one word each).
        let per_class = (((self.features as f64) * self.informative / 2.0).ceil() as usize)
            .clamp(1, (self.features / 2).max(1));
        let mut m = CsrMatrix::new(self.features);
        let mut row: Vec<(u32, f32)> = Vec::new();
        for _ in 0..self.rows {
            let positive = rng.gen::<bool>();
            let k = (nnz.sample(&mut rng) as usize).clamp(1, self.features);
            row.clear();
            let mut tries = 0;
            while row.len() < k && tries < 100 * k {
                tries += 1;
                let u: f64 = rng.gen();
                let idx = if rng.gen::<f64>() < self.topic_share {
                    let j = ((per_class as f64) * u * u) as usize;
                    2 * j.min(per_class - 1) + usize::from(!positive)
                } else {
                    ((self.features as f64) * u * u) as usize
                };
                let idx = idx.min(self.features - 1) as u32;
                if !row.iter().any(|&(i, _)| i == idx) {
                    row.push((idx, weight.sample(&mut rng)));
                }
            }
            unit_norm(&mut row);
            let mut label = if positive { 1.0 } else { -1.0 };
            if rng.gen::<f64>() < self.label_noise {
                label = -label;
            }
            m.push_row(&row, label);
        }
        m
    }
}

/// Sorts a row by index and scales it to unit L2 norm.
fn unit_norm(row: &mut [(u32, f32)]) {
    row.sort_unstable_by_key(|&(i, _)| i);
    let norm = row.iter().map(|&(_, v)| v * v).sum::<f32>().sqrt();
    for e in row.iter_mut() {
        e.1 /= norm;
    }
}

/// A random design with uniformly placed non-zeros: the dense-ish LIBSVM sets (epsilon:
/// dense, unit-norm rows; mnist8m: about 19% non-zero, non-negative pixels).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomDesign {
    /// Rows to generate.
    pub rows: usize,
    /// Feature count.
    pub features: usize,
    /// Probability that an entry is non-zero, in (0, 1].
    pub density: f64,
    /// Non-negative values (|N(0,1)|, like pixel intensities) instead of N(0,1).
    pub nonnegative: bool,
    /// Share of labels flipped after labelling with the hidden model.
    pub label_noise: f64,
}

impl RandomDesign {
    /// Generates the data from `seed`: each entry non-zero with probability `density`, values
    /// Gaussian (or their absolute value), rows normalised to unit L2 norm, labels the sign of a
    /// hidden zero-mean Gaussian model's score, flipped with probability `label_noise`.
    pub fn generate(&self, seed: u64) -> CsrMatrix {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let normal = Normal::new(0.0f32, 1.0).expect("valid normal");
        let mut hidden: Vec<f32> = (0..self.features)
            .map(|_| normal.sample(&mut rng))
            .collect();
        // Centre the hidden model so that scores of non-negative rows are centred too (or
        // nearly every label would agree with the mean row).
        let mean = hidden.iter().sum::<f32>() / self.features.max(1) as f32;
        hidden.iter_mut().for_each(|h| *h -= mean);
        let mut m = CsrMatrix::new(self.features);
        let mut row: Vec<(u32, f32)> = Vec::new();
        for _ in 0..self.rows {
            row.clear();
            for j in 0..self.features {
                if self.density >= 1.0 || rng.gen::<f64>() < self.density {
                    let v: f32 = normal.sample(&mut rng);
                    row.push((j as u32, if self.nonnegative { v.abs() } else { v }));
                }
            }
            if row.is_empty() {
                let j = rng.gen_range(0..self.features);
                row.push((j as u32, 1.0));
            }
            let norm = row
                .iter()
                .map(|&(_, v)| v * v)
                .sum::<f32>()
                .sqrt()
                .max(1e-12);
            for e in row.iter_mut() {
                e.1 /= norm;
            }
            let score: f32 = row.iter().map(|&(i, v)| hidden[i as usize] * v).sum();
            let mut label = if score >= 0.0 { 1.0 } else { -1.0 };
            if rng.gen::<f64>() < self.label_noise {
                label = -label;
            }
            m.push_row(&row, label);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_design_shape() {
        let d = RandomDesign {
            rows: 400,
            features: 50,
            density: 0.2,
            nonnegative: true,
            label_noise: 0.0,
        };
        let a = d.generate(3);
        assert_eq!(a, d.generate(3));
        assert_eq!(a.rows(), 400);
        let density = a.nnz() as f64 / (400.0 * 50.0);
        assert!((0.15..0.25).contains(&density), "{density}");
        assert!(a.values.iter().all(|&v| v >= 0.0));
        let pos = a.labels.iter().filter(|&&l| l > 0.0).count();
        assert!((80..320).contains(&pos), "labels balanced enough: {pos}");
        let dense = RandomDesign {
            density: 1.0,
            nonnegative: false,
            ..d
        }
        .generate(1);
        assert_eq!(dense.nnz(), 400 * 50);
    }

    #[test]
    fn rcv1_shape_and_determinism() {
        let shape = Rcv1Shape::with_rows(500);
        let a = shape.generate(7);
        let b = shape.generate(7);
        let c = shape.generate(8);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.rows(), 500);
        let mean_nnz = a.nnz() as f64 / 500.0;
        assert!((65.0..85.0).contains(&mean_nnz), "{mean_nnz}");
        let pos = a.labels.iter().filter(|&&l| l > 0.0).count();
        assert!((150..350).contains(&pos), "{pos}");
        let (_, v) = a.row(3);
        let n: f32 = v.iter().map(|x| x * x).sum();
        assert!((n - 1.0).abs() < 1e-4);
    }
}
