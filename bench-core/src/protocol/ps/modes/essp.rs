//! ESSP, eager SSP (ESSP §"ESSPTable: An efficient ESSP System"): SSP's read rule, plus the server
//! pushes the fresh model to every worker whenever the clock all workers have completed advances.

use super::{bounded_policies, bounded_table, check_staleness, parse_staleness, PsMode, SyncMode};
use crate::error::Result;
use crate::protocol::ps::{ReadPolicy, ReleasePolicy};
use crate::protocol::table::TableMode;

/// Eager SSP with bound `staleness`. Label `esspN`; bare `essp` is s = 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Essp {
    /// Staleness bound s >= 0.
    pub staleness: i64,
}

impl SyncMode {
    /// ESSP with bound `staleness`.
    pub const fn essp(staleness: i64) -> Self {
        SyncMode::Essp(Essp { staleness })
    }
}

impl PsMode for Essp {
    const SYNTAX: &'static str = "esspN";

    fn parse(label: &str) -> Option<Result<Self>> {
        parse_staleness(label, "essp", Self::SYNTAX).map(|r| r.map(|staleness| Essp { staleness }))
    }

    fn label(&self) -> String {
        format!("essp{}", self.staleness)
    }

    fn bound(&self) -> Option<u64> {
        Some(self.staleness.max(0) as u64)
    }

    fn validate(&self) -> Result<()> {
        check_staleness(self.staleness, "ESSP")
    }

    fn policies(&self, _workers: usize) -> (ReadPolicy, ReleasePolicy) {
        bounded_policies(self.staleness, true)
    }

    fn table_mode(&self) -> Option<TableMode> {
        Some(bounded_table(self.staleness, true))
    }
}
