//! What every experiment run needs, whatever it trains or claims: the experiment spec and its
//! runner, the common flags and configuration ranges, result directories with manifests, parallel
//! runs, interrupts and exit codes, the figure catalogue, the data source (and the
//! `datasets.lock` it reads), the cluster session, the driver runner and the transports' measured
//! costs. The lowest room: it imports no other.

pub mod catalog;
pub mod cli;
pub mod cluster;
pub mod config_ranges;
pub mod data_source;
pub mod datasets_needed;
pub mod deviations;
pub mod device_choice;
pub mod exit;
pub mod experiment;
pub mod explained;
pub mod input_files;
pub mod interrupt;
pub mod output;
pub mod parallel;
pub mod progress_log;
pub mod runner;
pub mod seed_lines;
pub mod transport_costs;
