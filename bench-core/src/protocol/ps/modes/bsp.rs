//! BSP, bulk synchronous parallel: a read at clock c sees every update of clocks < c.

use super::{bounded_policies, bounded_table, PsMode, SyncMode};
use crate::error::Result;
use crate::protocol::ps::{ReadPolicy, ReleasePolicy};
use crate::protocol::table::TableMode;

/// Bulk synchronous parallel (SSP with s = 0). Label `bsp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bsp {}

impl SyncMode {
    /// BSP.
    pub const fn bsp() -> Self {
        SyncMode::Bsp(Bsp {})
    }
}

impl PsMode for Bsp {
    const SYNTAX: &'static str = "bsp";

    fn parse(label: &str) -> Option<Result<Self>> {
        (label == "bsp").then_some(Ok(Bsp {}))
    }

    fn label(&self) -> String {
        "bsp".into()
    }

    fn bound(&self) -> Option<u64> {
        Some(0)
    }

    fn validate(&self) -> Result<()> {
        Ok(())
    }

    fn policies(&self, _workers: usize) -> (ReadPolicy, ReleasePolicy) {
        bounded_policies(0, false)
    }

    fn table_mode(&self) -> Option<TableMode> {
        Some(bounded_table(0, false))
    }
}
