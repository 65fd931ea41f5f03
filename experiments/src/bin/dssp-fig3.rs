//! dssp-fig3: BSP, ASP, SSP(3..15) and their average, and DSSP(3, 12) under a
//! communication-heavy (fully connected layers) and a computation-heavy (pure CNN) time
//! profile (DSSP §V, Fig 3), in the simulator with a CPU proxy model.
//!
//! The experiment is [`experiments::papers::dssp::fig3`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::papers::dssp::fig3::main()
}
