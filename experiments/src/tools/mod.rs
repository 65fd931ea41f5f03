//! The `syncbench` command and its subcommands: datasets, launch, transport-bench, profile,
//! twin calibration, the fault matrix and regression tracking.

pub mod datasets;
pub mod devices;
pub mod faults;
pub mod figure_twins;
pub mod launch;
pub mod multicall;
pub mod profile;
pub mod regress;
pub mod syncbench;
pub mod transport_bench;
pub mod twins;
