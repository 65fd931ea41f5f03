//! hop-fig13: decentralized training on the ring-based graph against a BSP parameter server
//! (Hop §7.3.2, Fig 13, SVM part), on the same workload, compute and network models.
//!
//! The experiment is [`experiments::papers::hop::fig13`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::hop::fig13::main()
}
