//! ESSP (Dai et al., AAAI 2015): parameter-server consistency on row tables: staleness
//! profiles (Fig 2), and convergence per clock and per second of MF and LDA
//! ([`lda_convergence`], Fig 3).

pub mod fig2_breakdown;
pub mod fig2_staleness;
pub mod fig3;
pub mod lda_convergence;

use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};
use crate::judge::curve_area::Axis;
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
    pub ids: [String; 2],
    /// Their statements.
    pub statements: [String; 2],
}

/// ESSP against SSP at one staleness, by clocks and by time to the judged target, read in
/// ESSP's words ([`FASTER_OR_COMPARABLE`]) and not exercised when either run crosses the
/// target at once, each followed by its whole-curve twin where the target is optimum-relative
/// ([`Judged::area_claim`]: per clock and per second); `ssp` and `essp` are the runs' keys in
/// `judged`.
pub fn convergence_claims<K: Display + PartialEq>(
    judged: &Judged<'_, '_, K>,
    ssp: K,
    essp: K,
    words: ConvergenceWords,
) -> Vec<Claim> {
    let (s, e) = (judged.crossing(&ssp), judged.crossing(&essp));
    let (si, ei) = (s.map(|h| h.iteration), e.map(|h| h.iteration));
    let (st, et) = (s.map(|h| h.time), e.map(|h| h.time));
    let [clocks_id, time_id] = words.ids;
    let areas = [(&clocks_id, Axis::Clocks), (&time_id, Axis::Seconds)].map(|(id, axis)| {
        judged.area_claim(
            format!("{id}-area"),
            &FASTER_OR_COMPARABLE,
            axis,
            &essp,
            &ssp,
        )
    });
    let compared = [ssp, essp];
    let [clocks_statement, time_statement] = words.statements;
    let (clocks_hold, clocks_how) = FASTER_OR_COMPARABLE.judge(ei, si);
    let (time_hold, time_how) = FASTER_OR_COMPARABLE.judge(et, st);
    // The deciding number: ESSP's over SSP's, the ratio the comparison reads (below 1: ESSP
    // faster); none when either never crosses.
    let ratio = |ours: Option<f64>, theirs: Option<f64>| match (ours, theirs) {
        (Some(a), Some(b)) if b > 0.0 => a / b,
        _ => f64::NAN,
    };
    [
        judged.gate(
            Claim::check(
                clocks_id,
                clocks_statement,
                FASTER_OR_COMPARABLE.cite(),
                format!(
                    "ESSP {} vs SSP {} clocks: {clocks_how}",
                    fmt_opt(ei),
                    fmt_opt(si)
                ),
                clocks_hold,
            )
            .with_value(ratio(ei, si)),
            &compared,
        ),
        judged.gate(
            Claim::check(
                time_id,
                time_statement,
                FASTER_OR_COMPARABLE.cite(),
                format!(
                    "ESSP {} s vs SSP {} s: {time_how}",
                    fmt_opt(et),
                    fmt_opt(st)
                ),
                time_hold,
            )
            .with_value(ratio(et, st)),
            &compared,
        ),
    ]
    .into_iter()
    .zip(areas)
    .flat_map(|(time, area)| std::iter::once(time).chain(area))
    .collect()
}
