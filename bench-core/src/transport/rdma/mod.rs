//! The RDMA verbs backend (cargo feature `rdma`): RC queue pairs, a registered receive region per
//! node laid out as the shm backend's segment (a notification queue and a slot ring per sender),
//! one-sided RDMA WRITEs into remote slots, and RDMA WRITE_WITH_IMM for notifications.
//!
//! A write posts, on the queue pair to the receiver, (1) the header, length and payload staged in
//! a registered buffer into the remote slot, (2) the footer word into the slot's footer, and with
//! a notification (3) a WRITE_WITH_IMM of the 64-byte queue entry into the receiver's queue, whose
//! receive completion tells the receiver that the entry, and every write before it on that
//! queue pair, has landed (the RC ordering rule). The seqlock of the slot is the same as every
//! backend's, so a reader overlapping a later write sees a torn buffer, as in ASAP. Receivers
//! post one receive request per queue entry and repost after consuming it, so a sender can
//! never overrun a queue: the hardware holds it back (receiver-not-ready retries).
//!
//! Devices: `SYNCBENCH_RDMA_DEVICE` names one (else the first), `SYNCBENCH_RDMA_PORT` the port
//! (else 1; it must be ACTIVE), `SYNCBENCH_RDMA_GID` the GID index (else, on RoCE, the
//! IPv4-mapped RoCE v2 entry of the port's table; 0 on InfiniBand). With no device,
//! [`RdmaDevice::open`] returns a [`CoreError::Transport`] saying so; nothing panics.
//!
//! The `ibverbs` crate lists devices; its `-sys` layer (same project) provides the verbs that
//! the safe crate does not wrap (RDMA WRITE, WRITE_WITH_IMM, queue pair transitions by hand).
//!
//! By idea, each verbs object an owning type that frees it once, after everything that uses
//! it: [`device`] (context, protection domain, port addressing), [`memory`] (a registered
//! buffer that owns its memory, so a registration never outlives it), [`completion`]
//! (completion queues), [`queue_pair`] (an RC queue pair, typed by state: prepared, then
//! connected), and [`endpoint`] (the ring transport built from them: prepared, then connected;
//! on drop it reaps what is in flight, then moves its queue pairs to the error state). The
//! decisions that need no device are pure and unit-tested: [`addressing`] (port, GID, path
//! MTU, initial PSNs), [`wr_id`] (every request names its peer and kind) and [`send_window`]
//! (what is in flight per peer; nothing staged is rewritten before its chain completes).

mod addressing;
mod completion;
mod device;
mod endpoint;
mod memory;
mod queue_pair;
mod send_window;
mod wr_id;

pub use device::RdmaDevice;
pub use endpoint::{PreparedEndpoint, RdmaAddress, RdmaEndpoint, RegionEntry};

use crate::error::{CoreError, TransportFault};

/// Entries per notification queue (and receive requests per queue pair).
pub const QUEUE: usize = 256;

/// A device-level failure, named `rdma: ...`.
fn err(what: impl std::fmt::Display) -> CoreError {
    CoreError::transport(TransportFault::Device, format!("rdma: {what}"))
}
