//! Peer settings from their labels (`standard`, `backup1+tokens10`,
//! `backup1+skip10+tokens10`, `staleness5+serial`): the inverse of [`PeerSettings::label`], so
//! a configuration or a command line can name a decentralized setting in one word.

use super::{PeerMode, PeerSettings, SkipPolicy};
use crate::error::{CoreError, Result};

impl PeerSettings {
    /// Parses `label` (as [`PeerSettings::label`] writes it; the `+` parts in any order) into
    /// settings running `iterations` iterations. A skip part jumps when every out-neighbour
    /// leads by at least one iteration beyond the token window (trigger 1, as in Hop §5).
    ///
    /// # Errors
    /// [`CoreError::Config`] naming the part that is not `standard`, `notify-ack`, `backupN`,
    /// `stalenessS`, `skipJ`, `tokensM` or `serial`, or a part given twice.
    pub fn parse(label: &str, iterations: u64) -> Result<Self> {
        let bad = |part: &str, why: &str| {
            CoreError::Config(format!(
                "peer setting '{label}': {why} '{part}'; expected a base (standard, notify-ack, backupN, stalenessS) followed by +skipJ, +tokensM or +serial, e.g. backup1+skip10+tokens10"
            ))
        };
        let number = |part: &str, prefix: &str| -> Result<Option<u64>> {
            match part.strip_prefix(prefix) {
                Some(n) => n
                    .parse::<u64>()
                    .map(Some)
                    .map_err(|_| bad(part, "no integer in")),
                None => Ok(None),
            }
        };
        let lower = label.trim().to_ascii_lowercase();
        let mut parts = lower.split('+');
        let base = parts.next().unwrap_or_default();
        let mode = match base {
            "standard" => PeerMode::Standard,
            "notify-ack" => PeerMode::NotifyAck,
            _ => {
                if let Some(b) = number(base, "backup")? {
                    PeerMode::Backup {
                        backups: usize::try_from(b).map_err(|_| bad(base, "too large"))?,
                    }
                } else if let Some(s) = number(base, "staleness")? {
                    PeerMode::Staleness { s }
                } else {
                    return Err(bad(base, "unknown base"));
                }
            }
        };
        let mut settings = PeerSettings {
            mode,
            ..PeerSettings::standard(iterations)
        };
        let (mut tokens, mut skip, mut serial) = (false, false, false);
        for part in parts {
            if part == "serial" && !serial {
                serial = true;
                settings.serial = true;
            } else if let (Some(m), false) = (number(part, "tokens")?, tokens) {
                tokens = true;
                settings.max_i = Some(m);
            } else if let (Some(j), false) = (number(part, "skip")?, skip) {
                skip = true;
                settings.skip = Some(SkipPolicy {
                    max_jump: j,
                    trigger: 1,
                });
            } else {
                return Err(bad(part, "unknown or repeated part"));
            }
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip() {
        for l in [
            "standard",
            "notify-ack",
            "backup1+tokens10",
            "backup1+skip10+tokens10",
            "staleness5",
            "staleness2+serial+tokens3",
        ] {
            let s = PeerSettings::parse(l, 7).unwrap();
            assert_eq!(s.label(), l);
            assert_eq!(s.iterations, 7);
        }
        let s = PeerSettings::parse("Backup2+Tokens4+skip3", 1).unwrap();
        assert_eq!(s.mode, PeerMode::Backup { backups: 2 });
        assert_eq!(
            (s.max_i, s.skip.map(|k| (k.max_jump, k.trigger))),
            (Some(4), Some((3, 1)))
        );
    }

    #[test]
    fn bad_labels_name_the_part() {
        for (l, part) in [
            ("gossip", "'gossip'"),
            ("backupx", "'backupx'"),
            ("standard+tokens", "'tokens'"),
            ("standard+tokens2+tokens3", "'tokens3'"),
            ("standard+fast", "'fast'"),
        ] {
            let e = PeerSettings::parse(l, 1).unwrap_err().to_string();
            assert!(e.contains(part) && e.contains(l), "{l}: {e}");
        }
    }
}
