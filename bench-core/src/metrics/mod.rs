//! Run records, CSV writing into a run directory that appears only when complete, manifests and
//! latency histograms.

mod event_rows;
pub mod float_text;
mod histogram;
mod manifest;
mod records;
mod run_dir;
mod seconds;

pub use event_rows::EventRows;
pub use histogram::WaitHistogram;
pub use manifest::{
    cpu_model, environment, git_revision, hostname, numeric_platform, utc_timestamp, Manifest,
};
pub use records::{objective_span, IterationRow, ProgressRow, RowReadRow, RunRecords, WaitRow};
pub use run_dir::{abandon_partials, pid_alive, RunDir};
pub use seconds::seconds;
