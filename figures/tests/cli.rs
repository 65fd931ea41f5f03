//! The `figures` binary end to end: it draws the mode-matrix heatmap from ranking.csv (the
//! median over seeds the experiment wrote), names what is missing, and refuses an empty
//! results folder and an unknown figure with a clear error.

use std::path::{Path, PathBuf};

mod common;

use common::{figures, text};

fn tmpdir(tag: &str) -> PathBuf {
    common::tmpdir("cli", tag)
}

/// A mode-matrix result folder: two modes, two patterns, ranking.csv's medians over 3 seeds.
fn mode_matrix(results: &Path, ranking: bool) -> PathBuf {
    let d = results.join("mode-matrix");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("matrix.csv"),
        "pattern,mode,family,time_to_target_s,vs_baseline\n\
         none,ps/bsp,ps,1.0,1.0\nnone,ps/asp,ps,0.8,0.8\n\
         slow,ps/bsp,ps,2.0,1.0\nslow,ps/asp,ps,,\n",
    )
    .unwrap();
    if ranking {
        std::fs::write(
            d.join("ranking.csv"),
            "pattern,rank,mode,vs_baseline_median,seeds_reached,seeds_compared,seeds_run\n\
             none,1,ps/asp,0.75,3,3,3\nnone,2,ps/bsp,1.0,3,3,3\n\
             slow,1,ps/bsp,1.0,3,3,3\nslow,2,ps/asp,,1,3,3\n",
        )
        .unwrap();
    }
    std::fs::write(
        d.join("claims.csv"),
        "claim_id,statement,paper_value,measured_value,verdict\n",
    )
    .unwrap();
    d
}

#[test]
fn the_heatmap_is_drawn_from_the_rankings_medians() {
    let r = tmpdir("heatmap");
    let d = mode_matrix(&r, true);
    let o = figures(&r, &["render", "--figure", "mode-matrix"]);
    assert!(o.status.success(), "{}", text(&o));
    let svg = std::fs::read_to_string(d.join("mode-matrix.svg")).unwrap();
    assert!(
        svg.contains("median over 3 seeds"),
        "the title counts the run's seeds"
    );
    // 0.75 is ranking.csv's median; the first seed's matrix.csv says 0.8
    assert!(svg.contains("0.75"), "the median is drawn");
    assert!(d.join("mode-matrix.png").is_file());
}

#[test]
fn a_missing_ranking_is_named() {
    let r = tmpdir("no-ranking");
    mode_matrix(&r, false);
    let o = figures(&r, &["render", "--figure", "mode-matrix"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("ranking.csv"), "{}", text(&o));
}

#[test]
fn an_empty_results_folder_and_an_unknown_figure_are_refused() {
    let r = tmpdir("empty");
    let o = figures(&r, &["render"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("no results found under"), "{}", text(&o));
    let o = figures(&r, &["render", "--figure", "no-such-fig"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("unknown figure 'no-such-fig'"),
        "{}",
        text(&o)
    );
}
