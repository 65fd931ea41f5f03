//! The RDMA verbs backend (cargo feature `rdma`): RC queue pairs, a registered receive region per
//! node laid out as the shm backend's segment (a notification queue and a slot ring per sender),
//! one-sided RDMA WRITEs into remote slots, and RDMA WRITE_WITH_IMM for notifications.
//!
//! A write stages the slot in a registered buffer and posts, as one chain on the queue pair to
//! the receiver, (1) an RDMA WRITE of the header (version) word alone, (2) one of the length
//! and payload, (3) one of the footer word ([`slot_write`](super::one_sided::slot_write)), and with a notification (4) a
//! WRITE_WITH_IMM of the 64-byte queue entry into the receiver's queue. Only the chain's last
//! request is signaled. The seqlock of the slot is the same as every backend's, so a reader
//! overlapping a later write sees a torn buffer, as in ASAP. Receivers post one receive request
//! per queue entry and repost after consuming it, so a sender can never overrun a queue: the
//! hardware holds it back (receiver-not-ready retries).
//!
//! # Write ordering: what each reader relies on
//!
//! Verbs do not order the bytes inside one RDMA WRITE, which is why the header, the payload
//! and the footer go in WRITEs of their own. Between WRITEs, readers rely on one of two
//! guarantees:
//!
//! 1. Readers that wait for the notification (NOTIFY-ACK, the parameter server, Hop: every
//!    mode whose receiver reads a slot after its WRITE_WITH_IMM's receive completion) rely only
//!    on that completion arriving after every WRITE posted before it on the queue pair has
//!    landed: the RC in-order completion rule, which every device keeps.
//! 2. Readers that poll a slot without a notification (ASAP's receive-buffer reduce, and the
//!    torn-buffer detection of any reader overlapping a later write) cannot lean on a
//!    completion. Each slot write carries a checksum of its payload above its length
//!    ([`payload_checksum`](super::one_sided::slot_write::payload_checksum)), and the reader takes a payload only when header,
//!    footer and checksum agree: a payload partly of a later write is caught whatever order
//!    its bytes land in (a 2^-32 chance of a miss). The order header, payload, footer keeps the
//!    versions honest where the responder places one queue pair's WRITEs in posting order,
//!    which holds without relaxed ordering: no registration asks for
//!    IBV_ACCESS_RELAXED_ORDERING ([`memory::access_flags`], checked by a unit test), and the
//!    adapter should not force PCIe relaxed ordering (mlx5: `mlxconfig ... query
//!    PCI_WR_ORDERING` shows `per_mkey(0)`, not `force_relax(1)`; docs/cluster.md).
//!
//! Devices: `SYNCBENCH_RDMA_DEVICE` names one (else the first), `SYNCBENCH_RDMA_PORT` the port
//! (else 1; it must be ACTIVE), `SYNCBENCH_RDMA_GID` the GID index (else, on RoCE, the
//! IPv4-mapped RoCE v2 entry of the port's table; 0 on InfiniBand), and on RoCE
//! `SYNCBENCH_RDMA_TCLASS` (0-255, else 0) and `SYNCBENCH_RDMA_HOP_LIMIT` (1-255, else 64) the
//! global route header's traffic class and hop limit. With no device, [`RdmaDevice::open`]
//! returns a [`CoreError::Transport`] saying so; nothing panics. An endpoint's health check
//! also reads the device's asynchronous events ([`async_events`]): a fatal one that concerns
//! it (its queue pair, naming the peer; its completion queues; its port; the device) is
//! reported as a failure. At connection set-up each endpoint prints how much memory it pinned.
//!
//! The `ibverbs` crate lists devices; its `-sys` layer (same project) provides the verbs that
//! the safe crate does not wrap (RDMA WRITE, WRITE_WITH_IMM, queue pair transitions by hand).
//!
//! By idea, each verbs object an owning type that frees it once, after everything that uses
//! it: [`device`] (context, protection domain, port addressing), [`memory`] (a registered
//! buffer that owns its memory, so a registration never outlives it), [`completion`]
//! (completion queues), [`queue_pair`] (an RC queue pair, typed by state: prepared, then
//! connected), and [`endpoint`] (the ring transport built from them: prepared, then connected;
//! on drop it reaps what is in flight, then moves its queue pairs to the error state), set up
//! in [`setup`], with its notification queue in [`notify_queue`] and its bridge to the send verbs
//! in [`hardware`]. The
//! decisions that need no device are pure and unit-tested: here [`addressing`] (port, GID, global
//! routing, traffic class and hop limit, path MTU, initial PSNs), [`slot_write`](super::one_sided::slot_write) (the WRITEs
//! of a slot write and their order), [`async_events`] (which events are fatal, what they
//! name), and in the one-sided engine shared with the libfabric backend ([`super::one_sided`]):
//! [`wr_id`](super::one_sided::wr_id) (every request names its peer and kind), [`send_window`](super::one_sided::send_window) (what is in
//! flight per peer; nothing staged is rewritten before its chain completes) and
//! [`send_tracker`](super::one_sided::send_tracker) (the send side's bookkeeping: which chain may be staged and posted, what
//! each completion means, which peers are given up, teardown's reaping). The endpoint drives
//! the tracker through a trait over the send verbs (post, poll, error state); its tests drive
//! it through a mock of them that delays, reorders and fails completions and refuses posts
//! part-way, and a property test checks that nothing staged is rewritten in flight and that
//! every failure reaches the caller naming its peer.

mod addressing;
mod async_events;
mod completion;
mod device;
mod endpoint;
mod hardware;
mod memory;
mod notify_queue;
mod queue_pair;
mod setup;

pub use device::RdmaDevice;
pub use endpoint::{PreparedEndpoint, RdmaAddress, RdmaEndpoint, RegionEntry};

use crate::error::{CoreError, TransportFault};

/// Entries per notification queue (and receive requests per queue pair).
pub const QUEUE: usize = 256;

/// A device-level failure, named `rdma: ...`.
fn err(what: impl std::fmt::Display) -> CoreError {
    CoreError::transport(TransportFault::Device, format!("rdma: {what}"))
}
