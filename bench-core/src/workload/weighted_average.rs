//! The Reduce of decentralized peers: the weighted average of parameter vectors plus the
//! peer's own update, in one pass.
//!
//! Why a kernel of its own: with 100,000-parameter models (hop-fig20-21's webspam twin) this
//! is nearly all of a peer run's cost. Summing every input into a full-length f64 accumulator
//! streams that accumulator through memory once per input; here each block of 16 parameters
//! is summed over all inputs in registers and written once. Every parameter's sum is taken in
//! input order from 0.0, exactly as the accumulator did, so the bits are unchanged.

/// Parameters per block (two AVX-512 or four AVX2 vectors of f64).
const BLOCK: usize = 16;

/// `(sum_i w_i * x_i[j]) / total + update[j]` for every `j`, each sum in the order of `inputs`
/// from 0.0 in f64. `update` is empty (no update) or as long as the inputs.
///
/// # Panics
/// When an input or a non-empty update differs in length from the first input.
pub fn weighted_average(inputs: &[(f64, &[f32])], total: f64, update: &[f32]) -> Vec<f32> {
    let d = inputs.first().map_or(update.len(), |(_, x)| x.len());
    assert!(
        inputs.iter().all(|(_, x)| x.len() == d) && (update.is_empty() || update.len() == d),
        "weighted average: vectors of different lengths"
    );
    let mut out = vec![0.0f32; d];
    let none = [0.0f32; BLOCK];
    let mut j = 0;
    while j < d {
        let n = BLOCK.min(d - j);
        let mut acc = [0.0f64; BLOCK];
        for &(w, x) in inputs {
            for (a, &v) in acc[..n].iter_mut().zip(&x[j..j + n]) {
                *a += w * f64::from(v);
            }
        }
        // No update adds 0.0 all the same (it turns a -0.0 into 0.0, as the sum always did).
        let u = if update.is_empty() {
            &none[..n]
        } else {
            &update[j..j + n]
        };
        for ((o, a), u) in out[j..j + n].iter_mut().zip(&acc[..n]).zip(u) {
            *o = (a / total) as f32 + u;
        }
        j += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The full-length accumulator this replaces, written out.
    fn by_accumulator(inputs: &[(f64, &[f32])], total: f64, update: &[f32]) -> Vec<f32> {
        let mut acc = vec![0.0f64; inputs[0].1.len()];
        for &(w, x) in inputs {
            acc.iter_mut()
                .zip(x)
                .for_each(|(a, &v)| *a += w * f64::from(v));
        }
        acc.iter()
            .enumerate()
            .map(|(j, a)| (a / total) as f32 + update.get(j).copied().unwrap_or(0.0))
            .collect()
    }

    #[test]
    fn blocks_give_the_accumulators_bits_for_every_length() {
        for d in [0usize, 1, 15, 16, 17, 100, 1000] {
            let xs: Vec<Vec<f32>> = (0..4)
                .map(|i| {
                    (0..d)
                        .map(|j| ((i * 31 + j * 7) % 19) as f32 * 0.37 - 3.1)
                        .collect()
                })
                .collect();
            let inputs: Vec<(f64, &[f32])> = xs
                .iter()
                .enumerate()
                .map(|(i, x)| (0.1 + i as f64 * 0.3, &x[..]))
                .collect();
            let update: Vec<f32> = (0..d).map(|j| j as f32 * 1e-3).collect();
            if d > 0 {
                for u in [&update[..], &[][..]] {
                    let got = weighted_average(&inputs, 1.9, u);
                    let want = by_accumulator(&inputs, 1.9, u);
                    assert!(
                        got.iter()
                            .zip(&want)
                            .all(|(a, b)| a.to_bits() == b.to_bits()),
                        "d {d}"
                    );
                }
            }
        }
        assert!(weighted_average(&[], 1.0, &[]).is_empty());
    }

    #[test]
    #[should_panic(expected = "different lengths")]
    fn inputs_of_different_lengths_panic() {
        weighted_average(&[(1.0, &[1.0, 2.0]), (1.0, &[1.0])], 2.0, &[]);
    }
}
