//! The one error enum of `bench-core`. Every variant names what went wrong and where, so that a
//! binary can print it and exit non-zero without further context.

use std::path::PathBuf;

/// Errors raised anywhere in the shared core.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// A graph edge-list file could not be parsed.
    #[error("{path}:{line}: {message}")]
    GraphFile {
        /// File being parsed.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What was wrong on that line.
        message: String,
    },
    /// A data file (LIBSVM, ratings, ...) could not be parsed.
    #[error("{path}:{line}:{column}: {message}")]
    DataFile {
        /// File being parsed.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// 1-based column (byte offset in the line) where the bad token starts.
        column: usize,
        /// What was wrong.
        message: String,
    },
    /// A topology request that cannot be built (unknown kind, too few nodes, ...).
    #[error("invalid topology: {0}")]
    Topology(String),
    /// A configuration that is impossible or inconsistent.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A configuration field outside its allowed range; `field` is its dotted name as written
    /// in the config (`svm.eta0`), so callers and tests can tell which field without parsing.
    #[error("invalid configuration: {field} must be {expected}, got {value}")]
    OutOfRange {
        /// Dotted field name.
        field: String,
        /// The allowed range, in words (`> 0`, `in (0, 1]`).
        expected: String,
        /// The value given.
        value: String,
    },
    /// A numerical routine failed (e.g. an SVD that did not converge).
    #[error("numerical failure: {0}")]
    Numeric(String),
    /// A protocol was driven into a state its rules forbid (a driver bug or a bad peer).
    #[error("protocol violation at node {node}: {message}")]
    Protocol {
        /// Node whose state machine rejected the input.
        node: usize,
        /// What was rejected.
        message: String,
    },
    /// A run stopped making progress: no event pending and not every worker finished.
    #[error("deadlock at t={time_ns} ns: {message}")]
    Deadlock {
        /// Virtual or real time at which no progress was possible.
        time_ns: u64,
        /// Which nodes were waiting on what.
        message: String,
    },
    /// A node stopped because another node (or rank) failed first; the first failure is the
    /// error worth reporting, this one only explains why the rest stopped.
    #[error("node {node} stopped: {message}")]
    Stopped {
        /// Node that stopped.
        node: usize,
        /// Whose failure stopped it.
        message: String,
    },
    /// A multi-process run failed on one rank, or lost one.
    #[error("rank {rank}: {message}")]
    Cluster {
        /// Rank that failed or was lost.
        rank: usize,
        /// What happened there.
        message: String,
    },
    /// The transport failed or rejected an operation; `fault` says what kind of failure it
    /// was, so callers (and the fault tests) can tell a lost peer from a ring overrun without
    /// reading the message.
    #[error("transport: {message}")]
    Transport {
        /// What kind of failure.
        fault: TransportFault,
        /// What happened, naming the nodes, peer and address involved.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// File involved.
        path: PathBuf,
        /// Underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// CSV serialisation failed.
    #[error("{path}: {source}")]
    Csv {
        /// File involved.
        path: PathBuf,
        /// Underlying CSV error.
        #[source]
        source: csv::Error,
    },
    /// A dataset could not be fetched, checked, unpacked or used.
    #[error("dataset '{name}': {message}")]
    Dataset {
        /// Lock-file name of the dataset.
        name: String,
        /// What went wrong and what to do.
        message: String,
    },
    /// JSON serialisation failed.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
}

/// Kinds of transport failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportFault {
    /// A peer's process or connection went away mid-run (closed, reset, a failed completion).
    PeerLost,
    /// Bytes from a peer that do not decode: a bad handshake or job token, an unknown tag, a
    /// truncated or oversized frame, a segment directory that does not check out.
    Malformed,
    /// A peer could not be reached before a deadline (start-up, a notification wait).
    Unreachable,
    /// An operation named a node or ring that does not exist on this fabric.
    NoSuchPeer,
    /// A write or read outside a ring's slots or a slot's size, a queue that stayed full, or a
    /// slot whose versions show it was overwritten before it was read.
    RingOverrun,
    /// Setting the transport up failed: a port, a listener, a thread, a shared segment.
    Setup,
    /// The RDMA device or verbs failed.
    Device,
}

impl CoreError {
    /// Field `field` was `value`, outside `expected`.
    pub fn out_of_range(
        field: impl Into<String>,
        expected: impl Into<String>,
        value: impl std::fmt::Display,
    ) -> Self {
        CoreError::OutOfRange {
            field: field.into(),
            expected: expected.into(),
            value: value.to_string(),
        }
    }

    /// A transport failure of kind `fault`.
    pub fn transport(fault: TransportFault, message: impl Into<String>) -> Self {
        CoreError::Transport {
            fault,
            message: message.into(),
        }
    }

    /// The kind of a transport failure (None for other errors).
    pub fn transport_fault(&self) -> Option<TransportFault> {
        match self {
            CoreError::Transport { fault, .. } => Some(*fault),
            _ => None,
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        CoreError::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result alias for the core.
pub type Result<T, E = CoreError> = std::result::Result<T, E>;
