//! The crate's layering, checked from its imports: every `crate::<module>` path in a module's
//! code (comments aside) names a module of a lower layer (or the module itself). Drivers and
//! workloads meet only in `learning`; the sans-IO protocols import no driver.

use std::collections::BTreeMap;
use std::path::Path;

/// Layers, lowest first; a module may use modules of its own or an earlier layer.
const LAYERS: &[&[&str]] = &[
    &["error", "fuzz", "node_id"],
    &["topology", "transport", "straggler", "claims"],
    &["protocol"],
    &["metrics", "learning"],
    &["data"],
    &["workload"],
    &["driver"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// `crate::name` paths in `text`, outside comments.
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `bench_core::crate::` cannot occur; `$crate::` in macros is not a module path.
            let before = &rest[..i];
            if !name.is_empty() && !before.ends_with('$') && !before.ends_with("bench_") {
                out.push(name);
            }
            rest = after;
        }
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_imports_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut upward: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut checked = 0;
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src");
        let top = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("utf-8 path")
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" {
            continue;
        }
        let Some(mine) = layer_of(&top) else {
            panic!("module {top} ({}) has no layer in LAYERS", rel.display());
        };
        let text = std::fs::read_to_string(file).expect("readable source");
        for used in crate_paths(&text) {
            // `crate::Result`, `crate::CoreError`, `crate::NodeId`: the root's re-exports of
            // the lowest layer.
            if used.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                continue;
            }
            checked += 1;
            match layer_of(&used) {
                Some(theirs) if theirs <= mine => {}
                Some(_) => upward
                    .entry(format!("{} ({top})", rel.display()))
                    .or_default()
                    .push(used),
                None => panic!(
                    "{} uses crate::{used}, a module with no layer",
                    rel.display()
                ),
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} crate paths seen: is the scan broken?"
    );
    assert!(
        upward.is_empty(),
        "imports from a lower layer to a higher one: {upward:#?}"
    );
}

#[test]
fn the_scan_sees_paths_and_skips_comments() {
    let text = "use crate::driver::sim;\n// crate::workload in a comment\nlet x = crate::learning::Payload; // crate::data\n";
    assert_eq!(crate_paths(text), ["driver", "learning"]);
}
