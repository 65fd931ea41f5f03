//! How the judge writes numbers into claims and notes: times that stay readable from
//! microseconds (a simulated 25-peer run) to minutes, and `never` for a target not reached.

/// A time in seconds as `x.xxx` (or `x.xxxe-N` below 0.1 s), or `never`.
pub fn show(v: Option<f64>) -> String {
    v.map_or("never".into(), |x| {
        // Three decimals hide sub-millisecond times (a simulated 25-peer run reaches its target
        // in microseconds): below 0.1, four significant digits in scientific notation.
        if x == 0.0 || x.abs() >= 0.1 || !x.is_finite() {
            format!("{x:.3}")
        } else {
            format!("{x:.3e}")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::show;

    #[test]
    fn sub_millisecond_times_keep_four_significant_digits() {
        assert_eq!(show(None), "never");
        assert_eq!(show(Some(12.34567)), "12.346");
        assert_eq!(show(Some(0.0)), "0.000");
        assert_eq!(show(Some(0.000_234_56)), "2.346e-4");
        assert_eq!("2.346e-4".parse::<f64>().unwrap(), 0.000_234_6);
    }
}
