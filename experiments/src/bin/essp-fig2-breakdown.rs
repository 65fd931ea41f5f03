//! essp-fig2-breakdown: computation vs blocked (communication-wait) time per clock for SSP(s) and
//! ESSP(s) (ESSP §"Experiments", Fig 2 right), on LDA as the paper measures it (the `[lda]` section
//! of the essp-fig2-staleness configs) and on that experiment's matrix factorisation.
//!
//! The experiment is [`experiments::papers::essp::fig2_breakdown`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::essp::fig2_breakdown::main()
}
