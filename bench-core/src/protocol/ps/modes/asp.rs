//! ASP, asynchronous parallel: reads never block and carry no freshness guarantee.

use super::{PsMode, SyncMode};
use crate::error::Result;
use crate::protocol::ps::{ReadPolicy, ReleasePolicy};
use crate::protocol::table::TableMode;

/// Asynchronous parallel: a worker computes on its cache and keeps one refresh in flight,
/// which the server answers at once. Label `asp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Asp {}

impl SyncMode {
    /// ASP.
    pub const fn asp() -> Self {
        SyncMode::Asp(Asp {})
    }
}

impl PsMode for Asp {
    const SYNTAX: &'static str = "asp";

    fn parse(label: &str) -> Option<Result<Self>> {
        (label == "asp").then_some(Ok(Asp {}))
    }

    fn label(&self) -> String {
        "asp".into()
    }

    fn bound(&self) -> Option<u64> {
        None
    }

    fn validate(&self) -> Result<()> {
        Ok(())
    }

    fn policies(&self, _workers: usize) -> (ReadPolicy, ReleasePolicy) {
        (ReadPolicy::Async, ReleasePolicy::Immediate)
    }

    fn table_mode(&self) -> Option<TableMode> {
        Some(TableMode::Async)
    }
}
