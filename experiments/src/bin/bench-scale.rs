//! bench-scale: how the simulator's cost grows with the worker count (the scale
//! targets). For every case of the configuration (ps-modes' SVM under SSP on a parameter
//! server, the same SVM on decentralized ring-based peers, control-only learning) and every
//! worker count, one sim run in a process of its own: wall time, events/s and peak memory.
//! Writes results/bench-scale/scale.csv, claims on the targets, and the manifest. Not part of
//! `make reproduce-all` (minutes of CPU); `make bench-scale` runs and draws it.
//!
//! The experiment is [`experiments::studies::bench_scale`], compiled once in the library.

fn main() -> std::process::ExitCode {
    experiments::studies::bench_scale::main()
}
