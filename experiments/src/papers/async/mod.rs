//! ASYNC (Soori et al.): barrier control on a coordinator, SGD/ASGD and SAGA/ASAGA under
//! controlled-delay stragglers ([`cds`], shared by Figs 3-6), and the production-cluster
//! stragglers of Figs 7-8.

pub mod cds;
pub mod fig3_4;
pub mod fig5_6;
pub mod fig7_8;
