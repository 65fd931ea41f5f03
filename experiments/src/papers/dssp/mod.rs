//! DSSP (Zhao et al., ICDCS 2019): dynamic staleness against SSP(s), ASP and BSP on heterogeneous
//! workers.

pub mod bound;
pub mod fig3;
pub mod table1;
