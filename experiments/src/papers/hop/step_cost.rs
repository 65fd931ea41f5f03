//! Hop's per-step cost of a setting against the standard protocol (Hop §7.3.3, Figs 15-16, backup
//! workers): the iterations it needs to reach the target, as a ratio to standard's, inside the
//! band the paper's words allow.

use crate::judge::comparison::DEFAULT_TOLERANCE;
use bench_core::claims::Claim;

/// The claim that `label` pays a small price per step: it needs at least as many iterations as
/// standard to reach `target` (`its`, `standard`) and at most `limit` times as many.
pub(super) fn step_cost_claim(
    id: String,
    label: &str,
    target: f64,
    limit: f64,
    its: Option<f64>,
    standard: Option<f64>,
) -> Claim {
    let ratio = match (its, standard) {
        (Some(a), Some(b)) if b > 0.0 => a / b,
        _ => f64::NAN,
    };
    let shown = |x: Option<f64>| x.map_or("never".to_string(), |x| format!("{x:.0}"));
    // "Hurts" is at least as many iterations as standard, "insignificant" at most `limit`
    // times as many; as many within the default tolerance counts (a tie is not a finding).
    let lower = 1.0 - DEFAULT_TOLERANCE;
    Claim::check(
        id,
        format!(
            "{label} needs {lower}x to {limit}x standard's iterations to reach loss {target:.4}"
        ),
        "\"receiving one less update hurts the per iteration progress, the effect is insignificant\" (Hop §7.3.3, Fig 15)",
        format!(
            "{label} {} iterations, standard {} ({ratio:.2}x)",
            shown(its),
            shown(standard)
        ),
        (lower..=limit).contains(&ratio),
    )
    .with_value(ratio)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::claims::Verdict;

    #[test]
    fn a_setting_that_learns_more_per_step_or_far_less_fails_the_step_cost_claim() {
        let v = |its, std| step_cost_claim("x".into(), "b", 0.3, 1.5, its, std).verdict;
        assert_eq!(v(Some(110.0), Some(100.0)), Verdict::Pass);
        assert_eq!(v(Some(100.0), Some(100.0)), Verdict::Pass);
        assert_eq!(v(Some(90.0), Some(100.0)), Verdict::Fail);
        // 0.973x: as many iterations within the tolerance.
        assert_eq!(v(Some(97.3), Some(100.0)), Verdict::Pass);
        assert_eq!(v(Some(200.0), Some(100.0)), Verdict::Fail);
        assert_eq!(v(None, Some(100.0)), Verdict::Fail);
        assert_eq!(v(Some(100.0), None), Verdict::Fail);
    }
}
