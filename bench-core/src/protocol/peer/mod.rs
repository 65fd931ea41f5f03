//! Decentralized family: peers on a directed graph, each averaging the parameters of its
//! in-neighbours (Hop §2.2, Fig 1, parallel approach: Send and Compute on x_k, then Rec, Reduce,
//! Appl).
//!
//! Settings (Hop §3-4, Table 1):
//! * standard: Rec(k) takes the iteration-k update of every in-neighbour (Fig 4);
//! * NOTIFY-ACK (ASAP): after its Reduce(k) a peer ACKs every in-neighbour, and a peer sends
//!   iteration k's update only once every out-neighbour has ACKed iteration k-1;
//! * backup workers N_buw: Rec(k) takes any `|N_in| - N_buw` updates of iteration k plus those
//!   already there (Fig 8); late updates are dropped; before a Send the receiver's iteration,
//!   known from its tokens, is checked and updates it no longer needs are not sent;
//! * bounded staleness s: Rec(k) needs, from every in-neighbour, an update of iteration at
//!   least k - s, received now or earlier, and reduces the newest new ones with eq. 2's
//!   iteration weights (Fig 9);
//! * token queues max_i (any of the above): a peer enters iteration k+1 only with a token from
//!   every out-neighbour, and hands a token to every in-neighbour when it enters an iteration
//!   (Fig 7), so Iter(i) - Iter(j) <= max_i for every out-neighbour j.
//!
//! The node's own parameters always count as one input (the self-loop of Hop §3.1).
//! Iteration gaps are bounded per Table 1 ([`gap_bound`]); update queues are sized from those
//! bounds, and an update that would not fit is a protocol error. The simulator's schedule search
//! for those gaps is [`crate::driver::schedule_search`].

mod bounds;
mod hop;
mod label;
mod update_queue;

#[cfg(test)]
mod tests;

pub use bounds::{gap_bound, GapBound};
pub use hop::HopPeer;
pub use update_queue::{Enqueued, UpdateQueue};

use crate::error::{CoreError, Result};
use crate::protocol::Protocol;
use crate::topology::Topology;

/// How a peer collects its in-neighbours' updates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum PeerMode {
    /// Every in-neighbour's update of the same iteration.
    Standard,
    /// Standard plus ASAP's NOTIFY-ACK.
    NotifyAck,
    /// Only `|N_in| - backups` updates per iteration.
    Backup {
        /// N_buw >= 1, below every peer's in-degree.
        backups: usize,
    },
    /// Local bounded staleness s.
    Staleness {
        /// s >= 0.
        s: u64,
    },
}

/// A decentralized run's synchronization settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerSettings {
    /// How updates are collected.
    pub mode: PeerMode,
    /// Token queues bounding the gap to out-neighbours (None: no tokens).
    pub max_i: Option<u64>,
    /// Iterations every peer runs.
    pub iterations: u64,
    /// Skipping iterations (Hop §5; needs token queues).
    #[serde(default)]
    pub skip: Option<SkipPolicy>,
    /// Hop's serial approach (§3.2, Fig 2(a)): Compute, Appl, then Send the new parameters, then
    /// Rec and Reduce; false (default) is the parallel approach (Send and Compute on x_k together,
    /// then Rec, Reduce, Appl), which Hop uses.
    #[serde(default)]
    pub serial: bool,
}

/// When and how far a slow peer jumps ahead (Hop §5). A peer about to enter a new
/// iteration is a straggler when every out-neighbour is at least `trigger` iterations ahead
/// (its token count exceeds max_i by that much); it then jumps as far as the smallest lead,
/// at most `max_jump` iterations, renewing its parameters first with a Rec(k-1) + Reduce of
/// its in-neighbours' updates of the iteration before the target, and taking and giving as
/// many tokens as iterations jumped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkipPolicy {
    /// Most iterations one jump covers (>= 2: one is a normal advance).
    pub max_jump: u64,
    /// Smallest lead of every out-neighbour that makes the peer jump (>= 1).
    pub trigger: u64,
}

impl PeerSettings {
    /// The standard protocol (no tokens, no skipping) for `iterations` iterations.
    pub fn standard(iterations: u64) -> Self {
        PeerSettings {
            serial: false,
            mode: PeerMode::Standard,
            max_i: None,
            iterations,
            skip: None,
        }
    }

