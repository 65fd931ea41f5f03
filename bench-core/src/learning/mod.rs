//! The bottom layer of learning, below the drivers and the workloads, which both import it and
//! not each other.
//!
//! * [`Learning`]: what a run learns, as a driver sees it (node state, computations, the payloads
//!   messages carry, what `Apply`, `Install` or `Commit` do).
//! * [`Payload`] and [`PayloadEffect`]: the bytes a message carries besides its control words,
//!   and what carrying out a payload action did.
//! * [`ScaledUpdate`]: an update held as a multiple of the model it was computed on plus exact
//!   entries, so sparse workloads with an L2 term move no dense update in the simulator.
//! * [`Workload`]: what the parameter-server family trains (an additive update per iteration).
//! * [`ControlOnly`] and [`CountingProbe`]: learning nothing (or only counting updates), for
//!   exploring a protocol's schedules cheaply and for checking what was applied.

mod control_only;
mod counting_probe;
mod payload;
mod run_learning;
mod scaled_update;
mod workload;

pub use control_only::ControlOnly;
pub use counting_probe::CountingProbe;
pub use payload::{Params, Payload, PayloadEffect, HEADER_BYTES};
pub use run_learning::{payload_words, Learning};
pub use scaled_update::{ScaledParts, ScaledUpdate};
pub use workload::Workload;
