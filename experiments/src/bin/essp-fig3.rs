//! essp-fig3 (matrix-factorisation part): squared loss vs clock and vs time for SSP(s) and ESSP(s),
//! and the stability of both at the largest s with a large step size (ESSP §"Experiments", Fig 3).
//! With an `[lda]` section the same comparison runs on LDA (its panels: lda_curves.csv).
//!
//! The experiment is [`experiments::papers::essp::fig3`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::essp::fig3::main()
}
