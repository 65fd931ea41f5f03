//! dssp-table1: two workers on mixed GPUs (one about 2x slower); time for BSP, ASP, SSP(3, 6,
//! 15) and DSSP(3, 12) to reach two accuracy targets (DSSP §V-D, Table I), in the simulator with
//! a ResNet-110 time profile and a CPU proxy model for the learning.
//!
//! The experiment is [`experiments::papers::dssp::table1`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::dssp::table1::main()
}
