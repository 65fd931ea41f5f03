//! DSSP's staleness bound read off a run: the claim that DSSP never reads a model more than
//! `s_L + r_max` clocks stale, and "not exercised" when no read came near it (a bound
//! that never binds tests nothing). Shared by Fig 3 and Table I.

use bench_core::claims::Claim;
use bench_core::metrics::RunRecords;
use bench_core::protocol::SyncMode;

/// The largest staleness of any model `run` read (0 for a run that recorded no iteration).
pub fn max_staleness(run: &RunRecords) -> u64 {
    run.iterations
        .iter()
        .map(|x| x.staleness)
        .max()
        .unwrap_or(0)
}

/// The claim `id` that the DSSP run `run` (mode `dssp`) never exceeded its bound: a pass when
/// the largest staleness reached the bound without passing it, not exercised when it stayed
/// below (the bound never bound), a fail when it passed it.
pub fn bound_claim(id: String, dssp: &SyncMode, run: &RunRecords) -> Claim {
    let bound = dssp.bound().unwrap_or(0);
    let worst = max_staleness(run);
    let claim = Claim::check(
        id,
        format!("DSSP never exceeds s_L + r_max = {bound}"),
        format!("<= {bound}"),
        format!("max staleness {worst}"),
        worst <= bound,
    )
    .with_value(worst as f64);
    if worst < bound {
        claim.not_exercised(format!(
            "the bound never binds (max staleness {worst} < {bound})"
        ))
    } else {
        claim
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::claims::Verdict;
    use bench_core::metrics::IterationRow;

    fn run(stalenesses: &[u64]) -> RunRecords {
        RunRecords {
            iterations: stalenesses
                .iter()
                .map(|&s| IterationRow {
                    worker: 0,
                    iter: 0,
                    start: 0,
                    end: 0,
                    wait: 0,
                    staleness: s,
                    bytes: 0,
                })
                .collect(),
            ..RunRecords::default()
        }
    }

    #[test]
    fn reaching_the_bound_passes_staying_below_is_not_exercised_passing_it_fails() {
        let dssp = SyncMode::parse("dssp3-12").unwrap();
        assert_eq!(
            bound_claim("x".into(), &dssp, &run(&[0, 15, 3])).verdict,
            Verdict::Pass
        );
        let below = bound_claim("x".into(), &dssp, &run(&[0, 5, 3]));
        assert_eq!(below.verdict, Verdict::NotExercised);
        assert!(below
            .measured_value
            .contains("never binds (max staleness 5 < 15)"));
        assert_eq!(
            bound_claim("x".into(), &dssp, &run(&[16])).verdict,
            Verdict::Fail
        );
    }
}
