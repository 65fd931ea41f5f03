//! async-fig5-6: SAGA vs ASAGA on least squares with one controlled-delay straggler among 8 workers
//! (ASYNC §6.3, Figures 5 and 6).
//!
//! The experiment is [`experiments::papers::r#async::fig5_6`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::r#async::fig5_6::main()
}
