//! asap-fig9: SVM on a webspam twin with 25 peers on the root expander, NOTIFY-ACK vs BSP vs
//! ASYNC over receive buffers (ASAP §6.2, Fig 9): time to an optimum-relative loss target (half
//! way from the initial held-out loss to the reference optimum's).
//!
//! The experiment is [`experiments::papers::asap::fig9`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::asap::fig9::main()
}
