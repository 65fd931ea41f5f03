//! One binary for every experiment: `syncbench` started under an experiment binary's name (a
//! symbolic link, as busybox does) runs that experiment. What travels to a GPU machine is
//! limited in size, so scripts/gpu-check.sh carries the one stripped `syncbench` and links the
//! experiments it runs to it.

use std::process::ExitCode;

/// An experiment binary's entry point.
pub type Entry = fn() -> ExitCode;

// The table is written by build.rs from the shims under src/bin/: a binary is registered by its
// file there alone.
include!(concat!(env!("OUT_DIR"), "/multicall_table.rs"));

/// Every experiment binary by name, with its entry point, but the benchmarks
/// ([`crate::harness::catalog::BENCHMARKS`]): bench-scale starts each of its points as a new
/// process of its own executable (`current_exe`), which through a link would be `syncbench`.
pub fn experiments() -> impl Iterator<Item = (&'static str, Entry)> {
    SHIMS
        .iter()
        .copied()
        .filter(|(n, _)| !crate::harness::catalog::BENCHMARKS.contains(n))
}

/// The experiment this process was started as (its program name's file name), if any.
pub fn started_as() -> Option<Entry> {
    let argv0 = std::env::args_os().next()?;
    let name = std::path::Path::new(&argv0)
        .file_name()?
        .to_str()?
        .to_owned();
    experiments()
        .find(|(n, _)| *n == name)
        .map(|(_, main)| main)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalogue_binary_runs_through_the_one_binary_and_no_benchmark_does() {
        let table: Vec<&str> = experiments().map(|(n, _)| n).collect();
        for e in crate::harness::catalog::entries() {
            assert!(
                table.contains(&e.binary.as_str()),
                "{} is not in the table",
                e.binary
            );
        }
        for b in crate::harness::catalog::BENCHMARKS {
            assert!(!table.contains(b), "{b} is in the table");
            assert!(SHIMS.iter().any(|(n, _)| n == b), "{b} has no shim");
        }
        let mut sorted = table.clone();
        sorted.dedup();
        assert_eq!(sorted, table, "a name twice");
    }
}
