//! How each family of experiments runs a setting: parameter-server modes on a time profile
//! (DSSP), peers on a graph (Hop), receive buffers (ASAP), and a mode of any family named in
//! one word (the mode matrix, sim-validation).

pub mod buffered;
pub mod named_mode;
pub mod peers;
pub mod profiled;
