//! Every figure of the catalogue rendered from a fixed small results set and its layout checked
//! from the SVG (`figures check-layout`): no text outside the canvas, no two texts overlapping,
//! each series in one colour in every panel. The set (`tests/fixtures/results/`) is a quick
//! run's data CSVs, each thinned to at most 120 rows (`scripts/layout-fixture.sh` makes it
//! again from a results folder). And the check fails, naming what it found, on a figure
//! whose labels overlap.

use std::path::{Path, PathBuf};

mod common;

use common::{figures, text};

fn tmpdir(tag: &str) -> PathBuf {
    common::tmpdir("layout", tag)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// The catalogue's figure ids (experiments/figures.tsv, the list the Makefile reads).
fn catalogue() -> Vec<String> {
    include_str!("../../experiments/figures.tsv")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split('\t').next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn every_figure_renders_from_the_fixture_without_layout_defects() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let out = tmpdir("all");
    copy_dir(&fixture, &out);
    let ids = catalogue();
    for id in &ids {
        assert!(
            out.join(id).join("claims.csv").exists(),
            "the fixture has no results for {id} (scripts/layout-fixture.sh)"
        );
    }
    let o = figures(&out, &["render"]);
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    assert!(!said.contains("warning"), "{said}");
    for id in &ids {
        assert!(
            out.join(id).join(format!("{id}.png")).exists(),
            "{id}: {said}"
        );
    }
    let o = figures(&out, &["check-layout"]);
    let said = text(&o);
    assert!(o.status.success(), "{said}");
    assert!(
        said.contains(&format!("{} figures: no layout defects", ids.len())),
        "{said}"
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn the_check_names_overlapping_labels_and_fails() {
    let out = tmpdir("overlap");
    let dir = out.join("hop-table1");
    std::fs::create_dir_all(&dir).unwrap();
    // Two category labels a few pixels apart, as hop-table1's were before they were fitted.
    let label = |x: i32, t: &str| {
        format!(
            "<text x=\"{x}\" y=\"380\" dy=\"0.76em\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"9.67741935483871\" opacity=\"1\" fill=\"#000000\">\n{t}\n</text>\n"
        )
    };
    std::fs::write(
        dir.join("hop-table1.svg"),
        format!(
            "<svg width=\"560\" height=\"400\" viewBox=\"0 0 560 400\" xmlns=\"http://www.w3.org/2000/svg\">\n{}{}</svg>\n",
            label(400, "standard+tokens2"),
            label(450, "staleness2+tokens2")
        ),
    )
    .unwrap();
    let o = figures(&out, &["check-layout"]);
    let said = text(&o);
    assert!(!o.status.success(), "{said}");
    assert!(
        said.contains("hop-table1: texts 'standard+tokens2' and 'staleness2+tokens2' overlap"),
        "{said}"
    );
    assert!(
        said.contains("layout check failed: 1 defect(s) in 1 figure(s) checked"),
        "{said}"
    );
    // Nothing rendered: said so.
    let empty = tmpdir("empty");
    let o = figures(&empty, &["check-layout"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("no rendered figures under"),
        "{}",
        text(&o)
    );
    for d in [out, empty] {
        std::fs::remove_dir_all(d).unwrap();
    }
}
