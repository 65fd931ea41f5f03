//! sim-validation: how well the simulator predicts a real run. Each mode runs under the threads
//! driver with the configured stragglers; its trace (every worker's measured compute time per
//! iteration) is then replayed in the simulator, over a network model measured in the same run
//! (the threads transport's one-way latency and bandwidth at the model's payload size, as
//! `syncbench transport-bench` measures them). A second prediction runs the simulator from the
//! configuration alone (the stragglers as configured, not measured). The table gives, per mode,
//! the measured and the two predicted iteration rates, mean waits, makespans and times to
//! target, with their relative errors; the claims state the error bound the replay achieves.
//!
//! The experiment is [`experiments::studies::sim_validation`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::studies::sim_validation::main()
}
