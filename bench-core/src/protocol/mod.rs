//! Synchronization modes as sans-IO state machines.
//!
//! A protocol node holds only synchronization state (clocks, pending reads, counters). It never
//! touches sockets, threads, sleeps or the wall clock: a driver feeds it [`Input`]s stamped with
//! `now` and polls it for [`Action`]s. Model parameters never pass through it: messages name
//! clocks and versions, and the driver attaches, moves and applies the bytes (see
//! [`Message::payload`]). The same node objects therefore run under the simulator, real threads
//! and, later, real processes.
//!
//! Two families share the trait: centralized (parameter server: [`ps`]) and, with later modules,
//! decentralized peers on a directed graph.

pub mod buffered;
pub mod coord;
mod event;
mod factory;
mod message;
pub mod peer;
pub mod ps;
pub mod table;
#[cfg(test)]
mod test_support;

pub use event::{Event, IterationRecord};
pub use factory::{AsyncSpec, ProtocolSpec};
pub use message::{Message, PayloadKind, MESSAGE_WORDS};
pub use ps::SyncMode;

use crate::error::Result;

pub use crate::node_id::NodeId;
/// Nanoseconds since the start of a run, virtual (sim) or real (threads).
pub type Nanos = u64;

/// What a node is in its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Role {
    /// A parameter server shard.
    Server,
    /// Worker with its 0-based worker index.
    Worker(usize),
}

/// Inputs a driver feeds to a node.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// The run begins.
    Start,
    /// The computation started by [`Action::Compute`] for `iter` has finished; its result (an
    /// update) is held by the driver.
    ComputeDone {
        /// Iteration whose computation finished.
        iter: u64,
    },
    /// A message from a peer arrived (its payload, if any, is held by the driver).
    Received {
        /// Sender.
        from: NodeId,
        /// The control part of the message.
        msg: Message,
    },
}

/// Outputs a node asks its driver to carry out, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send `msg` to `to`, attaching the payload `msg.payload()` names.
    Send {
        /// Destination node.
        to: NodeId,
        /// Control part.
        msg: Message,
    },
    /// Start computing iteration `iter` on the node's local model.
    Compute {
        /// Iteration to compute.
        iter: u64,
    },
    /// Apply the update payload received from `from` for `clock` to the local (server) model.
    Apply {
        /// Worker node that sent the update.
        from: NodeId,
        /// Its clock.
        clock: u64,
    },
    /// Drop, unapplied, the update payload received from `from` for `clock` (a late update of a
    /// backup-worker run).
    Discard {
        /// Worker node that sent the update.
        from: NodeId,
        /// Its clock.
        clock: u64,
    },
    /// Replace the local model by the snapshot last received from `from`.
    Install {
        /// Node that sent the snapshot.
        from: NodeId,
    },
    /// Fold the results applied since the previous commit into the model as one step; the
    /// model becomes version `version` (ASYNC family: one commit per result for asynchronous
    /// methods, one per round of all workers for synchronous ones).
    Commit {
        /// Model version the step produces.
        version: u64,
    },
    /// Average the parameters of `inputs` — `(node, iteration, weight)`: the update of that
    /// iteration received from that node, or the node's own parameters — with the given
    /// weights (a decentralized Reduce), then apply the pending gradients (Appl).
    Reduce {
        /// The inputs and their weights.
        inputs: Vec<(NodeId, u64, f64)>,
    },
    /// Row tables: the next payload exchanged with `peer` concerns `rows` (sorted). A shard
    /// names exactly the rows its next message to `peer` carries; a worker names the rows whose
    /// clock the next message from `peer` advances, and the learning checks that the payload
    /// carries only rows among them (an ESSP push carries only the rows that changed).
    RowSet {
        /// The other node of the exchange.
        peer: NodeId,
        /// The rows, sorted.
        rows: Vec<table::RowKey>,
    },
    /// Something to record in the run's metrics.
    Record(Event),
    /// This node has nothing more to do.
    Finished,
}

/// A synchronization protocol node. See the module documentation.
pub trait Protocol: Send {
    /// This node's id.
    fn node(&self) -> NodeId;
    /// This node's role.
    fn role(&self) -> Role;
    /// Feeds one input at time `now`.
    ///
    /// # Errors
    /// [`crate::CoreError::Protocol`] when the input breaks the protocol's rules (out-of-order
    /// clocks, a message this role never receives): a driver bug or a misbehaving peer.
    fn handle(&mut self, now: Nanos, input: Input) -> Result<()>;
    /// Next action to carry out, if any.
    fn poll_action(&mut self) -> Option<Action>;
    /// True once the node has emitted [`Action::Finished`].
    fn is_finished(&self) -> bool;
    /// One line saying what the node waits for (used in deadlock reports).
    fn waiting_on(&self) -> String;
    /// The iteration the node is in, for families where that is defined (peers).
    fn iteration(&self) -> Option<u64> {
        None
    }
}
