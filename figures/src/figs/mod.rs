//! The figures this tool knows: id, title, the paper's result, and how to draw it from CSV.

mod asap_buffers;
mod asap_gaps;
mod async_figs;
mod bench_scale;
mod dssp_table;
mod essp_staleness;
mod hop_gaps;
mod mode_matrix;
mod ps_modes;
mod sim_validation;

use crate::bands;
use crate::chart::{self, Drawing};
use anyhow::Result;
use std::path::Path;

/// A renderable figure.
pub struct FigureDef {
    /// Figure id (= results sub-directory and make target suffix).
    pub id: &'static str,
    /// Title.
    pub title: &'static str,
    /// What the paper reports, for the report.
    pub paper: &'static str,
    /// The figure's panels from the CSVs in `dir` ([`draw`] writes `<dir>/<id>.svg` and
    /// `.png`).
    pub render: fn(&Path) -> Result<Drawing>,
}

/// Draws `def` from the CSVs in `dir` to `<dir>/<id>.svg` and `.png`: the first seed's curves
/// (the top of `dir`) with min-max bands over every seed under `dir/seeds/` ([`bands`]).
///
/// # Errors
/// When the first seed's CSVs cannot be read or the images written. A seed whose CSVs cannot
/// be drawn is left out of the bands with a warning.
pub fn draw(def: &FigureDef, dir: &Path) -> Result<()> {
    let mut first = (def.render)(dir)?;
    let mut others = Vec::new();
    // Bands are drawn under lines: a figure of bars and heatmaps alone reads no other seed
    // (mode-matrix's heatmap is the median over seeds already, and a seed has no ranking.csv).
    let has_lines = first
        .panels
        .iter()
        .any(|p| matches!(p, chart::Panel::Lines { .. }));
    let seeds_dir = dir.join("seeds");
    if let Some(entries) = has_lines
        .then(|| std::fs::read_dir(&seeds_dir).ok())
        .flatten()
    {
        let mut seeds: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            // The first seed's data files are the top of `dir`; its seed directory holds
            // only its claims.
            .filter(|p| {
                std::fs::read_dir(p).is_ok_and(|mut files| {
                    files.any(|f| f.is_ok_and(|f| f.file_name() != "claims.csv"))
                })
            })
            .collect();
        seeds.sort();
        for seed in seeds {
            match (def.render)(&seed) {
                Ok(d) => others.push(d),
                Err(e) => eprintln!(
                    "warning: {}: {} left out of the min-max bands: {e:#}",
                    def.id,
                    seed.display()
                ),
            }
        }
    }
    bands::attach(&mut first, &others);
    chart::render(dir, def.id, &first.panels, first.cols)
}

