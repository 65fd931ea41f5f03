//! asap-fig6: SVM-SGD with stochastic reduce over sparse graphs against all-reduce
//! (ASAP §6.1, Fig 6): bytes sent per node and time to an optimum-relative loss target (half
//! way from the initial held-out loss to the reference optimum's).
//!
//! The experiment is [`experiments::papers::asap::fig6`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::asap::fig6::main()
}
