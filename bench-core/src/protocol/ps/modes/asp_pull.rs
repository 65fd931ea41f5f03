//! ASP as MXNet's `dist_async` runs it, the ASP that the DSSP paper compares against (§I: each
//! worker computes, pushes its update, pulls the latest global weights and assigns them): a
//! worker asks for the model after every push and the server answers at once, so no worker
//! waits for another, but every iteration starts from the server's current weights. The
//! `asp` mode is Bösen's ASP instead (compute on the cache, one refresh in flight).

use super::{PsMode, SyncMode};
use crate::error::Result;
use crate::protocol::ps::{ReadPolicy, ReleasePolicy};
use crate::protocol::table::TableMode;

/// ASP with a pull every iteration. Label `asp-pull`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AspPull {}

impl SyncMode {
    /// ASP with a pull of the server's weights every iteration.
    pub const fn asp_pull() -> Self {
        SyncMode::AspPull(AspPull {})
    }
}

impl PsMode for AspPull {
    const SYNTAX: &'static str = "asp-pull";

    fn parse(label: &str) -> Option<Result<Self>> {
        (label == "asp-pull").then_some(Ok(AspPull {}))
    }

    fn label(&self) -> String {
        "asp-pull".into()
    }

    fn bound(&self) -> Option<u64> {
        None
    }

    fn validate(&self) -> Result<()> {
        Ok(())
    }

    fn policies(&self, _workers: usize) -> (ReadPolicy, ReleasePolicy) {
        (ReadPolicy::AskEveryIteration, ReleasePolicy::Immediate)
    }

    /// Row tables refresh rows in the background under ASP; a pull per iteration of whole
    /// models is this mode's point, so it runs on the model-level server only.
    fn table_mode(&self) -> Option<TableMode> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::{deliver, drain, sent};
    use crate::protocol::{Action, Input, Message, ProtocolSpec};

    /// A fast worker pushes, pulls and goes on while the other worker has pushed nothing: the
    /// server applies the push before it answers the pull, and never holds a read.
    #[test]
    fn pulls_after_every_push_and_never_waits_for_others() {
        let mut nodes = ProtocolSpec {
            mode: SyncMode::asp_pull(),
            workers: 2,
            iterations: 3,
        }
        .build()
        .unwrap();
        let (server, workers) = nodes.split_at_mut(1);
        let (server, fast) = (server[0].as_mut(), workers[0].as_mut());
        fast.handle(0, Input::Start).unwrap();
        assert!(
            sent(&drain(fast)).contains(&Message::ReadRequest { clock: 0 }),
            "even the first iteration pulls"
        );
        let model = Message::Model { complete: 0 };
        for clock in 0..3u64 {
            let t = 10 * (clock + 1);
            let answer = deliver(server, t, 1, Message::ReadRequest { clock });
            assert!(sent(&answer).contains(&model), "clock {clock}");
            assert!(deliver(fast, t, 0, model).contains(&Action::Compute { iter: clock }));
            fast.handle(t + 5, Input::ComputeDone { iter: clock })
                .unwrap();
            let pull = (clock + 1 < 3).then_some(Message::ReadRequest { clock: clock + 1 });
            let expect: Vec<Message> = std::iter::once(Message::Update { clock })
                .chain(pull)
                .collect();
            assert_eq!(sent(&drain(fast)), expect);
            assert_eq!(
                deliver(server, t + 5, 1, Message::Update { clock }),
                vec![Action::Apply { from: 1, clock }],
                "an update is applied at once"
            );
        }
        assert!(fast.is_finished());
        assert!(!server.is_finished(), "the other worker has not pushed");
    }
}