/// Every figure, in report order.
pub const ALL: &[FigureDef] = &[
    FigureDef {
        id: "asap-fig3",
        title: "ASAP Fig 3: spectral gap of all-reduce, parameter server, root expander, chain (N = 6, 25)",
        paper: "AR 1.00/1.00, PS 0.75/0.68, expander 0.38/0.20, chain 0.10/0.002",
        render: asap_gaps::fig3,
    },
    FigureDef {
        id: "asap-fig10",
        title: "ASAP Fig 10: spectral gap vs N for root expander, chain and MALT Halton (degree 2)",
        paper: "expander above MALT for most N and above chain for every N; MALT drops to 0 for some N",
        render: asap_gaps::fig10,
    },
    FigureDef {
        id: "asap-fig6",
        title: "ASAP Fig 6 (SVM): stochastic reduce over the root expander and the chain vs all-reduce; loss vs epochs and MB sent per node",
        paper: "RCV1 root marginally faster, 56 vs 84 MB per machine; splice-site root faster with ~10x fewer bytes; webspam: sparse graphs beat all-reduce, chain needs more epochs",
        render: asap_gaps::fig6,
    },
    FigureDef {
        id: "asap-fig7",
        title: "ASAP Fig 7: share of reduces by number of consistent (untorn) inputs, NOTIFY-ACK vs BSP vs ASYNC, 8 peers all-reduce",
        paper: "NOTIFY-ACK: 100% of reduces with all 7 inputs; BSP: 77% with >= 5; ASYNC: 39% with >= 5",
        render: asap_buffers::fig7,
    },
    FigureDef {
        id: "asap-fig8",
        title: "ASAP Fig 8: VGG on CIFAR-10 (twin at quick scale), 8 peers all-reduce, NOTIFY-ACK vs BSP vs ASYNC over receive buffers: training accuracy vs time, images/s",
        paper: "229.3 (NA), 217.8 (BSP), 246 (ASYNC) images/s; NOTIFY-ACK reaches 99% training accuracy first, ASYNC worst",
        render: asap_buffers::fig8,
    },
    FigureDef {
        id: "asap-fig9",
        title: "ASAP Fig 9: SVM on a webspam twin, 25 peers on the root expander, NOTIFY-ACK vs BSP vs ASYNC over receive buffers",
        paper: "NOTIFY-ACK about 3x faster than BSP; ASYNC does not converge",
        render: asap_buffers::fig9,
    },
    FigureDef {
        id: "essp-fig2-staleness",
        title: "ESSP Fig 2 (left): clock differential at every read, SSP vs ESSP, matrix factorisation, 64 workers",
        paper: "SSP nearly uniform over the staleness window; ESSP concentrated near zero; BSP always -1",
        render: essp_staleness::render_fig,
    },
    FigureDef {
        id: "essp-fig2-breakdown",
        title: "ESSP Fig 2 (right): computation vs blocked time per clock, SSP vs ESSP (matrix factorisation and LDA)",
        paper: "ESSP spends less time blocked than SSP at each staleness (LDA)",
        render: essp_staleness::render_breakdown,
    },
    FigureDef {
        id: "essp-fig3",
        title: "ESSP Fig 3 (MF part): squared loss vs clock and vs time, SSP vs ESSP, and a large step at the largest s",
        paper: "ESSP converges faster per iteration and per second; SSP MF diverges or shakes at high s with a large step, ESSP robust",
        render: essp_staleness::render_convergence,
    },
    FigureDef {
        id: "dssp-fig3",
        title: "DSSP Fig 3: BSP, ASP, SSP(3..15) and DSSP(3, 12) under a communication-heavy (fc) and a computation-heavy (CNN) time profile, 4 workers",
        paper: "DSSP >= averaged SSP; ASP fast but less accurate; throughput ASP > DSSP > SSP > BSP with fc layers, the reverse without",
        render: dssp_table::render_fig3,
    },
    FigureDef {
        id: "dssp-table1",
        title: "DSSP Table I: time to two accuracy targets, 2 workers on mixed GPUs (time profile; CPU proxy model)",
        paper: "seconds to 0.67 / 0.68: BSP 6159/-, ASP 2993/3017, SSP3 5678/-, SSP6 5704/6908, SSP15 5565/7256, DSSP 3016/3046",
        render: dssp_table::render_fig,
    },
    FigureDef {
        id: "async-fig3",
        title: "ASYNC Fig 3: SGD vs ASGD error vs time, 8 workers, one worker delayed 0/30/60/100% (least squares, synthetic twins)",
        paper: "ASGD always faster; about 2x at 100% delay; ASGD nearly independent of the delay",
        render: async_figs::fig3,
    },
    FigureDef {
        id: "async-fig4",
        title: "ASYNC Fig 4: mean wait per iteration of SGD and ASGD against the delay",
        paper: "SGD's wait grows with the delay (sharply at 100%); ASGD's flat",
        render: async_figs::fig4,
    },
    FigureDef {
        id: "async-fig5",
        title: "ASYNC Fig 5: SAGA vs ASAGA error vs time with the history broadcast, same delays",
        paper: "ASAGA keeps its rate at every delay; SAGA degrades with the delay",
        render: async_figs::fig5,
    },
    FigureDef {
        id: "async-fig6",
        title: "ASYNC Fig 6: mean wait per iteration of SAGA and ASAGA against the delay",
        paper: "SAGA's wait grows with the delay; ASAGA's flat",
        render: async_figs::fig6,
    },
    FigureDef {
        id: "async-fig7",
        title: "ASYNC Fig 7: SGD vs ASGD, 32 workers, production-cluster stragglers",
        paper: "ASGD 3x faster on mnist8m, 4x on epsilon",
        render: async_figs::fig7,
    },
    FigureDef {
        id: "async-fig8",
        title: "ASYNC Fig 8: SAGA vs ASAGA, 32 workers, production-cluster stragglers",
        paper: "ASAGA 3.5x faster on mnist8m, 4x on epsilon",
        render: async_figs::fig8,
    },
    FigureDef {
        id: "async-table3",
        title: "ASYNC Table 3: mean wait per iteration on 32 workers (SGD, ASGD, SAGA, ASAGA)",
        paper: "mnist8m 42.84 / 9.81 / 6.44 / 3.57 ms; epsilon 6.99 / 1.17 / 5.31 / 1.42 ms",
        render: async_figs::table3,
    },
    FigureDef {
        id: "hop-table1",
        title: "Hop Table 1: largest iteration gap over seeded random schedules vs the theoretical bound, per setting and graph",
        paper: "standard len(j->i); staleness (s+1) len(j->i); backup unbounded; NOTIFY-ACK min(len(j->i), 2 len(i->j)); token queues min(b0 len(j->i), max_i len(i->j))",
        render: hop_gaps::table1,
    },
    FigureDef {
        id: "hop-fig12",
        title: "Hop Fig 12 (SVM part): standard decentralized training with and without random slowdown (6x, p = 1/n) on ring, ring-based and double-ring, 16 peers",
        paper: "every graph is slowed by random slowdown; sparser graphs suffer less",
        render: hop_gaps::fig12,
    },
    FigureDef {
        id: "hop-fig12-cnn",
        title: "Hop Fig 12 (CNN part): standard decentralized training of Hop's CNN with and without random slowdown (6x, p = 1/n) on ring, ring-based and double-ring, 16 peers",
        paper: "every graph is slowed by random slowdown; sparser graphs suffer less",
        render: hop_gaps::fig12,
    },
    FigureDef {
        id: "hop-fig13",
        title: "Hop Fig 13 (SVM part): decentralized (ring-based) vs parameter-server BSP, 16 workers",
        paper: "decentralized converges faster than the parameter server",
        render: hop_gaps::fig13,
    },
    FigureDef {
        id: "hop-fig13-cnn",
        title: "Hop Fig 13 (CNN part): decentralized (ring-based) vs parameter-server BSP, 16 workers training Hop's CNN",
        paper: "decentralized converges faster than the parameter server",
        render: hop_gaps::fig13,
    },
    FigureDef {
        id: "hop-fig14-16",
        title: "Hop Figs 14-16 (SVM part): backup workers (1) vs standard on ring-based and double-ring under random slowdown",
        paper: "backup workers faster in wall clock, slightly worse per step; iteration speedup up to 1.81",
        render: hop_gaps::fig14_16,
    },
    FigureDef {
        id: "hop-fig14-16-cnn",
        title: "Hop Figs 14-16 (CNN part): backup workers (1) vs standard on ring-based and double-ring under random slowdown, 16 peers training Hop's CNN",
        paper: "backup workers faster in wall clock, slightly worse per step; iteration speedup up to 1.81",
        render: hop_gaps::fig14_16,
    },
    FigureDef {
        id: "hop-fig17",
        title: "Hop Fig 17 (SVM in place of the CNN): bounded staleness 5 (and backup workers) vs standard on ring-based under random slowdown",
        paper: "bounded staleness similar to backup workers; both beat standard",
        render: hop_gaps::fig17,
    },
    FigureDef {
        id: "hop-fig17-cnn",
        title: "Hop Fig 17 (CNN, as the paper ran it): bounded staleness 5 (and backup workers) vs standard on ring-based under random slowdown, 16 peers training Hop's CNN",
        paper: "bounded staleness similar to backup workers; both beat standard",
        render: hop_gaps::fig17,
    },
    FigureDef {
        id: "hop-fig18-19",
        title: "Hop Figs 18-19 (SVM part): skipping iterations (max jump 2, 10) on top of backup workers with one of 16 workers 4x slower, ring-based",
        paper: "jump 10 more than 2x faster than standard; iteration-time slowdown drops from 3.9x to about 1.1x",
        render: hop_gaps::fig18_19,
    },
    FigureDef {
        id: "hop-fig18-19-cnn",
        title: "Hop Figs 18-19 (CNN part; Fig 18 is on CNN only): skipping iterations (max jump 2, 10) on top of backup workers with one of 16 workers 4x slower, ring-based, training Hop's CNN",
        paper: "jump 10 more than 2x faster than standard; iteration-time slowdown drops from 3.9x to about 1.1x",
        render: hop_gaps::fig18_19,
    },
    FigureDef {
        id: "hop-fig20-21",
        title: "Hop Fig 20-21: 8 workers unevenly on 3 machines, ring-based vs two hierarchical graphs under a two-level network (SVM in place of the CNN)",
        paper: "hierarchical graphs (gaps 0.2682, 0.2688) converge faster than ring-based (gap 0.6667); per-iteration convergence similar",
        render: hop_gaps::fig20_21,
    },
    FigureDef {
        id: "hop-fig20-21-cnn",
        title: "Hop Fig 20-21 (CNN, as the paper ran it): 8 workers unevenly on 3 machines training Hop's CNN, ring-based vs two hierarchical graphs under a two-level network",
        paper: "hierarchical graphs (gaps 0.2682, 0.2688) converge faster than ring-based (gap 0.6667); per-iteration convergence similar",
        render: hop_gaps::fig20_21,
    },
    FigureDef {
        id: "ps-modes",
        title: "ps-modes: parameter-server BSP / ASP / SSP(3) with one 2x slower worker (template, not a paper figure)",
        paper: "expected: SSP within its bound, BSP staleness constant, ASP the highest iteration rate",
        render: ps_modes::render,
    },
    FigureDef {
        id: "mode-matrix",
        title: "Mode matrix: every sync mode on one workload and network, time to an optimum-relative target relative to BSP, per straggler pattern (not a paper figure)",
        paper: "the papers' headlines restated inside one matrix: Hop (backup, staleness, skipping beat standard), ASYNC (ASGD beats SGD with stragglers), SSP/ESSP/DSSP, backup workers, ASAP (stochastic reduce vs all-reduce)",
        render: mode_matrix::render,
    },
    FigureDef {
        id: "sim-validation",
        title: "Simulator validation: relative error of the simulator against the threads driver per mode, replaying the measured trace or from the configuration alone (not a paper figure)",
        paper: "a simulator is worth what its validation shows: predicted vs measured iteration rate, makespan, time to target and mean wait",
        render: sim_validation::render,
    },
];

