//! ASAP (Kadav & Kruus): stochastic reduce on graphs, the spectral gap, NOTIFY-ACK and torn
//! receive buffers.

pub mod fig6;
pub mod fig7;
pub mod fig8;
pub mod fig9;
pub mod spectral_gap;
