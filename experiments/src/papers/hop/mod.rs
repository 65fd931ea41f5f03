//! Hop (Luo et al., ASPLOS 2019): decentralized training on graphs with queues and tokens: slowdown
//! (Figs 12-13, 20-21), backup workers, bounded staleness and skipping iterations compared with the
//! standard protocol ([`compare`], Figs 14-19), and the queue bounds (Table 1).

pub mod compare;
pub mod fig12;
pub mod fig13;
pub mod fig14_16;
pub mod fig17;
pub mod fig18_19;
pub mod fig20_21;
mod step_cost;
pub mod table1;
