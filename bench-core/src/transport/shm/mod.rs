//! The shared-memory backend: processes on one host. Every receiver creates one segment (a file
//! in `/dev/shm`, mapped shared) holding, per sender, a notification queue and the sender's
//! slot ring; a sender maps the receivers' segments and carries out a one-sided write by copying
//! into the remote slot itself (header first, footer last: the seqlock every backend uses), then
//! pushes the notification. The copy is done when `post_write` returns, so the completion is
//! immediate.
//!
//! Segment layout (64-bit words): a directory page `[magic, job token, owner, senders, (sender,
//! queue offset, ring offset, capacity, depth) per sender]`, then per sender a page-aligned
//! queue (consumer index, producer index on its own cache line, [`QUEUE`] entries of
//! `[slot, version, imm0, imm1]`) and page-aligned slots. Queues are single-producer
//! single-consumer: the sender's node thread produces, the receiver's consumes. A full queue
//! makes the sender wait (backpressure) up to [`FULL_TIMEOUT`], then fail naming the receiver.
//!
//! Waiting spins and then sleeps in growing steps (`poll_with_backoff`), as the queues live in
//! memory another process writes and there is no condition variable to wake.

mod endpoint;
mod fabric;
mod queue;
mod segment;
#[cfg(test)]
mod tests;

use super::region::queue_words;
use std::time::Duration;

/// Entries per notification queue.
pub const QUEUE: usize = 1024;
/// Queue words: the consumer index on its own line, then the entries.
const QUEUE_WORDS: usize = queue_words(QUEUE);
/// How long a sender waits for room in a full queue before it gives up.
pub const FULL_TIMEOUT: Duration = Duration::from_secs(30);

pub use endpoint::ShmEndpoint;
pub use fabric::ShmFabric;
pub use segment::{default_dir, segment_path};
