//! ESSP, eager SSP (essp.txt §4): SSP's read rule, plus the server pushes the fresh model to
//! every worker whenever the clock all workers have completed advances.

use super::{bad_number, int, PsMode, SyncMode};
use crate::error::{CoreError, Result};
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

impl Essp {
    fn s(&self) -> u64 {
        self.staleness.max(0) as u64
    }
}

impl PsMode for Essp {
    const SYNTAX: &'static str = "esspN";

    fn parse(label: &str) -> Option<Result<Self>> {
        let v = label.strip_prefix("essp")?;
        if v.is_empty() {
            return Some(Ok(Essp { staleness: 3 }));
        }
        Some(
            int(v)
                .map(|staleness| Essp { staleness })
                .ok_or_else(|| bad_number(label, Self::SYNTAX)),
        )
    }

    fn label(&self) -> String {
        format!("essp{}", self.staleness)
    }

    fn bound(&self) -> Option<u64> {
        Some(self.s())
    }

    fn validate(&self) -> Result<()> {
        if self.staleness < 0 {
            return Err(CoreError::out_of_range(
                "staleness",
                ">= 0 (ESSP)",
                self.staleness,
            ));
        }
        Ok(())
    }

    fn policies(&self, _workers: usize) -> (ReadPolicy, ReleasePolicy) {
        let s = self.s();
        (
            ReadPolicy::Cache { s },
            ReleasePolicy::Bounded { s, eager: true },
        )
    }

    fn table_mode(&self) -> Option<TableMode> {
        Some(TableMode::Bounded {
            s: self.s(),
            eager: true,
        })
    }
}
