//! SSP, stale synchronous parallel (essp.txt §3): a read at clock c sees every update of
//! clocks <= c - s - 1; the worker reads its cache while it is that fresh.

use super::{bad_number, int, PsMode, SyncMode};
use crate::error::{CoreError, Result};
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

impl Ssp {
    fn s(&self) -> u64 {
        self.staleness.max(0) as u64
    }
}

impl PsMode for Ssp {
    const SYNTAX: &'static str = "sspN";

    fn parse(label: &str) -> Option<Result<Self>> {
        let v = label.strip_prefix("ssp")?;
        if v.is_empty() {
            return Some(Ok(Ssp { staleness: 3 }));
        }
        Some(
            int(v)
                .map(|staleness| Ssp { staleness })
                .ok_or_else(|| bad_number(label, Self::SYNTAX)),
        )
    }

    fn label(&self) -> String {
        format!("ssp{}", self.staleness)
    }

    fn bound(&self) -> Option<u64> {
        Some(self.s())
    }

    fn validate(&self) -> Result<()> {
        if self.staleness < 0 {
            return Err(CoreError::out_of_range(
                "staleness",
                ">= 0 (SSP)",
                self.staleness,
            ));
        }
        Ok(())
    }

    fn policies(&self, _workers: usize) -> (ReadPolicy, ReleasePolicy) {
        let s = self.s();
        (
            ReadPolicy::Cache { s },
            ReleasePolicy::Bounded { s, eager: false },
        )
    }

    fn table_mode(&self) -> Option<TableMode> {
        Some(TableMode::Bounded {
            s: self.s(),
            eager: false,
        })
    }
}
