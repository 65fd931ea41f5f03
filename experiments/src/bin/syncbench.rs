//! `syncbench`: the harness's general command line: datasets, transport benchmarks, graphs, and
//! launching the ranks of a cluster-driver run on one machine.
//!
//! The experiment is [`experiments::tools::syncbench`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::tools::syncbench::main()
}
