//! The one place that turns a configuration into protocol nodes.

use super::ps::{PsServer, PsWorker};
use super::Protocol;
use crate::error::{CoreError, Result};

/// Parameter-server synchronization modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase", deny_unknown_fields)]
pub enum SyncMode {
    /// Bulk synchronous parallel: a read at clock c sees every update of clocks < c.
    Bsp,
    /// Asynchronous parallel: reads never block and carry no freshness guarantee.
    Asp,
    /// Stale synchronous parallel: a read at clock c sees every update of clocks <= c - s - 1.
    Ssp {
        /// Staleness bound s >= 0.
        staleness: i64,
    },
}

impl SyncMode {
    /// Staleness bound, `None` for ASP.
    pub fn bound(&self) -> Option<u64> {
        match *self {
            SyncMode::Bsp => Some(0),
            SyncMode::Asp => None,
            SyncMode::Ssp { staleness } => Some(staleness.max(0) as u64),
        }
    }

    /// Stable label for CSVs and figures: `bsp`, `asp`, `ssp3`.
    pub fn label(&self) -> String {
        match *self {
            SyncMode::Bsp => "bsp".into(),
            SyncMode::Asp => "asp".into(),
            SyncMode::Ssp { staleness } => format!("ssp{staleness}"),
        }
    }

    /// Parses `bsp`, `asp`, `ssp` (s = 3) or `sspN`.
    ///
    /// # Errors
    /// [`CoreError::Config`] for anything else.
    pub fn parse(s: &str) -> Result<Self> {
        let l = s.to_ascii_lowercase();
        match l.as_str() {
            "bsp" => Ok(SyncMode::Bsp),
            "asp" => Ok(SyncMode::Asp),
            "ssp" => Ok(SyncMode::Ssp { staleness: 3 }),
            _ => l
                .strip_prefix("ssp")
                .and_then(|v| v.parse::<i64>().ok())
                .map(|staleness| SyncMode::Ssp { staleness })
                .ok_or_else(|| {
                    CoreError::Config(format!(
                        "unknown sync mode '{s}'; expected bsp, asp, ssp or sspN (e.g. ssp3)"
                    ))
                }),
        }
    }

    /// Checks the mode can run for `iterations` clocks.
    ///
    /// # Errors
    /// [`CoreError::Config`] for a negative staleness.
    pub fn validate(&self) -> Result<()> {
        if let SyncMode::Ssp { staleness } = *self {
            if staleness < 0 {
                return Err(CoreError::Config(format!(
                    "SSP staleness must be >= 0, got {staleness}"
                )));
            }
        }
        Ok(())
    }
}

/// Everything needed to build the nodes of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtocolSpec {
    /// The synchronization mode.
    pub mode: SyncMode,
    /// Number of workers.
    pub workers: usize,
    /// Iterations (clocks) each worker runs.
    pub iterations: u64,
}

impl ProtocolSpec {
    /// Builds every node of the run: node 0 is the parameter server, nodes `1..=workers` are the
    /// workers (worker index = node - 1), matching the star topology.
    ///
    /// # Errors
    /// [`CoreError::Config`] for an invalid mode, zero workers or zero iterations.
    pub fn build(&self) -> Result<Vec<Box<dyn Protocol>>> {
        self.mode.validate()?;
        if self.workers == 0 {
            return Err(CoreError::Config("a run needs at least one worker".into()));
        }
        if self.iterations == 0 {
            return Err(CoreError::Config(
                "a run needs at least one iteration".into(),
            ));
        }
        let mut nodes: Vec<Box<dyn Protocol>> = Vec::with_capacity(self.workers + 1);
        nodes.push(Box::new(PsServer::new(
            0,
            self.workers,
            self.iterations,
            self.mode.bound(),
        )));
        for w in 0..self.workers {
            nodes.push(Box::new(PsWorker::new(
                w + 1,
                w,
                0,
                self.iterations,
                self.mode.bound(),
            )));
        }
        Ok(nodes)
    }

    /// Node count including the server.
    pub fn nodes(&self) -> usize {
        self.workers + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_validate() {
        assert_eq!(
            SyncMode::parse("SSP5").unwrap(),
            SyncMode::Ssp { staleness: 5 }
        );
        assert!(SyncMode::parse("foo").is_err());
        let e = SyncMode::parse("ssp-1").unwrap().validate().unwrap_err();
        assert!(e.to_string().contains("-1"));
        let spec = ProtocolSpec {
            mode: SyncMode::Bsp,
            workers: 0,
            iterations: 1,
        };
        assert!(spec.build().is_err());
    }

    #[test]
    fn toml_form() {
        let m: SyncMode = toml::from_str("mode = \"ssp\"\nstaleness = 2").unwrap();
        assert_eq!(m, SyncMode::Ssp { staleness: 2 });
    }
}
