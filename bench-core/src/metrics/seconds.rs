//! Nanoseconds of a clock as seconds, at the clock's resolution.

use crate::protocol::Nanos;

/// `ns` nanoseconds in seconds: the `f64` nearest to ns / 10^9, so a time prints at the clock's
/// resolution (379,801,175 ns prints as `0.379801175`).
///
/// Why not `ns as f64 * 1e-9`: 1e-9 has no exact `f64`, so that product is often one unit in the
/// last place away from the nearest value, and CSVs printed it as `0.37980117500000005`. Both
/// operands of this division are exact (below 2^53 ns, 104 days), and IEEE division rounds the
/// exact quotient to the nearest `f64`.
pub fn seconds(ns: Nanos) -> f64 {
    ns as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::seconds;

    #[test]
    fn prints_at_the_clocks_resolution() {
        assert_eq!(seconds(379_801_175).to_string(), "0.379801175");
        assert_eq!(seconds(1).to_string(), "0.000000001");
        assert_eq!(seconds(0).to_string(), "0");
        assert_eq!(seconds(12_000_000_000).to_string(), "12");
        // The product this replaces is off by an ulp on this very value.
        let ns: u64 = 379_801_175;
        assert_ne!((ns as f64 * 1e-9).to_string(), "0.379801175");
        // Every nanosecond count of a short run prints as its decimal: the shortest text that
        // reads back as the same f64 is the exact decimal ns / 10^9.
        for ns in (0..5_000_000_000u64).step_by(7_777_777) {
            let text = seconds(ns).to_string();
            let want = format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
            let want = want.trim_end_matches('0').trim_end_matches('.');
            assert_eq!(text, want, "{ns} ns");
        }
    }
}
