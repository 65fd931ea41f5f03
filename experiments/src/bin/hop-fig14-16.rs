//! hop-fig14-16: Backup workers (1, with token queues) against the standard protocol on ring-based
//! and double-ring graphs under random slowdown (Hop §7.3.3, Figs 14-16).
//!
//! The experiment is [`experiments::papers::hop::fig14_16`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::hop::fig14_16::main()
}
