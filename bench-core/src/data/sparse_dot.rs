//! The dot product of a sparse row with a dense f32 vector, summed in f64 in eight lanes: the
//! kernel of least squares' residuals, which are nearly all of an ASYNC run's cost (every
//! evaluation point is a pass over the data).
//!
//! Why lanes: a single running sum makes every addition wait for the one before (four cycles
//! of latency per non-zero); eight independent sums let the additions overlap, so the pass is
//! bound by its loads instead. Each product `f32 * f32` is exact in f64 (24 + 24 mantissa
//! bits), so the only rounding is in the additions, and their order is fixed here: lane `l`
//! sums terms `l, l + 8, l + 16, ...` in order, and the lanes are combined in one fixed tree.
//! The result is therefore the same on every machine and compiler (no FMA or reassociation can
//! change an exact product's sum), which the simulator's byte-identical CSVs need.

/// Lanes of the sum (eight: enough independent additions to hide their latency).
const LANES: usize = 8;

/// `sum_k val[k] * w[idx[k]]` in f64, in the fixed lane order described above.
///
/// # Panics
/// When an index is out of `w`'s range, or `idx` and `val` differ in length.
pub fn sparse_dot(idx: &[u32], val: &[f32], w: &[f32]) -> f64 {
    assert_eq!(
        idx.len(),
        val.len(),
        "sparse row: indices and values differ in length"
    );
    let mut acc = [0.0f64; LANES];
    let whole = idx.len() / LANES * LANES;
    for (ci, cv) in idx[..whole]
        .chunks_exact(LANES)
        .zip(val[..whole].chunks_exact(LANES))
    {
        // The eight loads first, then the arithmetic as one vector-shaped block (the
        // compiler keeps it in SIMD registers; measured 10-20% faster than interleaving).
        let mut g = [0.0f32; LANES];
        for l in 0..LANES {
            g[l] = w[ci[l] as usize];
        }
        for l in 0..LANES {
            acc[l] += f64::from(cv[l]) * f64::from(g[l]);
        }
    }
    for (a, (&j, &v)) in acc.iter_mut().zip(idx[whole..].iter().zip(&val[whole..])) {
        *a += f64::from(v) * f64::from(w[j as usize]);
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane order written out: lane l sums every eighth term from l, then the fixed tree.
    fn by_definition(idx: &[u32], val: &[f32], w: &[f32]) -> f64 {
        let mut acc = [0.0f64; LANES];
        for (k, (&j, &v)) in idx.iter().zip(val).enumerate() {
            acc[k % LANES] += f64::from(v) * f64::from(w[j as usize]);
        }
        ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
    }

    #[test]
    fn every_length_sums_in_the_documented_order_bit_for_bit() {
        let w: Vec<f32> = (0..64).map(|i| (i as f32 * 0.37).sin() * 1e3).collect();
        for len in 0..40usize {
            let idx: Vec<u32> = (0..len).map(|k| ((k * 7 + 3) % 64) as u32).collect();
            let val: Vec<f32> = (0..len).map(|k| (k as f32 * 1.3).cos() / 7.0).collect();
            let got = sparse_dot(&idx, &val, &w);
            assert_eq!(
                got.to_bits(),
                by_definition(&idx, &val, &w).to_bits(),
                "len {len}"
            );
            let plain: f64 = idx
                .iter()
                .zip(&val)
                .map(|(&j, &v)| f64::from(v) * f64::from(w[j as usize]))
                .sum();
            assert!(
                (got - plain).abs() <= 1e-9 * plain.abs().max(1.0),
                "len {len}"
            );
        }
    }

    #[test]
    fn exact_products_make_a_short_row_exact() {
        // Up to eight terms each lane holds one exact product; small integers add exactly.
        let w = [3.0f32, -2.0, 0.5, 8.0];
        assert_eq!(
            sparse_dot(&[0, 1, 2, 3], &[1.0, 2.0, 4.0, -0.25], &w),
            3.0 - 4.0 + 2.0 - 2.0
        );
        assert_eq!(sparse_dot(&[], &[], &w), 0.0);
    }

    #[test]
    #[should_panic(expected = "differ in length")]
    fn mismatched_rows_panic() {
        sparse_dot(&[0, 1], &[1.0], &[1.0, 2.0]);
    }
}
