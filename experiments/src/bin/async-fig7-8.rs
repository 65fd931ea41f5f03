//! async-fig7-8: SGD vs ASGD and SAGA vs ASAGA on 32 workers with production-cluster
//! stragglers (ASYNC §6.3, Figures 7 and 8, Table 3).
//!
//! The experiment is [`experiments::papers::r#async::fig7_8`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::r#async::fig7_8::main()
}
