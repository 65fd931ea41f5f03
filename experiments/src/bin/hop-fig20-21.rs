//! hop-fig20-21: 8 workers placed unevenly on 3 machines under a two-level network; the
//! ring-based graph against two hierarchical graphs (Hop §7.3.6, Figs 20 and 21).
//!
//! The experiment is [`experiments::papers::hop::fig20_21`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::hop::fig20_21::main()
}
