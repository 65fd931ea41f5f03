//! The experiment binaries' code, one module per binary (`src/bin/<binary>.rs` only calls
//! its `main`). In the library the generic runner, drivers, serde and clap code each binary
//! instantiates are compiled once for all of them instead of once per binary.

pub mod asap_fig6;
pub mod asap_fig7;
pub mod asap_fig8;
pub mod asap_fig9;
pub mod asap_spectral_gap;
pub mod async_fig3_4;
pub mod async_fig5_6;
pub mod async_fig7_8;
pub mod bench_scale;
pub mod dssp_fig3;
pub mod dssp_table1;
pub mod essp_fig2_breakdown;
pub mod essp_fig2_staleness;
pub mod essp_fig3;
pub mod hop_fig12;
pub mod hop_fig13;
pub mod hop_fig14_16;
pub mod hop_fig17;
pub mod hop_fig18_19;
pub mod hop_fig20_21;
pub mod hop_table1;
pub mod mode_matrix;
pub mod ps_modes;
pub mod sim_validation;
pub mod syncbench;
