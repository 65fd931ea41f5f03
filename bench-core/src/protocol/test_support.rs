//! Helpers shared by the protocol families' scripted tests.

use super::{Action, Input, Message, Nanos, NodeId, Protocol};

/// Every action `p` has ready, in order.
pub(crate) fn drain(p: &mut dyn Protocol) -> Vec<Action> {
    std::iter::from_fn(|| p.poll_action()).collect()
}

/// Delivers `msg` from node `from` to `p` at `now` and returns the actions it answers with.
///
/// # Panics
/// When `p` rejects the message (the scripted test's failure).
pub(crate) fn deliver(p: &mut dyn Protocol, now: Nanos, from: NodeId, msg: Message) -> Vec<Action> {
    p.handle(now, Input::Received { from, msg })
        .unwrap_or_else(|e| panic!("node {} rejected {msg:?} from {from}: {e}", p.node()));
    drain(p)
}

/// The messages among `actions`, in order.
pub(crate) fn sent(actions: &[Action]) -> Vec<Message> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send { msg, .. } => Some(*msg),
            _ => None,
        })
        .collect()
}
