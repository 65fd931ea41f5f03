//! mode-matrix: every synchronization mode of the three families on one workload, one network
//! and the same straggler patterns (not a paper figure: the table no single paper has). For
//! each (pattern, mode): time to an optimum-relative loss target, iterations, bytes per node,
//! mean wait and the largest staleness or gap observed; the time relative to a baseline mode
//! (BSP) in the same pattern, a per-pattern ranking, and claims that restate the papers'
//! headlines inside the matrix.
//!
//! The experiment is [`experiments::studies::mode_matrix`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::studies::mode_matrix::main()
}
