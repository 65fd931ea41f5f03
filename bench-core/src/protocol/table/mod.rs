//! Row-level parameter-server tables, as ESSP §"ESSPTable: An efficient ESSP System" (Petuum
//! Bösen) describes them.
//!
//! Parameters live in rows keyed by `(table, row)`, sharded over `shards` server nodes. A worker
//! GETs the rows its computation of a clock reads, INCs the rows it changes, and CLOCKs at the
//! end of every clock; its INCs are coalesced per clock and sent, with the CLOCK, to every shard
//! ([`Message::RowInc`](crate::protocol::Message::RowInc)). A shard's clock is the clock every
//! worker has completed at that shard; every row it sends carries that clock as its `stamp`
//! (the row holds every worker's INCs of clocks `< stamp`).
//!
//! The worker's client cache keeps, per row, the stamp of the copy it holds. SSP's read rule
//! (ESSP §"Consistency Models for Parameter Servers"): a read at clock `c` may use a row only if
//! `stamp >= c - s`, i.e. it holds every update of clocks `<= c - s - 1`; otherwise (or when the
//! row is not cached) the worker asks the row's shard and blocks until the shard's clock reaches
//! `c - s`. BSP is `s = 0`. ESSP (§"ESSPTable: An efficient ESSP System") keeps the rule and adds
//! eager push: the first read of a row registers the worker with the row's shard, and whenever the
//! shard's clock advances it pushes every registered row to its worker. ASP never blocks on a
//! cached row: it keeps one refresh request in flight per shard.
//!
//! A clock's computation goes through its mini-batch in steps (Bösen's in-clock reads): each
//! step applies the read rule to its own rows when it begins, so a row refreshed by a push or
//! an answer that arrived during the clock is read fresh by the later steps. A clock's INCs are
//! still coalesced and sent once, with its CLOCK.
//!
//! Rows never travel through these state machines, only their names. Which rows a worker reads
//! at a step comes from a [`RowAccess`] plan both sides share (for matrix factorisation, the
//! rows of the step's ratings), so a request is one control word (clock and step): the shard
//! derives the rows from the plan and from the stamps of the copies it sent that worker before,
//! which are exactly what the worker holds when the answer arrives (messages between two nodes
//! arrive in order). Every answer names its rows in an [`Action::RowSet`](crate::protocol::Action),
//! on both sides, and the learning checks that the payload carries exactly those.
//!
//! Choices where the paper is silent, and why:
//! - A request asks for the rows too stale for the read rule, not for every row of the clock:
//!   Bösen fetches on a miss only, which is what makes SSP's staleness spread over the window.
//! - ESSP registers on the first read and pushes every registered row on each advance of the
//!   shard's clock, changed or not, so a row's stamp always tells its freshness.
//! - ASP refreshes every row of the current clock that the shard holds newer.
//! - A shard applies an INC of clock c' once c' < its clock + s, i.e. once c' lies in the
//!   window of every worker still reading (readers are at or past the shard's clock), and holds
//!   it back until then. A row sent may then hold best-effort in-window updates, as Bösen's
//!   server rows do, but never one from past the window: at s = 0 (BSP, an empty window) a read
//!   late in clock c sees exactly the clocks before c, and at s >= 1 a worker s clocks ahead
//!   cannot leak its INCs of clock c + s to a reader at c. ASP applies on arrival.

mod client;
mod shard;

pub use client::TableClient;
pub use shard::TableShard;

use super::{Protocol, SyncMode};
use crate::error::{CoreError, Result};
use std::sync::Arc;

/// A row's name: `(table, row)`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct RowKey {
    /// Table id.
    pub table: u32,
    /// Row within the table.
    pub row: u32,
}

impl RowKey {
    /// The key as one word (table in the high half), for payloads.
    pub fn to_word(self) -> u64 {
        (u64::from(self.table) << 32) | u64::from(self.row)
    }

    /// The key of a word made by [`Self::to_word`].
    pub fn from_word(w: u64) -> Self {
        RowKey {
            table: (w >> 32) as u32,
            row: w as u32,
        }
    }

    /// The shard (of `shards`) that holds this row: a hash of the key, so that the rows of every
    /// table spread evenly.
    pub fn shard(self, shards: usize) -> usize {
        // splitmix64's finaliser: consecutive rows land on unrelated shards.
        let mut z = self.to_word().wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z % shards.max(1) as u64) as usize
    }
}

