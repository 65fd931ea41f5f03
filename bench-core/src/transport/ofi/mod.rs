//! The libfabric backend (cargo feature `ofi`): the one-sided ring transport of the verbs
//! backend ([`super::rdma`]) on any libfabric provider with reliable-datagram endpoints and
//! RMA writes: tcp;ofi_rxm, shm and sockets on any Linux machine, verbs;ofi_rxm on an RDMA
//! device, and the providers of HPC fabrics (cxi on Slingshot, efa on AWS) where installed.
//!
//! Each node registers a receive region laid out as the other backends' (a notification
//! queue and a slot ring per sender), credit words, and a staging region per peer, and opens
//! one FI_EP_RDM endpoint whose address vector holds every node. A slot write is the verbs
//! backend's chain of RMA writes (header, length and payload, footer:
//! [`super::one_sided::slot_write`]) posted with `fi_writemsg`, and a notification is a write
//! of the 64-byte queue entry carrying remote completion data (FI_REMOTE_CQ_DATA, the
//! counterpart of WRITE_WITH_IMM): `sender << 16 | number`, 32 bits, as the verbs provider
//! carries only 4 bytes. Every request of a chain asks a completion (FI_COMPLETION on an
//! endpoint bound with FI_SELECTIVE_COMPLETION, so credit returns ask none); the send side's
//! bookkeeping is the verbs backend's ([`super::one_sided::send_tracker`]), which retires a
//! chain when all of its completions have come.
//!
//! # What the readers rely on
//!
//! 1. Readers that wait for the notification rely on writes from one endpoint to another
//!    landing in posting order, asked of the provider as FI_ORDER_WAW (providers that cannot
//!    keep it are not chosen): the notification's remote completion comes after the entry
//!    lands, and the entry after the slot.
//! 2. Readers that poll a slot rely, as with verbs, on the payload checksum against header
//!    and footer, whatever order the bytes of one write land in.
//!
//! # Differences from the verbs backend, and why
//!
//! - No receive requests hold a sender back: a sender may run at most [`QUEUE`]
//!   notifications ahead of what its receiver consumed, told by credits the receiver writes
//!   back (one-sided, every quarter queue) into the sender's credit words.
//! - A progress thread per endpoint reads its one completion queue: the software providers
//!   progress data only while the target's queue is read (FI_PROGRESS_MANUAL), and form
//!   connections on a first write the same way.
//! - Send completions mean what the provider's default completion level says (transmit
//!   complete: the staging may be reused), where RC verbs report the remote acknowledgement.
//! - Every request of a chain is signaled, where verbs signals only the last: a provider may
//!   complete a chain's requests out of order (shm 1.17 completes an inline footer or
//!   notification inside the post, while the payload stays pending until the target has
//!   copied it), so the last completion would free staging the provider still reads. (A
//!   notification must be signaled in any case: the sockets provider (1.17) was seen never to
//!   deliver the remote data of a write posted without FI_COMPLETION on an endpoint bound
//!   with FI_SELECTIVE_COMPLETION.)
//! - A failed peer cannot be moved to an error state alone (one endpoint serves every peer):
//!   its later posts are refused, and what is in flight completes or is cancelled when the
//!   endpoint closes.
//!
//! Provider: `SYNCBENCH_OFI_PROVIDER` names one as `fi_info -p` does (`tcp;ofi_rxm`, `shm`,
//! `sockets`, `verbs;ofi_rxm`), else libfabric's first match (`FI_PROVIDER` narrows it);
//! every node must open the same one, and connect says so when not. A provider asking
//! FI_MR_ENDPOINT, FI_CONTEXT or FI_RX_CQ_DATA is not chosen.
//!
//! By idea: [`ffi`] (bindgen's bindings and the headers' inline calls), [`domain`] (the
//! provider's objects, opened and closed together), [`memory`] (a registration that owns its
//! buffer), [`progress`] (the thread that reads the completion queue), [`closing`] (the
//! endpoints of one process closing in step, which shm needs), [`bridge`] (the send
//! verbs the tracker drives), [`endpoint`] (the ring transport built from them), and [`raw`]
//! (the provider's own write loop, transport-bench's baseline for this backend).

mod bridge;
mod closing;
mod domain;
mod endpoint;
mod ffi;
mod memory;
mod progress;
mod raw;

pub use domain::provider_from_env;
pub use endpoint::{OfiAddress, OfiEndpoint, PreparedOfi, RemoteBuffer};
pub use raw::raw_costs;

use crate::error::{CoreError, TransportFault};

/// Entries per notification queue.
pub const QUEUE: usize = 256;

/// The largest node id a notification's remote data (and a request id) can name.
pub const MAX_NODE: usize = 0xFFFF;

/// The provider this process opened first, and libfabric's version: `tcp;ofi_rxm, libfabric
/// 1.17` (None before any endpoint opened). A run's manifest names it.
pub fn opened_provider() -> Option<String> {
    domain::OPENED.get().cloned()
}

/// A provider-level failure, named `ofi: ...`.
fn err(what: impl std::fmt::Display) -> CoreError {
    CoreError::transport(TransportFault::Device, format!("ofi: {what}"))
}
