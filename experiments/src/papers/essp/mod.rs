//! ESSP (essp.txt): parameter-server consistency on row tables: staleness profiles (Fig 2),
//! and convergence per clock and per second of MF and LDA ([`lda_convergence`], Fig 3).

pub mod fig2_breakdown;
pub mod fig2_staleness;
pub mod fig3;
pub mod lda_convergence;
