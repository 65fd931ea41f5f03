//! The one-sided write engine both RDMA backends share, apart from the calls that carry it
//! out: the verbs backend ([`super::rdma`], RC queue pairs) and the libfabric backend
//! ([`super::ofi`], RDM endpoints) each bridge it to their provider with a small
//! [`send_tracker::SendVerbs`] implementation, and stage and post the same chains.
//!
//! - [`layout`]: the receive region and staging both lay out alike, and reading a slot;
//! - [`slot_write`]: the writes of one slot write and their order (header word, length and
//!   payload, footer word), and the payload checksum a polling reader checks;
//! - [`wr_id`]: every request names its peer and kind, so a completion is attributed right;
//! - [`send_window`]: what is in flight per peer, so nothing staged is rewritten before the
//!   chain that reads it completes;
//! - [`send_tracker`]: the send side's bookkeeping (admission, posting, every completion's
//!   meaning, peers given up, teardown's reaping), tested against a mock of the provider that
//!   delays, reorders and fails completions and refuses posts part-way.
//!
//! None of it touches a device, so it is compiled (and its tests run) with either backend.

pub(crate) mod layout;
pub(crate) mod send_tracker;
pub(crate) mod send_window;
pub(crate) mod slot_write;
pub(crate) mod wr_id;
