//! The five papers' experiments: one folder per paper, one file per figure or table, and the
//! parts a paper's figures share beside them. Each figure's `main` is called by its
//! `src/bin/<binary>.rs` shim.

pub mod asap;
pub mod r#async;
pub mod dssp;
pub mod essp;
pub mod hop;
