//! Helpers shared by the protocol families' scripted tests.

use super::{Action, Protocol};

/// Every action `p` has ready, in order.
pub(crate) fn drain(p: &mut dyn Protocol) -> Vec<Action> {
    std::iter::from_fn(|| p.poll_action()).collect()
}
