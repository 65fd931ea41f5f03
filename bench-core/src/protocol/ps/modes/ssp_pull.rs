//! SSP as the DSSP paper ran it in MXNet (§III, Algorithm 1's worker loop, which its SSP and DSSP
//! share): every iteration a worker pushes its update, then pulls the server's weights, and the
//! server holds the answer while the worker is more than `s` clocks ahead of the slowest. The
//! `sspN` mode is Bösen's SSP instead (compute on the cached model while it is fresh enough,
//! ask only when it is not), which pulls far less often: on a communication-heavy profile that
//! difference, not the staleness bound, decides its throughput.

use super::{check_staleness, parse_staleness, PsMode, SyncMode};
use crate::error::Result;
use crate::protocol::ps::{ReadPolicy, ReleasePolicy};
use crate::protocol::table::TableMode;

/// SSP with bound `staleness` and a pull every iteration. Label `sspN-pull`; bare `ssp-pull`
/// is s = 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SspPull {
    /// Staleness bound s >= 0 (signed so that a negative value is reported, not wrapped).
    pub staleness: i64,
}

impl SyncMode {
    /// SSP with bound `staleness`, pulling the server's weights every iteration.
    pub const fn ssp_pull(staleness: i64) -> Self {
        SyncMode::SspPull(SspPull { staleness })
    }
}

impl PsMode for SspPull {
    const SYNTAX: &'static str = "sspN-pull";

    fn parse(label: &str) -> Option<Result<Self>> {
        let rest = label.strip_suffix("-pull")?;
        parse_staleness(rest, "ssp", Self::SYNTAX).map(|r| r.map(|staleness| SspPull { staleness }))
    }

    fn label(&self) -> String {
        format!("ssp{}-pull", self.staleness)
    }

    fn bound(&self) -> Option<u64> {
        Some(self.staleness.max(0) as u64)
    }

    fn validate(&self) -> Result<()> {
        check_staleness(self.staleness, "SSP")
    }

    fn policies(&self, _workers: usize) -> (ReadPolicy, ReleasePolicy) {
        (
            ReadPolicy::AskEveryIteration,
            ReleasePolicy::Bounded {
                s: self.staleness.max(0) as u64,
                eager: false,
            },
        )
    }

    /// A pull of the whole model per iteration is this mode's point, as in DSSP's paper: it
    /// runs on the model-level server only.
    fn table_mode(&self) -> Option<TableMode> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::{deliver, drain, sent};
    use crate::protocol::{Action, Input, Message, ProtocolSpec};

    #[test]
    fn labels_parse_before_plain_ssp() {
        assert_eq!(SyncMode::parse("ssp3-pull").unwrap(), SyncMode::ssp_pull(3));
        assert_eq!(SyncMode::parse("SSP-pull").unwrap(), SyncMode::ssp_pull(3));
        assert_eq!(SyncMode::parse("ssp3").unwrap(), SyncMode::ssp(3));
        assert!(SyncMode::parse("ssp-2-pull").unwrap().validate().is_err());
        assert!(SyncMode::parse("sspx-pull").is_err());
    }

    /// A worker pulls after every push, even while its cache would be fresh enough for SSP;
    /// the server answers while the worker is within `s` clocks of the slowest and holds the
    /// answer beyond that.
    #[test]
    fn pulls_every_iteration_and_the_server_holds_beyond_the_bound() {
        let s = 1;
        let mut nodes = ProtocolSpec {
            mode: SyncMode::ssp_pull(s),
            workers: 2,
            iterations: 4,
        }
        .build()
        .unwrap();
        let (server, workers) = nodes.split_at_mut(1);
        let (server, fast) = (server[0].as_mut(), workers[0].as_mut());
        fast.handle(0, Input::Start).unwrap();
        assert_eq!(
            sent(&drain(fast)),
            vec![Message::ReadRequest { clock: 0 }],
            "even the first iteration pulls"
        );
        let model = Message::Model { complete: 0 };
        for clock in 0..=s as u64 {
            // The other worker never pushes: clocks 0..=s are released.
            let t = 10 * (clock + 1);
            let answer = deliver(server, t, 1, Message::ReadRequest { clock });
            assert!(sent(&answer).contains(&model), "clock {clock}");
            assert!(deliver(fast, t, 0, model).contains(&Action::Compute { iter: clock }));
            fast.handle(t + 5, Input::ComputeDone { iter: clock })
                .unwrap();
            assert_eq!(
                sent(&drain(fast)),
                vec![
                    Message::Update { clock },
                    Message::ReadRequest { clock: clock + 1 }
                ],
                "push, then pull, every iteration"
            );
            deliver(server, t + 5, 1, Message::Update { clock });
        }
        let held = deliver(
            server,
            100,
            1,
            Message::ReadRequest {
                clock: s as u64 + 1,
            },
        );
        assert!(
            !sent(&held).contains(&model),
            "clock s + 1 waits for the slowest"
        );
        // The slowest worker's first push releases it.
        let released = deliver(server, 110, 2, Message::Update { clock: 0 });
        assert!(
            released.contains(&Action::Send {
                to: 1,
                msg: Message::Model { complete: 1 }
            }),
            "{released:?}"
        );
    }
}
