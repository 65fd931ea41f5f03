//! ps-modes: the template protocol experiment (not a paper figure). SVM on RCV1-shaped data,
//! a parameter server with BSP, ASP and SSP(s), one slow worker, under the sim and threads
//! drivers: loss vs time, wait-time and staleness histograms, and three claims.
//!
//! The experiment is [`experiments::studies::ps_modes`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::studies::ps_modes::main()
}
