//! ESSP (essp.txt): parameter-server consistency on row tables: staleness profiles (Fig 2),
//! and convergence per clock and per second of MF and LDA ([`lda_convergence`], Fig 3).

pub mod fig2_breakdown;
pub mod fig2_staleness;
pub mod fig3;
pub mod lda_convergence;

use crate::judge::comparison::{Allows, PaperComparison, DEFAULT_TOLERANCE};

/// essp.txt's Fig 3 statement, which the MF and LDA convergence claims check per clock and per
/// second: ESSP better than SSP or within the default tolerance of it.
pub const FASTER_OR_COMPARABLE: PaperComparison = PaperComparison {
    quote: "In both cases ESSP converges faster or comparable to SSP with respect to iteration and run time",
    source: "essp.txt:231",
    allows: Allows::BetterOrEquivalent,
    tolerance: DEFAULT_TOLERANCE,
};