    /// Label: `standard`, `notify-ack`, `backup1`, `staleness5`, with `+tokens3` when token
    /// queues are on.
    pub fn label(&self) -> String {
        let mut base = match self.mode {
            PeerMode::Standard => "standard".to_string(),
            PeerMode::NotifyAck => "notify-ack".to_string(),
            PeerMode::Backup { backups } => format!("backup{backups}"),
            PeerMode::Staleness { s } => format!("staleness{s}"),
        };
        if let Some(k) = self.skip {
            base = format!("{base}+skip{}", k.max_jump);
        }
        if self.serial {
            base = format!("{base}+serial");
        }
        match self.max_i {
            Some(m) => format!("{base}+tokens{m}"),
            None => base,
        }
    }

    /// Builds one [`HopPeer`] per node of `topology` (node i = worker i).
    ///
    /// # Errors
    /// [`CoreError::Config`] for fewer than 2 nodes, a graph that is not strongly connected
    /// for token queues, backup workers or bounded staleness, `max_i < 1`, no
    /// iterations, backup workers without token queues (the gap would be unbounded, Hop
    /// §4.3) or backup workers not below a peer's in-degree.
    pub fn build(&self, topology: &Topology) -> Result<Vec<Box<dyn Protocol>>> {
        let n = topology.nodes();
        // Hop's mechanisms (tokens from out-neighbours, backup workers, local staleness) are
        // defined for strongly connected graphs; ASAP's stochastic reduce also runs over
        // one-way graphs such as a chain, where information flows downstream only.
        let needs_strong = self.max_i.is_some()
            || self.skip.is_some()
            || matches!(
                self.mode,
                PeerMode::Backup { .. } | PeerMode::Staleness { .. }
            );
        if n < 2 || (needs_strong && !topology.is_strongly_connected()) {
            return Err(CoreError::Config(format!(
                "{} needs a strongly connected graph of at least 2 nodes; '{}' ({n} nodes) is not",
                self.label(),
                topology.name()
            )));
        }
        if self.iterations == 0 {
            return Err(CoreError::Config("iterations must be >= 1".into()));
        }
        if self.max_i == Some(0) {
            return Err(CoreError::Config(
                "max_i (token queues) must be >= 1".into(),
            ));
        }
        if let Some(k) = self.skip {
            if self.max_i.is_none()
                || k.max_jump < 2
                || k.trigger == 0
                || self.mode == PeerMode::NotifyAck
            {
                return Err(CoreError::Config(format!(
                    "skipping iterations needs token queues (max_i), max_jump >= 2, trigger >= 1 and no NOTIFY-ACK; got {}, max_i {:?}, max_jump {}, trigger {}",
                    self.label(), self.max_i, k.max_jump, k.trigger
                )));
            }
        }
        if let PeerMode::Backup { backups } = self.mode {
            if self.max_i.is_none() {
                return Err(CoreError::Config(
                    "backup workers need token queues (set max_i): without them the iteration gap is unbounded (Hop §4.3)".into(),
                ));
            }
            if let Some(i) =
                (0..n).find(|&i| backups == 0 || backups >= topology.in_neighbors(i).len())
            {
                return Err(CoreError::Config(format!(
                    "backup workers must be in 1..in-degree: node {i} has {} in-neighbours and backups = {backups}",
                    topology.in_neighbors(i).len()
                )));
            }
        }
        let paths = crate::topology::shortest_path_lengths(topology);
        Ok((0..n)
            .map(|i| {
                // Updates from in-neighbour j arrive up to (their lead over i) iterations ahead.
                let lead = topology
                    .in_neighbors(i)
                    .iter()
                    .map(|&j| gap_bound(self, &paths, j, i).finite().unwrap_or(u64::MAX))
                    .max()
                    .unwrap_or(0);
                let window = match self.mode {
                    PeerMode::Staleness { s } => s.saturating_add(lead).saturating_add(1),
                    _ => lead.saturating_add(1),
                };
                let window = window.min(self.iterations.saturating_add(1)) as usize;
                Box::new(HopPeer::new(
                    i,
                    topology.in_neighbors(i),
                    topology.out_neighbors(i),
                    *self,
                    window,
                )) as Box<dyn Protocol>
            })
            .collect())
    }
}
