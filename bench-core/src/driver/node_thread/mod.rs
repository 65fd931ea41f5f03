//! One protocol node running in real time over any [`Endpoint`](crate::transport::Endpoint):
//! what the threads driver runs on one OS thread per node and the cluster driver in each
//! rank's process.
//!
//! By idea: [`node_loop`] (the node's loop: actions, waits, computation in real time),
//! [`links`] (the end-of-run and credit exchange, a sans-IO state machine), [`codec`] (a
//! payload's words in a ring slot), [`spawn`] (threads per node, joining), [`outcome`] (what a
//! node measured, merged into a run's records), [`abort`] (a stop request from outside) and
//! [`config`] (settings).

mod abort;
mod codec;
mod config;
pub mod links;
mod node_loop;
mod outcome;
mod spawn;

pub use abort::AbortFlag;
pub use config::ThreadsConfig;
pub use node_loop::{run_node, NodeContext};
pub use outcome::{merge, NodeOutcome};
pub use spawn::{join_nodes, spawn_nodes, RunShared};
