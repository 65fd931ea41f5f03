//! Reading runs against the papers: reference optima and the optimum-relative comparison
//! target, the claims read against them, the one judge that sequences them for every figure
//! ([`verdict::Judge`]), the sensitivity of verdicts to modelling knobs, and how numbers are
//! written into claims and notes.

pub mod claim_id;
pub mod comparison;
pub mod curve_area;
pub mod format;
pub mod near_objective;
pub mod reference;
pub mod sensitivity;
pub mod time_to_target;
pub mod verdict;
