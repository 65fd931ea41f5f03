//! DSSP, dynamic SSP (DSSP §III, Alg 1-2): every worker pushes and waits for the server's
//! OK each iteration; the server's synchronization controller
//! ([`crate::protocol::ps::dssp`]) lets a fast worker run s_L plus up to r_max iterations
//! ahead of the slowest.

use super::{int, PsMode, SyncMode};
use crate::error::{CoreError, Result};
use crate::protocol::ps::dssp::DsspController;
use crate::protocol::ps::{ReadPolicy, ReleasePolicy};
use crate::protocol::table::TableMode;

/// Dynamic SSP with range `[s_l, s_l + r_max]`. Label `dsspL-R`; bare `dssp` is 3-12.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dssp {
    /// Lower bound of the staleness range, s_L >= 0.
    pub s_l: i64,
    /// Width of the range, r_max >= 0.
    pub r_max: i64,
}

impl SyncMode {
    /// DSSP with lower bound `s_l` and range width `r_max`.
    pub const fn dssp(s_l: i64, r_max: i64) -> Self {
        SyncMode::Dssp(Dssp { s_l, r_max })
    }
}

impl PsMode for Dssp {
    const SYNTAX: &'static str = "dsspL-R";

    fn parse(label: &str) -> Option<Result<Self>> {
        let v = label.strip_prefix("dssp")?;
        if v.is_empty() {
            return Some(Ok(Dssp { s_l: 3, r_max: 12 }));
        }
        // dsspL-R; L itself may be negative only as a typo, caught by validate.
        let (neg, rest) = match v.strip_prefix('-') {
            Some(rest) => ("-", rest),
            None => ("", v),
        };
        let parsed = rest.split_once('-').and_then(|(a, b)| {
            Some(Dssp {
                s_l: int(&format!("{neg}{a}"))?,
                r_max: int(b)?,
            })
        });
        Some(parsed.ok_or_else(|| {
            CoreError::Config(format!(
                "sync mode '{label}': expected {} with integers L and R (e.g. dssp3-12)",
                Self::SYNTAX
            ))
        }))
    }

    fn label(&self) -> String {
        format!("dssp{}-{}", self.s_l, self.r_max)
    }

    /// s_L + r_max.
    fn bound(&self) -> Option<u64> {
        Some((self.s_l.max(0) + self.r_max.max(0)) as u64)
    }

    fn validate(&self) -> Result<()> {
        if self.s_l < 0 {
            return Err(CoreError::out_of_range(
                "s_l",
                ">= 0 (DSSP's s_L)",
                self.s_l,
            ));
        }
        if self.r_max < 0 {
            return Err(CoreError::out_of_range("r_max", ">= 0 (DSSP)", self.r_max));
        }
        Ok(())
    }

    fn policies(&self, workers: usize) -> (ReadPolicy, ReleasePolicy) {
        (
            ReadPolicy::AskEveryIteration,
            ReleasePolicy::Dssp(DsspController::new(
                workers,
                self.s_l.max(0) as u64,
                self.r_max.max(0) as u64,
            )),
        )
    }

    /// DSSP synchronises whole models, as its paper does.
    fn table_mode(&self) -> Option<TableMode> {
        None
    }
}
