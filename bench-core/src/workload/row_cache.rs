//! A worker's cache of table rows, indexed densely by the row's place in the model's layout.
//!
//! Why not a hash map of rows: looking rows up was the largest single cost of essp-fig3's
//! simulator runs (every step reads and writes each of its rows, and every install copies
//! rows in), and a hash map of one `Vec` per row adds a hash, a probe and a pointer chase to
//! each. Here a row's slot is one array read away, and the cached rows sit side by side in
//! one buffer. The index costs four bytes per row of the model per worker (2 MB for the
//! paper-scale Netflix twin's 498k rows); the buffer holds only the rows cached.

/// Rows of `k` floats, cached by dense row index.
#[derive(Debug, Default)]
pub struct RowCache {
    /// Slot of each row in `values` (`ABSENT` when not cached).
    slot: Vec<u32>,
    /// The cached rows, `k` floats each, in the order they were first cached.
    values: Vec<f32>,
    /// Floats per row.
    k: usize,
}

const ABSENT: u32 = u32::MAX;

impl RowCache {
    /// An empty cache for a model of `rows` rows of `k` floats.
    pub fn new(rows: usize, k: usize) -> Self {
        RowCache {
            slot: vec![ABSENT; rows],
            values: Vec::new(),
            k,
        }
    }

    fn at(&self, row: usize) -> Option<usize> {
        match self.slot.get(row) {
            Some(&s) if s != ABSENT => Some(s as usize * self.k),
            _ => None,
        }
    }

    /// Row `row`, if cached.
    pub fn get(&self, row: usize) -> Option<&[f32]> {
        self.at(row).map(|o| &self.values[o..o + self.k])
    }

    /// Row `row` to change, if cached.
    pub fn get_mut(&mut self, row: usize) -> Option<&mut [f32]> {
        let k = self.k;
        self.at(row).map(move |o| &mut self.values[o..o + k])
    }

    /// Row `row` to change, cached as zeros first if it was not.
    ///
    /// # Panics
    /// When `row` is outside the model's rows, or the cache outgrows `u32` slots.
    pub fn get_or_zero(&mut self, row: usize) -> &mut [f32] {
        let k = self.k;
        let o = match self.at(row) {
            Some(o) => o,
            None => {
                let o = self.values.len();
                self.slot[row] = u32::try_from(o / k.max(1)).expect("fewer than 2^32 cached rows");
                self.values.resize(o + k, 0.0);
                o
            }
        };
        &mut self.values[o..o + k]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_absent_until_cached_and_keep_their_values_apart() {
        let mut c = RowCache::new(5, 2);
        assert!(c.get(3).is_none() && c.get_mut(0).is_none() && c.get(7).is_none());
        c.get_or_zero(3).copy_from_slice(&[1.0, 2.0]);
        assert_eq!(c.get_or_zero(1), &[0.0, 0.0]);
        c.get_mut(1).unwrap()[1] = 5.0;
        assert_eq!(c.get(3), Some(&[1.0, 2.0][..]));
        assert_eq!(c.get(1), Some(&[0.0, 5.0][..]));
        // A cached row is found again, not re-zeroed.
        assert_eq!(c.get_or_zero(3), &[1.0, 2.0]);
        assert!(c.get(0).is_none());
    }

    #[test]
    #[should_panic]
    fn a_row_outside_the_model_panics() {
        RowCache::new(2, 1).get_or_zero(2);
    }
}
