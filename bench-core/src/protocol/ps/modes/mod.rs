//! Parameter-server synchronization modes, one file each.
//!
//! A mode is a small value type implementing [`PsMode`]: its label and parser, its staleness
//! bound, its parameter checks, the read and release policies its worker and server nodes run,
//! and its row-table form. [`SyncMode`] is the configuration value naming one of them; it only
//! dispatches. Adding a mode is a new file here and one line in the `sync_modes!` list below
//! (docs/architecture.md, "Adding a mode").

mod asp;
mod asp_pull;
mod bsp;
mod bsp_backup;
mod dssp;
mod essp;
mod ssp;
mod ssp_pull;

pub use asp::Asp;
pub use asp_pull::AspPull;
pub use bsp::Bsp;
pub use bsp_backup::BspBackup;
pub use dssp::Dssp;
pub use essp::Essp;
pub use ssp::Ssp;
pub use ssp_pull::SspPull;

use super::{ReadPolicy, ReleasePolicy};
use crate::error::{CoreError, Result};
use crate::protocol::table::TableMode;

/// What one parameter-server synchronization mode defines.
pub trait PsMode: Sized {
    /// The label forms [`Self::parse`] accepts, for error messages (e.g. `sspN`).
    const SYNTAX: &'static str;

    /// Parses a lower-case label: `None` when it is not this mode's, `Some(Err)` when it is
    /// but its numbers do not parse.
    fn parse(label: &str) -> Option<Result<Self>>;

    /// Stable label for CSVs and figures (`ssp3`); [`Self::parse`] reads it back.
    fn label(&self) -> String;

    /// Largest iteration gap a read may have (`None`: unbounded).
    fn bound(&self) -> Option<u64>;

    /// Checks the mode's own parameters.
    ///
    /// # Errors
    /// [`CoreError::Config`] naming the parameter out of range.
    fn validate(&self) -> Result<()>;

    /// Checks the mode against a run of `workers` workers (default: nothing more to check).
    ///
    /// # Errors
    /// [`CoreError::Config`] when the mode cannot run with that many workers.
    fn check_workers(&self, _workers: usize) -> Result<()> {
        Ok(())
    }

    /// The worker's read policy and the server's release policy for `workers` workers.
    fn policies(&self, workers: usize) -> (ReadPolicy, ReleasePolicy);

    /// The mode's form on row tables (`None`: it synchronises whole models only).
    fn table_mode(&self) -> Option<TableMode>;
}

/// Parses a numeric parameter of a label; `None` when it is not an integer.
fn int(v: &str) -> Option<i64> {
    v.parse::<i64>().ok()
}

/// Parses `<prefix>N` as a staleness bound (bare `<prefix>`: s = 3), the SSP family's labels.
fn parse_staleness(label: &str, prefix: &str, syntax: &str) -> Option<Result<i64>> {
    let v = label.strip_prefix(prefix)?;
    if v.is_empty() {
        return Some(Ok(3));
    }
    Some(int(v).ok_or_else(|| bad_number(label, syntax)))
}

/// Checks a staleness bound of `family` (SSP, ESSP).
fn check_staleness(staleness: i64, family: &str) -> Result<()> {
    if staleness < 0 {
        return Err(CoreError::out_of_range(
            "staleness",
            format!(">= 0 ({family})"),
            staleness,
        ));
    }
    Ok(())
}

/// SSP's read rule and release with bound `staleness`, plus ESSP's push when `eager`.
fn bounded_policies(staleness: i64, eager: bool) -> (ReadPolicy, ReleasePolicy) {
    let s = staleness.max(0) as u64;
    (ReadPolicy::Cache { s }, ReleasePolicy::Bounded { s, eager })
}

/// The same rule on row tables.
fn bounded_table(staleness: i64, eager: bool) -> TableMode {
    TableMode::Bounded {
        s: staleness.max(0) as u64,
        eager,
    }
}

/// The error for a label that names a mode with numbers that do not parse.
fn bad_number(label: &str, syntax: &str) -> CoreError {
    CoreError::Config(format!(
        "sync mode '{label}': expected {syntax} with integer parameters"
    ))
}

