//! hop-fig17: Bounded staleness (s = 5) against the standard protocol on the ring-based graph under
//! random slowdown (Hop §7.3.4, Fig 17).
//!
//! The experiment is [`experiments::papers::hop::fig17`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::hop::fig17::main()
}
