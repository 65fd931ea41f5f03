//! Wait-time distribution kept in an HDR histogram (microsecond resolution, 3 significant digits).

use hdrhistogram::Histogram;

/// Histogram of per-iteration wait times.
#[derive(Debug, Clone)]
pub struct WaitHistogram {
    h: Histogram<u64>,
}

impl Default for WaitHistogram {
    fn default() -> Self {
        WaitHistogram {
            // 1 us .. ~12.7 days; values above saturate at the top instead of being lost.
            h: Histogram::new_with_bounds(1, 1 << 40, 3).expect("valid bounds"),
        }
    }
}

impl WaitHistogram {
    /// Records a wait in nanoseconds (stored in microseconds).
    pub fn record_ns(&mut self, ns: u64) {
        self.h.saturating_record(ns / 1_000);
    }

    /// Quantile `q` in microseconds.
    pub fn quantile_us(&self, q: f64) -> u64 {
        self.h.value_at_quantile(q)
    }

    /// Mean in microseconds.
    pub fn mean_us(&self) -> f64 {
        self.h.mean()
    }

    /// Number of values recorded.
    pub fn len(&self) -> u64 {
        self.h.len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    /// `(lower_us, upper_us, count)` for `buckets` equal-width buckets up to the maximum.
    pub fn buckets(&self, buckets: usize) -> Vec<(u64, u64, u64)> {
        let max = self.h.max().max(1);
        let width = max.div_ceil(buckets as u64).max(1);
        (0..buckets as u64)
            .map(|b| {
                let lo = b * width;
                let hi = lo + width;
                let count = self
                    .h
                    .iter_recorded()
                    .filter(|v| {
                        let x = v.value_iterated_to();
                        x >= lo && (x < hi || (b + 1 == buckets as u64 && x <= hi))
                    })
                    .map(|v| v.count_at_value())
                    .sum();
                (lo, hi, count)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_and_buckets() {
        let mut h = WaitHistogram::default();
        for us in 1..=100u64 {
            h.record_ns(us * 1_000);
        }
        let mut big = WaitHistogram::default();
        big.record_ns(6_000_000_000);
        assert!((big.mean_us() - 6e6).abs() < 6e3, "{}", big.mean_us());
        assert_eq!(h.len(), 100);
        assert!((h.quantile_us(0.5) as i64 - 50).abs() <= 1);
        let b = h.buckets(4);
        assert_eq!(b.iter().map(|x| x.2).sum::<u64>(), 100);
    }
}