/// Benchmarks drawn like figures when their results exist (`make bench-scale`): not in the
/// catalogue nor in `make reproduce-all`, and reported only when run.
pub const BENCHES: &[FigureDef] = &[FigureDef {
    id: "bench-scale",
    title: "Simulator scale: wall time, cost per worker-clock and peak memory vs workers",
    paper: "the scale targets: SVM SSP 1,024 workers x 1,000 clocks <= 30 s and <= 2 GiB, exponent <= 1.05; control-only 10,000 x 100 <= 30 s",
    render: bench_scale::render,
}];

/// A figure or benchmark by id.
pub fn find(id: &str) -> Option<&'static FigureDef> {
    ALL.iter().chain(BENCHES).find(|f| f.id == id)
}

#[cfg(test)]
mod tests {
    /// The figure catalogue the Makefile and the experiments read.
    const CATALOG: &str = include_str!("../../../experiments/figures.tsv");

    #[test]
    fn every_catalogue_figure_has_a_renderer_in_report_order() {
        let catalogue: Vec<&str> = CATALOG
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| l.split('\t').next().unwrap_or(""))
            .collect();
        let renderers: Vec<&str> = super::ALL.iter().map(|f| f.id).collect();
        assert_eq!(
            catalogue, renderers,
            "experiments/figures.tsv and figures' ALL list different figures (or orders)"
        );
    }
}
