//! Parameter-server family: one server node and `n` worker nodes.
//!
//! The read rule is ESSP's (ESSP §"Consistency Models for Parameter Servers"): with staleness
//! bound `s`, a worker at clock `c` may compute only on a model holding every worker's updates
//! of clocks `<= c - s - 1`. BSP is `s = 0`; ASP has no bound. Workers keep the last snapshot
//! as a client cache and read from it while it is fresh enough (so SSP reads lag up to `s`);
//! otherwise they request a fresh one, which the server answers once every worker has
//! completed clock `c - s - 1`. Under ASP a worker never blocks: it computes on its cache and
//! keeps one refresh request in flight, which the server answers at once with its current
//! model.
//!
//! ESSP (ESSP §"ESSPTable: An efficient ESSP System") keeps SSP's read rule and adds eager
//! push: whenever the clock every worker has completed advances, the server sends the fresh
//! model to every worker, so caches are refreshed before they go stale. DSSP (DSSP §III,
//! Alg 1-2) has every worker push and wait for the server's OK (a fresh model) each
//! iteration; the server releases it through the synchronization controller of [`dssp`].
//!
//! Each mode is one file under [`modes`]: label, parser, bound, policies and row-table form.

mod completed;
pub mod dssp;
pub mod modes;
mod policy;
mod server;
mod worker;

pub use modes::{PsMode, SyncMode};
pub use policy::{ReadPolicy, ReleasePolicy};
pub use server::PsServer;
pub use worker::PsWorker;

#[cfg(test)]
mod tests;