/// Which rows each worker reads (and INCs) at each clock: the access plan the workers and the
/// shards share.
///
/// A clock's computation walks through its mini-batch in `steps` steps (Bösen's computation threads
/// GET rows as they go through the mini-batch, ESSP §"ESSPTable: An efficient ESSP System"): each
/// step reads its own rows from the cache when it begins, so a row that a push or an answer
/// refreshed during the clock is read fresh by the steps after it.
pub trait RowAccess: Send + Sync + std::fmt::Debug {
    /// Read-compute steps of worker `worker`'s clock `clock` (at least 1).
    fn steps(&self, _worker: usize, _clock: u64) -> u64 {
        1
    }

    /// The rows worker `worker` reads at step `step` of `clock`, sorted and without repeats.
    fn rows(&self, worker: usize, clock: u64, step: u64) -> Vec<RowKey>;

    /// Every row of the clock's steps (the rows its INCs change), sorted and without repeats.
    fn clock_rows(&self, worker: usize, clock: u64) -> Vec<RowKey> {
        let mut rows: Vec<RowKey> = (0..self.steps(worker, clock))
            .flat_map(|step| self.rows(worker, clock, step))
            .collect();
        rows.sort_unstable();
        rows.dedup();
        rows
    }
}

/// How a run's tables synchronise, from a [`SyncMode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableMode {
    /// SSP's read rule with bound `s` (BSP: `s = 0`); `eager`: ESSP's push.
    Bounded {
        /// Staleness bound.
        s: u64,
        /// ESSP's eager push to registered workers.
        eager: bool,
    },
    /// ASP: never block on a cached row; refresh in the background.
    Async,
}

impl TableMode {
    /// The table mode of `mode`.
    ///
    /// # Errors
    /// [`CoreError::Config`] for modes the row tables do not run (DSSP and backup workers
    /// synchronise whole models, as their paper does) or a negative bound.
    pub fn of(mode: SyncMode) -> Result<Self> {
        mode.validate()?;
        mode.table_mode().ok_or_else(|| {
            CoreError::Config(format!(
                "{} does not run on row tables: DSSP and backup workers synchronise whole \
                 models (use the model-level parameter server)",
                mode.label()
            ))
        })
    }

    /// Is a cached copy with stamp `cached` (None: not cached) unusable for a read at `clock`
    /// when the shard's clock is `shard_clock`? Under ASP only a missing row blocks, and the
    /// refresh takes every row the shard holds newer.
    fn wants(self, cached: Option<u64>, clock: u64, shard_clock: u64) -> bool {
        match (self, cached) {
            (_, None) => true,
            (TableMode::Bounded { s, .. }, Some(t)) => t + s < clock,
            (TableMode::Async, Some(t)) => t < shard_clock,
        }
    }
}

/// A run on row tables: `shards` shard nodes (nodes `0..shards`) and `workers` workers (nodes
/// `shards..shards + workers`, worker index = node - shards).
#[derive(Debug, Clone)]
pub struct TableSpec {
    /// The mode.
    pub mode: SyncMode,
    /// Workers.
    pub workers: usize,
    /// Server shards.
    pub shards: usize,
    /// Clocks each worker runs.
    pub clocks: u64,
    /// Which rows each worker reads at each clock.
    pub access: Arc<dyn RowAccess>,
}

impl TableSpec {
    /// Builds every node of the run.
    ///
    /// # Errors
    /// [`CoreError::Config`] for a mode the tables do not run, zero workers, shards or clocks,
    /// or a staleness bound at or beyond the run length.
    pub fn build(&self) -> Result<Vec<Box<dyn Protocol>>> {
        let mode = TableMode::of(self.mode)?;
        if self.workers == 0 || self.shards == 0 || self.clocks == 0 {
            return Err(CoreError::Config(format!(
                "row tables need at least one worker, shard and clock (got {} workers, {} \
                 shards, {} clocks)",
                self.workers, self.shards, self.clocks
            )));
        }
        if let TableMode::Bounded { s, .. } = mode {
            if s >= self.clocks {
                return Err(CoreError::Config(format!(
                    "staleness bound {s} is not below the run's {} clocks",
                    self.clocks
                )));
            }
        }
        let mut nodes: Vec<Box<dyn Protocol>> = Vec::with_capacity(self.shards + self.workers);
        for j in 0..self.shards {
            nodes.push(Box::new(TableShard::new(
                j,
                self.shards,
                self.workers,
                self.clocks,
                mode,
                self.access.clone(),
            )));
        }
        for w in 0..self.workers {
            nodes.push(Box::new(TableClient::new(
                w,
                self.shards,
                self.clocks,
                mode,
                self.access.clone(),
            )));
        }
        Ok(nodes)
    }
}

#[cfg(test)]
mod tests;
