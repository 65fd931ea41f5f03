//! The harness's own experiments, beside the papers': the mode matrix (every mode on one
//! workload), ps-modes, the simulator's validation against real drivers, and the simulator's
//! scale benchmark.

pub mod bench_scale;
pub mod mode_matrix;
pub mod ps_modes;
pub mod sim_validation;
