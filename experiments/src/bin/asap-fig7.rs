//! asap-fig7: how many whole (consistent) buffers each reduce gets under NOTIFY-ACK, BSP with a
//! barrier, and ASYNC (ASAP §6.2, Fig 7), with one-sided writes into single per-sender receive
//! buffers carrying the version in header and footer.
//!
//! The experiment is [`experiments::papers::asap::fig7`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::asap::fig7::main()
}
