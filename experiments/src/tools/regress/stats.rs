//! The statistics of the measured tiers: a one-sided Mann-Whitney U test with exact small-sample
//! p-values, medians and a robust relative spread.
//!
//! Why exact and hand-written: the measured tiers compare 5 samples now with the baseline's 10
//! (a re-measurement is judged on its own 5), where the normal approximation of U that statistics crates offer (statrs
//! has the normal distribution, not the test) is off by a factor of two in the tail that decides
//! the verdict; the exact null distribution is a short recurrence over counts.

/// P(U >= u) under the null hypothesis that `x` and `y` come from one distribution, where U
/// counts the pairs (x_i, y_j) with x_i < y_j (ties count one half): small when `x` tends to be
/// smaller than `y`. Exact, from the distribution of U over all C(n+m, n) orderings; with
/// ties (rare for timings) U is rounded down first, which only makes the p-value larger.
///
/// Returns 1 when either sample is empty (nothing shows a difference).
pub fn mann_whitney_less(x: &[f64], y: &[f64]) -> f64 {
    let (n, m) = (x.len(), y.len());
    if n == 0 || m == 0 {
        return 1.0;
    }
    let mut u2 = 0usize; // twice U, so that ties stay integers
    for a in x {
        for b in y {
            u2 += match a.partial_cmp(b) {
                Some(std::cmp::Ordering::Less) => 2,
                Some(std::cmp::Ordering::Equal) => 1,
                _ => 0,
            };
        }
    }
    let u = u2 / 2;
    let counts = u_distribution(n, m);
    let total: f64 = counts.iter().sum();
    counts[u..].iter().sum::<f64>() / total
}

/// How many of the C(n+m, n) orderings of two samples of sizes n and m give each value of U.
/// The recurrence f(i, j, u) = f(i-1, j, u-j) + f(i, j-1, u) (the largest element belongs to
/// the first sample, and exceeds all j of the second, or to the second) counts the pairs with
/// x > y, that is n m - U; under the null hypothesis that statistic has the same
/// (symmetric) distribution as U, which is what is returned.
fn u_distribution(n: usize, m: usize) -> Vec<f64> {
    // prev[j] = distribution for (i - 1, j); cur[j] for (i, j)
    let mut prev: Vec<Vec<f64>> = (0..=m).map(|_| vec![1.0]).collect();
    for i in 1..=n {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(m + 1);
        cur.push(vec![1.0]);
        for j in 1..=m {
            let mut f = vec![0.0; i * j + 1];
            for (u, c) in prev[j].iter().enumerate() {
                f[u + j] += c;
            }
            for (u, c) in cur[j - 1].iter().enumerate() {
                f[u] += c;
            }
            cur.push(f);
        }
        prev = cur;
    }
    prev.swap_remove(m)
}

/// The smallest p-value [`mann_whitney_less`] can give for samples of sizes n and m (complete
/// separation): 1 / C(n+m, n). A comparison whose smallest p-value is not below the test's
/// level can never find anything.
pub fn smallest_p(n: usize, m: usize) -> f64 {
    let k = n.min(m);
    1.0 / (1..=k).fold(1.0, |acc, i| acc * (n + m - k + i) as f64 / i as f64)
}

/// The median (the mean of the middle two for an even count); NaN when empty.
pub fn median(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let k = v.len() / 2;
    if v.len() % 2 == 1 {
        v[k]
    } else {
        (v[k - 1] + v[k]) / 2.0
    }
}

/// A robust relative spread: 1.4826 x the median absolute deviation over the median (the
/// coefficient of variation for normal samples, but one outlier in five does not move it).
/// 0 for fewer than two samples.
pub fn relative_spread(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let med = median(x);
    let dev: Vec<f64> = x.iter().map(|v| (v - med).abs()).collect();
    1.4826 * median(&dev) / med.abs().max(f64::MIN_POSITIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binom(n: u64, k: u64) -> f64 {
        (1..=k).fold(1.0, |acc, i| acc * (n - k + i) as f64 / i as f64)
    }

    #[test]
    fn the_distribution_counts_every_ordering_and_is_symmetric() {
        for (n, m) in [(1, 1), (2, 3), (5, 5), (10, 5), (7, 9)] {
            let d = u_distribution(n, m);
            assert_eq!(d.len(), n * m + 1);
            let total: f64 = d.iter().sum();
            assert!((total - binom((n + m) as u64, n as u64)).abs() < 1e-6 * total);
            for u in 0..d.len() {
                assert_eq!(d[u], d[n * m - u], "symmetric at {u} for {n}x{m}");
            }
        }
        // n = m = 2: U takes 0,1,2,2,3,4 over the 6 orderings
        assert_eq!(u_distribution(2, 2), vec![1.0, 1.0, 2.0, 1.0, 1.0]);
    }

    #[test]
    fn p_values_match_the_tables() {
        // complete separation of 5 and 5: 1 / C(10, 5) = 1/252
        let lo = [1.0, 2.0, 3.0, 4.0, 5.0];
        let hi = [6.0, 7.0, 8.0, 9.0, 10.0];
        assert!((mann_whitney_less(&lo, &hi) - 1.0 / 252.0).abs() < 1e-12);
        assert!((mann_whitney_less(&hi, &lo) - 1.0).abs() < 1e-12);
        // one swap: U = 24, P(U >= 24) = 2/252
        let lo2 = [1.0, 2.0, 3.0, 4.0, 6.5];
        let hi2 = [6.0, 7.0, 8.0, 9.0, 10.0];
        assert!((mann_whitney_less(&lo2, &hi2) - 2.0 / 252.0).abs() < 1e-12);
        // interleaved samples: no evidence either way
        let a = [1.0, 3.0, 5.0, 7.0, 9.0];
        let b = [2.0, 4.0, 6.0, 8.0, 10.0];
        let p = mann_whitney_less(&a, &b);
        assert!(p > 0.2 && p < 0.6, "{p}");
        // identical samples (all ties): U = 12.5, rounded down: p = P(U >= 12) > 0.5
        assert!(mann_whitney_less(&[1.0; 5], &[1.0; 5]) > 0.5);
        assert_eq!(mann_whitney_less(&[], &[1.0]), 1.0);
    }

    #[test]
    fn the_smallest_p_value_is_one_over_the_orderings() {
        assert!((smallest_p(5, 5) - 1.0 / 252.0).abs() < 1e-15);
        assert!((smallest_p(10, 5) - 1.0 / 3003.0).abs() < 1e-15);
        assert!((smallest_p(10, 1) - 1.0 / 11.0).abs() < 1e-15);
        assert_eq!(smallest_p(1, 2), 1.0 / 3.0);
    }

    #[test]
    fn medians_and_spreads() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        assert_eq!(relative_spread(&[5.0; 4]), 0.0);
        // one outlier in five does not move it
        let s = relative_spread(&[10.0, 10.1, 9.9, 10.0, 50.0]);
        assert!(s < 0.02, "{s}");
        let wide = relative_spread(&[5.0, 10.0, 15.0, 10.0, 12.0]);
        assert!(wide > 0.2, "{wide}");
    }
}
