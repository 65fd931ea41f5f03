//! SSP, stale synchronous parallel (ESSP §"Consistency Models for Parameter Servers"): a read at
//! clock c sees every update of clocks <= c - s - 1; the worker reads its cache while it is that
//! fresh.

use super::{bounded_policies, bounded_table, check_staleness, parse_staleness, PsMode, SyncMode};
use crate::error::Result;
use crate::protocol::ps::{ReadPolicy, ReleasePolicy};
use crate::protocol::table::TableMode;

/// Stale synchronous parallel with bound `staleness`. Label `sspN`; bare `ssp` is s = 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ssp {
    /// Staleness bound s >= 0 (signed so that a negative value is reported, not wrapped).
    pub staleness: i64,
}

impl SyncMode {
    /// SSP with bound `staleness`.
    pub const fn ssp(staleness: i64) -> Self {
        SyncMode::Ssp(Ssp { staleness })
    }
}

impl PsMode for Ssp {
    const SYNTAX: &'static str = "sspN";

    fn parse(label: &str) -> Option<Result<Self>> {
        parse_staleness(label, "ssp", Self::SYNTAX).map(|r| r.map(|staleness| Ssp { staleness }))
    }

    fn label(&self) -> String {
        format!("ssp{}", self.staleness)
    }

    fn bound(&self) -> Option<u64> {
        Some(self.staleness.max(0) as u64)
    }

    fn validate(&self) -> Result<()> {
        check_staleness(self.staleness, "SSP")
    }

    fn policies(&self, _workers: usize) -> (ReadPolicy, ReleasePolicy) {
        bounded_policies(self.staleness, false)
    }

    fn table_mode(&self) -> Option<TableMode> {
        Some(bounded_table(self.staleness, false))
    }
}
