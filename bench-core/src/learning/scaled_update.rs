//! An update held as a multiple of the model it was computed on plus a few exact entries, so
//! that a sparse workload with an L2 term (the SVM: `-eta (lambda w + sparse gradient)`) does not
//! write, send and read back a dense vector per iteration.
//!
//! The dense update `u` it stands for is, entry by entry,
//! `u[j] = (c * base[j]) * post` for `j` not among the exact entries and `u[j] = v * post` for an
//! exact entry `(j, v)`: the very operations, in the very order, that the dense form computes, so
//! applying either form gives the same bits. The simulator then moves one reference-counted
//! handle per message (its bytes still charged in full), and applying it is one fused pass
//! (`model[j] + (c * base[j]) * post`) instead of a write of `u` and a read of it per node.
//! Measured at 1,024 workers, the dense form is memory-bandwidth bound.

use std::sync::{Arc, OnceLock};

/// What a workload computes for a scaled update: the factor and the exact entries, applied to
/// the model it read.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaledParts {
    /// Factor of the model read: every entry not listed in `exact` is `(c * model[j]) * post`.
    pub c: f32,
    /// Factor applied last to every entry (1 for none; an averaging parameter server's `1/N`).
    pub post: f32,
    /// Entries computed exactly (each index at most once; were one repeated, the last would
    /// count): `(j, v)` stands for `v * post`.
    pub exact: Vec<(u32, f32)>,
}

/// A scaled update together with the model it was computed on.
#[derive(Debug)]
pub struct ScaledUpdate {
    /// The factor and exact entries.
    parts: ScaledParts,
    /// The model the update was computed on (shared, never changed: nodes copy on write).
    base: Arc<Vec<f32>>,
    /// The dense form, built on first need (a transport's wire, a consumer reading entries).
    dense: OnceLock<Vec<f32>>,
}

impl ScaledUpdate {
    /// The update `parts` stands for when computed on `base`.
    pub fn new(parts: ScaledParts, base: Arc<Vec<f32>>) -> Self {
        ScaledUpdate {
            parts,
            base,
            dense: OnceLock::new(),
        }
    }

    /// The factor and exact entries.
    pub fn parts(&self) -> &ScaledParts {
        &self.parts
    }

    /// The model the update was computed on.
    pub fn base(&self) -> &Arc<Vec<f32>> {
        &self.base
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.base.len()
    }

    /// Whether the update has no entries.
    pub fn is_empty(&self) -> bool {
        self.base.is_empty()
    }

    /// The dense update, built once and kept (for repeated reads).
    ///
    /// # Panics
    /// When an exact entry's index is out of range (a workload's bug).
    pub fn dense(&self) -> &[f32] {
        self.dense.get_or_init(|| self.to_dense_vec())
    }

    /// The dense update, built afresh and not kept (a transport's wire: the update held for
    /// re-application does not grow by a dense copy).
    ///
    /// # Panics
    /// When an exact entry's index is out of range (a workload's bug).
    pub fn to_dense_vec(&self) -> Vec<f32> {
        if let Some(d) = self.dense.get() {
            return d.clone();
        }
        let (c, post) = (self.parts.c, self.parts.post);
        let mut u: Vec<f32> = self.base.iter().map(|&b| (c * b) * post).collect();
        for &(j, v) in &self.parts.exact {
            u[j as usize] = v * post;
        }
        u
    }

    /// Adds the update to `model` (`model[j] += u[j]` with `u[j]` as the dense form computes
    /// it), copying the model first while another holder shares it, in one pass over the model.
    ///
    /// # Panics
    /// When `model` and the update differ in length (a caller's bug), or an exact entry's index
    /// is out of range (a workload's bug).
    pub fn add_to(&self, model: &mut Arc<Vec<f32>>) {
        assert_eq!(model.len(), self.len(), "update and model lengths differ");
        let (c, post) = (self.parts.c, self.parts.post);
        let exact = &self.parts.exact;
        if let Some(m) = Arc::get_mut(model) {
            // In place: the exact entries' sums from the entries before the pass.
            let sums: Vec<f32> = exact
                .iter()
                .map(|&(j, v)| m[j as usize] + v * post)
                .collect();
            m.iter_mut()
                .zip(self.base.iter())
                .for_each(|(x, &b)| *x += (c * b) * post);
            for (&(j, _), s) in exact.iter().zip(sums) {
                m[j as usize] = s;
            }
        } else {
            // Shared (a sent snapshot, or the base itself): write the sum into a new vector.
            let old = Arc::clone(model);
            let mut m: Vec<f32> = old
                .iter()
                .zip(self.base.iter())
                .map(|(&x, &b)| x + (c * b) * post)
                .collect();
            for &(j, v) in exact {
                m[j as usize] = old[j as usize] + v * post;
            }
            *model = Arc::new(m);
        }
    }
}

impl PartialEq for ScaledUpdate {
    fn eq(&self, other: &Self) -> bool {
        self.dense() == other.dense()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(post: f32) -> ScaledUpdate {
        let base = Arc::new(vec![1.0f32, -3.0, 0.1, 7.0]);
        let parts = ScaledParts {
            c: -0.3,
            post,
            exact: vec![(2, 0.7), (0, -1.25)],
        };
        ScaledUpdate::new(parts, base)
    }

    fn dense_sum(model: &[f32], u: &[f32]) -> Vec<f32> {
        model.iter().zip(u).map(|(m, d)| m + d).collect()
    }

    #[test]
    fn the_dense_form_is_the_factor_times_the_base_with_exact_entries() {
        let u = update(1.0);
        assert_eq!(u.dense(), &[-1.25, (-0.3f32 * -3.0), 0.7, -0.3f32 * 7.0]);
        let avg = update(0.25);
        assert_eq!(avg.dense()[1], (-0.3f32 * -3.0) * 0.25);
        assert_eq!(avg.dense()[2], 0.7f32 * 0.25);
    }

    #[test]
    fn adding_gives_the_dense_sums_bits_shared_or_not() {
        for post in [1.0, 1.0 / 3.0] {
            let u = update(post);
            let start = vec![0.3f32, 1e-3, -2.0, 5.5];
            let want = dense_sum(&start, u.dense());
            // unshared: in place
            let mut own = Arc::new(start.clone());
            let before = Arc::as_ptr(&own);
            u.add_to(&mut own);
            assert_eq!(*own, want);
            assert_eq!(Arc::as_ptr(&own), before, "unshared: no copy");
            // shared: the holder keeps its values
            let mut shared = Arc::new(start.clone());
            let holder = Arc::clone(&shared);
            u.add_to(&mut shared);
            assert_eq!(*shared, want);
            assert_eq!(*holder, start);
        }
    }

    #[test]
    fn adding_to_its_own_base_leaves_the_base_unchanged() {
        let u = update(1.0);
        let mut model = Arc::clone(u.base());
        let want = dense_sum(u.base(), u.dense());
        u.add_to(&mut model);
        assert_eq!(*model, want);
        assert_eq!(**u.base(), vec![1.0, -3.0, 0.1, 7.0]);
        assert_eq!(u.to_dense_vec(), u.dense());
    }
}