macro_rules! sync_modes {
    ($( $(#[$doc:meta])* $variant:ident ),* $(,)?) => {
        /// A parameter-server synchronization mode, as configured (TOML: `mode = "ssp"` and
        /// the mode's fields, e.g. `staleness = 3`). Each variant's behaviour lives in its own
        /// file under `protocol/ps/modes/`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        #[serde(tag = "mode", rename_all = "lowercase")]
        pub enum SyncMode {
            $( $(#[$doc])* $variant($variant), )*
        }

        impl SyncMode {
            /// Largest iteration gap a read may have (`None`: unbounded, ASP).
            pub fn bound(&self) -> Option<u64> {
                match self { $( SyncMode::$variant(m) => m.bound(), )* }
            }

            /// Stable label for CSVs and figures: `bsp`, `asp`, `ssp3`, `essp3`, `dssp3-12`,
            /// `bsp-backup1`.
            pub fn label(&self) -> String {
                match self { $( SyncMode::$variant(m) => m.label(), )* }
            }

            /// Parses a label as [`Self::label`] writes it (any case); a bare family name
            /// takes its default parameters (`ssp`, `essp`: s = 3; `dssp`: 3-12).
            ///
            /// # Errors
            /// [`CoreError::Config`] for anything else.
            pub fn parse(s: &str) -> Result<Self> {
                let l = s.to_ascii_lowercase();
                $(
                    if let Some(m) = <$variant as PsMode>::parse(&l) {
                        return m.map(SyncMode::$variant);
                    }
                )*
                let forms: Vec<&str> = vec![$( <$variant as PsMode>::SYNTAX ),*];
                Err(CoreError::Config(format!(
                    "unknown sync mode '{s}'; expected one of {} (e.g. ssp3, essp3, dssp3-12, bsp-backup1)",
                    forms.join(", ")
                )))
            }

            /// Checks the mode's parameters.
            ///
            /// # Errors
            /// [`CoreError::Config`] for a negative staleness, s_L, r_max or backup count.
            pub fn validate(&self) -> Result<()> {
                match self { $( SyncMode::$variant(m) => m.validate(), )* }
            }

            /// Checks the mode against a run of `workers` workers.
            ///
            /// # Errors
            /// [`CoreError::Config`] when it cannot run with that many (e.g. every worker a
            /// backup).
            pub fn check_workers(&self, workers: usize) -> Result<()> {
                match self { $( SyncMode::$variant(m) => m.check_workers(workers), )* }
            }

            /// The worker's read policy and the server's release policy.
            pub(crate) fn policies(&self, workers: usize) -> (ReadPolicy, ReleasePolicy) {
                match self { $( SyncMode::$variant(m) => m.policies(workers), )* }
            }

            /// The mode on row tables (`None`: whole models only).
            pub(crate) fn table_mode(&self) -> Option<TableMode> {
                match self { $( SyncMode::$variant(m) => m.table_mode(), )* }
            }
        }
    };
}

sync_modes! {
    /// Bulk synchronous parallel.
    Bsp,
    /// Asynchronous parallel.
    Asp,
    /// SSP with a pull every iteration (SSP as DSSP's paper ran it in MXNet). Before `Ssp`:
    /// its labels (`ssp3-pull`) start as SSP's do.
    SspPull,
    /// Stale synchronous parallel.
    Ssp,
    /// Eager SSP.
    Essp,
    /// BSP with backup workers.
    BspBackup,
    /// Dynamic SSP.
    Dssp,
    /// ASP with a pull every iteration (MXNet's `dist_async`).
    AspPull,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_validate() {
        assert_eq!(SyncMode::parse("SSP5").unwrap(), SyncMode::ssp(5));
        let e = SyncMode::parse("foo").unwrap_err().to_string();
        assert!(e.contains("bsp-backupC") && e.contains("dsspL-R"), "{e}");
        let e = SyncMode::parse("ssp-1").unwrap().validate().unwrap_err();
        assert!(e.to_string().contains("-1"));
        let e = SyncMode::parse("sspx").unwrap_err().to_string();
        assert!(e.contains("sspN"), "{e}");
    }

    #[test]
    fn labels_round_trip() {
        for m in [
            SyncMode::bsp(),
            SyncMode::asp(),
            SyncMode::ssp(3),
            SyncMode::essp(0),
            SyncMode::dssp(3, 12),
            SyncMode::bsp_backup(2),
            SyncMode::asp_pull(),
            SyncMode::ssp_pull(4),
        ] {
            assert_eq!(SyncMode::parse(&m.label()).unwrap(), m);
            let toml = toml::to_string(&m).unwrap();
            assert_eq!(toml::from_str::<SyncMode>(&toml).unwrap(), m, "{toml}");
        }
        assert!(SyncMode::bsp_backup(4).check_workers(4).is_err());
        assert!(SyncMode::bsp_backup(3).check_workers(4).is_ok());
        assert_eq!(SyncMode::dssp(3, 12).bound(), Some(15));
        assert!(SyncMode::parse("dssp3").is_err());
        assert!(SyncMode::parse("dssp-1-2").unwrap().validate().is_err());
        assert!(SyncMode::parse("dssp1--2").unwrap().validate().is_err());
        assert!(SyncMode::parse("essp-1").unwrap().validate().is_err());
    }

    #[test]
    fn toml_form() {
        let m: SyncMode = toml::from_str("mode = \"ssp\"\nstaleness = 2").unwrap();
        assert_eq!(m, SyncMode::ssp(2));
        let m: SyncMode = toml::from_str("mode = \"bsp\"").unwrap();
        assert_eq!(m, SyncMode::bsp());
        let m: SyncMode = toml::from_str("mode = \"bspbackup\"\nbackups = 1").unwrap();
        assert_eq!(m, SyncMode::bsp_backup(1));
        let e = toml::from_str::<SyncMode>("mode = \"ssp\"\nstalenes = 2").unwrap_err();
        assert!(e.to_string().contains("stalenes"), "{e}");
    }
}
