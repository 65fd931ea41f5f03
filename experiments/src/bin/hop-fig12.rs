//! hop-fig12: how much random slowdown slows standard decentralized training on ring,
//! ring-based and double-ring graphs (Hop §7.3.1, Fig 12, SVM part).
//!
//! The experiment is [`experiments::papers::hop::fig12`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::hop::fig12::main()
}
