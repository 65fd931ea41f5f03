//! ESSP (Dai et al., AAAI 2015): parameter-server consistency on row tables: staleness
//! profiles (Fig 2), and convergence per clock and per second of MF and LDA
//! ([`lda_convergence`], Fig 3).

pub mod fig2_breakdown;
pub mod fig2_staleness;
pub mod fig3;
pub mod lda_convergence;

use crate::judge::claim_id::ClaimId;
use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};
use crate::judge::curve_area::Axis;
use crate::judge::time_to_target::TimeToTarget;
use crate::judge::verdict::Judged;
use bench_core::claims::Claim;
use std::fmt::Display;

/// ESSP's Fig 3 statement, which the MF and LDA convergence claims check per clock and per
/// second: ESSP better than SSP or within the default tolerance of it.
pub const FASTER_OR_COMPARABLE: PaperComparison = PaperComparison {
    quote: "In both cases ESSP converges faster or comparable to SSP with respect to iteration and run time",
    source: "ESSP §\"Experiments\", Fig 3",
    allows: Allows::BetterOrEquivalent,
    tolerance: DEFAULT_TOLERANCE,
};

/// A time or clock count for claims and summaries, `never` when the run did not get there.
pub(super) fn fmt_opt(v: Option<f64>) -> String {
    v.map_or("never".into(), |x| format!("{x:.4}"))
}

/// What one of essp-fig3's convergence comparisons is about: the claim ids (clocks, time) and
/// statements (clocks, time) of one workload at one staleness.
pub struct ConvergenceWords {
    /// Ids of the per-clock and per-second claims.
    pub ids: [ClaimId; 2],
    /// Their statements.
    pub statements: [String; 2],
}

/// ESSP against SSP at one staleness, by clocks and by time to the judged target, read in
/// ESSP's words ([`FASTER_OR_COMPARABLE`]): the one time-to-target comparison
/// ([`Judged::time_claims`]) on each axis, each followed by its whole-curve twin where the
/// target is optimum-relative; `ssp` and `essp` are the runs' keys in `judged`. The deciding
/// number is SSP's over ESSP's (above 1: ESSP first), as every figure's.
pub fn convergence_claims<K: Display + PartialEq + Clone>(
    judged: &Judged<'_, '_, K>,
    ssp: K,
    essp: K,
    words: ConvergenceWords,
) -> Vec<Claim> {
    let ConvergenceWords { ids, statements } = words;
    ids.into_iter()
        .zip(statements)
        .zip([Axis::Clocks, Axis::Seconds])
        .flat_map(|((id, statement), axis)| {
            judged.time_claims(
                TimeToTarget::new(id, &FASTER_OR_COMPARABLE, essp.clone(), ssp.clone())
                    .on(axis)
                    .stated(statement),
            )
        })
        .collect()
}
