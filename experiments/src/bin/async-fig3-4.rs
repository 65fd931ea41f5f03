//! async-fig3-4: SGD vs ASGD on least squares with one controlled-delay straggler among 8 workers
//! (ASYNC §6.3, Figures 3 and 4).
//!
//! The experiment is [`experiments::papers::r#async::fig3_4`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::r#async::fig3_4::main()
}
