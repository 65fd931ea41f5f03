//! Compressed sparse row storage for labelled sparse examples.

use super::sparse_dot;

/// Rows of `(index, value)` pairs with a ±1 label each.
#[derive(Debug, Clone, PartialEq)]
pub struct CsrMatrix {
    /// Number of columns (features).
    pub cols: usize,
    /// `indptr[r]..indptr[r+1]` spans row `r` in `indices`/`values`.
    pub indptr: Vec<usize>,
    /// Column index of each non-zero.
    pub indices: Vec<u32>,
    /// Value of each non-zero.
    pub values: Vec<f32>,
    /// Label of each row, +1 or -1.
    pub labels: Vec<f32>,
}

impl CsrMatrix {
    /// An empty matrix with `cols` columns.
    pub fn new(cols: usize) -> Self {
        CsrMatrix {
            cols,
            indptr: vec![0],
            indices: Vec::new(),
            values: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// Bytes the arrays hold: 8 per non-zero (u32 index, f32 value), plus a row pointer and a
    /// label per row.
    pub fn raw_bytes(&self) -> usize {
        self.indices.len() * 4
            + self.values.len() * 4
            + self.indptr.len() * std::mem::size_of::<usize>()
            + self.labels.len() * 4
    }

    /// Bytes allocated for the arrays (their capacities).
    pub fn heap_bytes(&self) -> usize {
        self.indices.capacity() * 4
            + self.values.capacity() * 4
            + self.indptr.capacity() * std::mem::size_of::<usize>()
            + self.labels.capacity() * 4
    }

    /// Releases spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.indices.shrink_to_fit();
        self.values.shrink_to_fit();
        self.indptr.shrink_to_fit();
        self.labels.shrink_to_fit();
    }

    /// Appends a row; `entries` must have indices `< cols`.
    pub fn push_row(&mut self, entries: &[(u32, f32)], label: f32) {
        for &(i, v) in entries {
            debug_assert!((i as usize) < self.cols);
            self.indices.push(i);
            self.values.push(v);
        }
        self.indptr.push(self.indices.len());
        self.labels.push(label);
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.labels.len()
    }

    /// Number of stored non-zeros.
    pub fn nnz(&self) -> usize {
        self.indices.len()
    }

    /// Row `r` as parallel index and value slices.
    pub fn row(&self, r: usize) -> (&[u32], &[f32]) {
        let span = self.indptr[r]..self.indptr[r + 1];
        (&self.indices[span.clone()], &self.values[span])
    }

    /// Dot product of row `r` with a dense vector, summed in f64 as [`sparse_dot`] does (in
    /// a fixed order of eight lanes: the same bits on every machine) and rounded to f32.
    pub fn dot(&self, r: usize, w: &[f32]) -> f32 {
        let (idx, val) = self.row(r);
        sparse_dot(idx, val, w) as f32
    }

    /// The rows `range` as a new matrix.
    pub fn slice_rows(&self, range: std::ops::Range<usize>) -> CsrMatrix {
        let mut out = CsrMatrix::new(self.cols);
        for r in range {
            let (idx, val) = self.row(r);
            out.indices.extend_from_slice(idx);
            out.values.extend_from_slice(val);
            out.indptr.push(out.indices.len());
            out.labels.push(self.labels[r]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_dot() {
        let mut m = CsrMatrix::new(4);
        m.push_row(&[(0, 1.0), (3, 2.0)], 1.0);
        m.push_row(&[(1, -1.0)], -1.0);
        assert_eq!(m.rows(), 2);
        assert_eq!(m.nnz(), 3);
        assert_eq!(m.dot(0, &[1.0, 1.0, 1.0, 0.5]), 2.0);
        let s = m.slice_rows(1..2);
        assert_eq!(s.row(0), (&[1u32][..], &[-1.0f32][..]));
        assert_eq!(s.labels, vec![-1.0]);
    }
}
