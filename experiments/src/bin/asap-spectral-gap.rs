//! asap-fig3 and asap-fig10: spectral gaps of all-reduce, parameter server, root expander,
//! chain and MALT Halton graphs, with ASAP's convention `1 - sigma_2(P)`, `P = A / d_in`.
//!
//! The experiment is [`experiments::papers::asap::spectral_gap`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::asap::spectral_gap::main()
}
