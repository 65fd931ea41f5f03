//! Read-my-writes: a shard applies a worker's INCs once each, and a worker installs a fresh
//! row from a shard, then re-applies its own INCs that the shard had not applied yet (every row
//! carries how many of the worker's clocks the shard held), and drops the INCs every shard
//! holds.

use super::inc::*;
use super::learning::*;
use super::TableModel;
use crate::error::{CoreError, Result};
use crate::protocol::table::RowKey;
use crate::protocol::NodeId;
use std::collections::VecDeque;

impl<M: TableModel> TableLearning<M> {
    pub(super) fn err(node: NodeId, message: String) -> CoreError {
        CoreError::Protocol { node, message }
    }

    pub(super) fn apply_inc(
        &self,
        state: &mut TableNode<M::Local>,
        node: NodeId,
        from: NodeId,
        clock: u64,
    ) -> Result<()> {
        let p = state.inbox_incs.remove(&(from, clock)).ok_or_else(|| {
            Self::err(
                node,
                format!("no INC payload from node {from} for clock {clock}"),
            )
        })?;
        let k = self.model.row_len();
        if p.data.len() != p.applied.len() * k {
            return Err(Self::err(
                node,
                format!(
                    "INC payload from node {from} has {} values for {} rows",
                    p.data.len(),
                    p.applied.len()
                ),
            ));
        }
        for (i, &w) in p.applied.iter().enumerate() {
            let key = RowKey::from_word(w);
            if key.shard(self.shards) != node {
                return Err(Self::err(
                    node,
                    format!(
                        "node {from} sent an INC of row {key:?}, which shard {} holds",
                        key.shard(self.shards)
                    ),
                ));
            }
            let o = self.model.offset(key)?;
            for (v, d) in state.values[o..o + k]
                .iter_mut()
                .zip(&p.data[i * k..(i + 1) * k])
            {
                *v += d;
            }
        }
        let w = from - self.shards;
        state.applied[w] = state.applied[w].max(clock + 1);
        Ok(())
    }

    pub(super) fn install(
        &self,
        state: &mut TableNode<M::Local>,
        node: NodeId,
        from: NodeId,
    ) -> Result<()> {
        let p = state
            .inbox_rows
            .get_mut(&from)
            .and_then(VecDeque::pop_front)
            .ok_or_else(|| Self::err(node, format!("no rows from shard {from} to install")))?;
        let named = state
            .row_sets
            .get_mut(&from)
            .and_then(VecDeque::pop_front)
            .ok_or_else(|| {
                Self::err(
                    node,
                    format!("rows from shard {from} the protocol did not name"),
                )
            })?;
        let k = self.model.row_len();
        let (&held, keys) = p
            .applied
            .split_first()
            .ok_or_else(|| Self::err(node, format!("rows from shard {from} without a header")))?;
        let rows: Vec<RowKey> = keys.iter().map(|&w| RowKey::from_word(w)).collect();
        if p.data.len() != rows.len() * k {
            return Err(Self::err(
                node,
                format!(
                    "rows from shard {from}: {} values for {} rows of {k}",
                    p.data.len(),
                    rows.len()
                ),
            ));
        }
        if let Some(r) = rows.iter().find(|r| named.binary_search(r).is_err()) {
            return Err(Self::err(
                node,
                format!("shard {from} sent row {r:?}, which the protocol did not name"),
            ));
        }
        // This worker's own INCs the shard's copy does not hold yet, oldest first: re-applied
        // to every row installed. Gathered once: walking the map's range for each row of a
        // push (a thousand rows under ESSP) showed as a tenth of an essp-fig3 profile (an A/B
        // of whole runs did not separate the two from this VM's noise).
        let pending: Vec<&Inc> = state.own.range(held..).map(|(_, inc)| inc).collect();
        for (i, key) in rows.iter().enumerate() {
            let x = self.model.offset(*key)? / k.max(1);
            let row = state.cache.get_or_zero(x);
            row.copy_from_slice(&p.data[i * k..(i + 1) * k]);
            for inc in &pending {
                if let Some(deltas) = inc.get(x, k) {
                    for (v, d) in row.iter_mut().zip(deltas) {
                        *v += d;
                    }
                }
            }
        }
        state.own_applied[from] = held;
        let oldest = state.own_applied.iter().copied().min().unwrap_or(0);
        state.own = state.own.split_off(&oldest);
        Ok(())
    }
}
