//! BSP with backup workers (Chen et al., cited by DSSP §II): of the run's workers, `backups`
//! are spare; each clock completes with the first `workers - backups` updates and later ones
//! are dropped.

use super::{bad_number, int, PsMode, SyncMode};
use crate::error::{CoreError, Result};
use crate::protocol::ps::{ReadPolicy, ReleasePolicy};
use crate::protocol::table::TableMode;

/// BSP with `backups` spare workers. Label `bsp-backupC`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BspBackup {
    /// Spare workers c (>= 0, below the worker count).
    pub backups: i64,
}

impl SyncMode {
    /// BSP with `backups` backup workers.
    pub const fn bsp_backup(backups: i64) -> Self {
        SyncMode::BspBackup(BspBackup { backups })
    }
}

impl PsMode for BspBackup {
    const SYNTAX: &'static str = "bsp-backupC";

    fn parse(label: &str) -> Option<Result<Self>> {
        let v = label.strip_prefix("bsp-backup")?;
        Some(
            int(v)
                .map(|backups| BspBackup { backups })
                .ok_or_else(|| bad_number(label, Self::SYNTAX)),
        )
    }

    fn label(&self) -> String {
        format!("bsp-backup{}", self.backups)
    }

    /// Reads hold every clock before theirs, but each clock with only the first N of N + c
    /// updates: no bound over all workers' updates.
    fn bound(&self) -> Option<u64> {
        None
    }

    fn validate(&self) -> Result<()> {
        if self.backups < 0 {
            return Err(CoreError::out_of_range("backups", ">= 0", self.backups));
        }
        Ok(())
    }

    fn check_workers(&self, workers: usize) -> Result<()> {
        if self.backups.max(0) as usize >= workers {
            return Err(CoreError::Config(format!(
                "{} backup workers leave none of the {workers} workers to wait for",
                self.backups
            )));
        }
        Ok(())
    }

    fn policies(&self, workers: usize) -> (ReadPolicy, ReleasePolicy) {
        (
            ReadPolicy::AskAndJump,
            ReleasePolicy::Backup {
                needed: workers - self.backups.max(0) as usize,
            },
        )
    }

    /// Backup workers synchronise whole models, as their paper does.
    fn table_mode(&self) -> Option<TableMode> {
        None
    }
}
