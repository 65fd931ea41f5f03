//! hop-fig18-19: Skipping iterations (maximum jump 2 and 10) against the standard protocol with one
//! worker deterministically 4x slower (Hop §7.3.5, Figs 18-19).
//!
//! The experiment is [`experiments::papers::hop::fig18_19`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::hop::fig18_19::main()
}
