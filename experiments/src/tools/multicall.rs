//! One binary for every experiment: `syncbench` started under an experiment binary's name (a
//! symbolic link, as busybox does) runs that experiment. What travels to a GPU machine is
//! limited in size, so scripts/gpu-check.sh carries the one stripped `syncbench` and links the
//! experiments it runs to it.

use crate::{papers, studies};
use std::process::ExitCode;

/// An experiment binary's entry point.
pub type Entry = fn() -> ExitCode;

/// Every experiment binary (experiments/src/bin/) by name, with its entry point, but
/// bench-scale: it starts each of its points as a new process of its own executable
/// (`current_exe`), which through a link would be `syncbench`.
pub const EXPERIMENTS: [(&str, Entry); 23] = [
    ("asap-fig6", papers::asap::fig6::main),
    ("asap-fig7", papers::asap::fig7::main),
    ("asap-fig8", papers::asap::fig8::main),
    ("asap-fig9", papers::asap::fig9::main),
    ("asap-spectral-gap", papers::asap::spectral_gap::main),
    ("async-fig3-4", papers::r#async::fig3_4::main),
    ("async-fig5-6", papers::r#async::fig5_6::main),
    ("async-fig7-8", papers::r#async::fig7_8::main),
    ("dssp-fig3", papers::dssp::fig3::main),
    ("dssp-table1", papers::dssp::table1::main),
    ("essp-fig2-breakdown", papers::essp::fig2_breakdown::main),
    ("essp-fig2-staleness", papers::essp::fig2_staleness::main),
    ("essp-fig3", papers::essp::fig3::main),
    ("hop-fig12", papers::hop::fig12::main),
    ("hop-fig13", papers::hop::fig13::main),
    ("hop-fig14-16", papers::hop::fig14_16::main),
    ("hop-fig17", papers::hop::fig17::main),
    ("hop-fig18-19", papers::hop::fig18_19::main),
    ("hop-fig20-21", papers::hop::fig20_21::main),
    ("hop-table1", papers::hop::table1::main),
    ("mode-matrix", studies::mode_matrix::main),
    ("ps-modes", studies::ps_modes::main),
    ("sim-validation", studies::sim_validation::main),
];

/// The experiment this process was started as (its program name's file name), if any.
pub fn started_as() -> Option<Entry> {
    let argv0 = std::env::args_os().next()?;
    let name = std::path::Path::new(&argv0)
        .file_name()?
        .to_str()?
        .to_owned();
    EXPERIMENTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, main)| *main)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_experiment_binary_but_bench_scale_is_in_the_table_once() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/bin");
        let mut bins: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                e.unwrap()
                    .path()
                    .file_stem()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|n| n != "syncbench" && n != "bench-scale")
            .collect();
        bins.sort();
        let table: Vec<String> = EXPERIMENTS.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(table, bins);
    }
}
