//! essp-fig2-staleness: the distribution of the clock differential (parameter age - local
//! clock) at every read, for BSP, SSP(s) and ESSP(s), on matrix factorisation by SGD with 64
//! workers (ESSP §"Consistency Models for Parameter Servers", Fig 2 left).
//!
//! The experiment is [`experiments::papers::essp::fig2_staleness`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::essp::fig2_staleness::main()
}
