//! The crate's rooms and their order, checked from its imports (as bench-core's `tests/layers.rs`
//! checks bench-core's): every `crate::<room>` path in a file (comments aside) names its own room
//! or an earlier one, and no files import each other, directly or around a circle. The order:
//! harness < judge < workloads < runs < papers, studies < tools.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Rooms, lowest first; a file may use its own room or an earlier one.
const ROOMS: &[&[&str]] = &[
    &["harness"],
    &["judge"],
    &["workloads"],
    &["runs"],
    &["papers", "studies"],
    &["tools"],
];

fn room_rank(room: &str) -> Option<usize> {
    ROOMS.iter().position(|r| r.contains(&room))
}

/// The module paths (`workloads::lda::LdaPart`, `r#` dropped) that `text` names after
/// `crate::`, outside comments; one level of `{a, b::c}` groups is expanded.
fn crate_paths(text: &str) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '#' || c == ':';
    let mut out = Vec::new();
    // A `use` may span lines: join each statement's lines before scanning.
    let code: String = text
        .lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join(" ");
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        let before = &rest[..i];
        let after = &rest[i + "crate::".len()..];
        rest = after;
        if before.ends_with('$') {
            continue; // `$crate::` in a macro is not a module path
        }
        let raw: String = after.chars().take_while(|&c| ident(c)).collect();
        let head = raw.trim_end_matches(':').replace("r#", "");
        let group = after[raw.len()..].strip_prefix('{');
        match group {
            Some(group) if raw.is_empty() || raw.ends_with("::") => {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                for item in group.split(',') {
                    let item = item.split_whitespace().next().unwrap_or("");
                    let item = item.replace("r#", "");
                    if item.is_empty() || item == "self" {
                        out.push(head.clone());
                    } else if head.is_empty() {
                        out.push(item);
                    } else {
                        out.push(format!("{head}::{item}"));
                    }
                }
            }
            _ if !head.is_empty() => out.push(head),
            _ => {}
        }
    }
    out
}

/// A file's module path from its path under src/ (`workloads/lda.rs` -> `workloads::lda`,
/// `studies/sim_validation/mod.rs` -> `studies::sim_validation`).
fn module_of(rel: &Path) -> String {
    let s = rel.to_str().expect("utf-8 path").trim_end_matches(".rs");
    let s = s.strip_suffix("/mod").unwrap_or(s);
    s.replace('/', "::")
}

/// What is wrong with these files' imports: a path to a later room, a room with no rank, or
/// the files of an import circle. `files` maps module paths to source text.
fn violations(files: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut edges: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in files {
        let room = module.split("::").next().expect("non-empty");
        let Some(mine) = room_rank(room) else {
            out.push(format!("{module}: room {room} has no place in ROOMS"));
            continue;
        };
        for path in crate_paths(text) {
            // `crate::CommonArgs`, `crate::ExperimentOutput`: the root's re-exports of harness.
            let used_room = if path.starts_with(|c: char| c.is_ascii_uppercase()) {
                "harness"
            } else {
                path.split("::").next().expect("non-empty")
            };
            match room_rank(used_room) {
                Some(theirs) if theirs <= mine => {}
                Some(_) => out.push(format!("{module} uses crate::{path}, a later room")),
                None => out.push(format!("{module} uses crate::{path}, a room with no place")),
            }
            // The longest prefix of the path that is a file of its own.
            let segments: Vec<&str> = path.split("::").collect();
            let target = (1..=segments.len())
                .rev()
                .map(|n| segments[..n].join("::"))
                .find(|m| files.contains_key(m));
            if let Some(t) = target.filter(|t| t != module) {
                edges.entry(module).or_default().insert(t);
            }
        }
    }
    // Circles: a depth-first search that meets a file still on its stack.
    fn visit<'a>(
        m: &'a str,
        edges: &'a BTreeMap<&str, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
        out: &mut Vec<String>,
    ) {
        state.insert(m, 1);
        stack.push(m);
        for next in edges.get(m).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|s| s == next).expect("on stack");
                    let mut circle: Vec<&str> = stack[from..].to_vec();
                    circle.push(next);
                    out.push(format!("import circle: {}", circle.join(" -> ")));
                }
                Some(_) => {}
                None => visit(next, edges, state, stack, out),
            }
        }
        stack.pop();
        state.insert(m, 2);
    }
    let mut state = BTreeMap::new();
    for m in files.keys() {
        if !state.contains_key(m.as_str()) {
            visit(m, &edges, &mut state, &mut Vec::new(), &mut out);
        }
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The library's files (lib.rs and the bin shims aside) by module path.
fn library() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    sources(&src, &mut paths);
    let mut files = BTreeMap::new();
    for p in paths {
        let rel = p.strip_prefix(&src).expect("under src");
        if rel == Path::new("lib.rs") || rel.starts_with("bin") {
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("readable source");
        files.insert(module_of(rel), text);
    }
    files
}

#[test]
fn every_file_imports_its_own_room_or_an_earlier_one_and_no_circle() {
    let files = library();
    assert!(files.len() > 60, "found only {} source files", files.len());
    let seen: usize = files.values().map(|t| crate_paths(t).len()).sum();
    assert!(
        seen > 200,
        "only {seen} crate paths seen: is the scan broken?"
    );
    let found = violations(&files);
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_check_finds_an_injected_circle_and_an_upward_import() {
    let mut files = library();
    assert!(violations(&files).is_empty());
    // workloads::svm -> judge::reference (allowed); make reference use svm back... within rooms
    // that would be upward, so inject a circle inside one room instead: lda <-> mf.
    files
        .get_mut("workloads::lda")
        .expect("lda")
        .push_str("\nuse crate::workloads::mf::EsspConfig;\n");
    let found = violations(&files);
    assert!(
        found.iter().any(|v| v.starts_with("import circle:")
            && v.contains("workloads::lda")
            && v.contains("workloads::mf")),
        "{found:#?}"
    );
    files
        .get_mut("harness::output")
        .expect("output")
        .push_str("\nfn f() { crate::judge::format::show(None); }\n");
    let found = violations(&files);
    assert!(
        found
            .iter()
            .any(|v| v == "harness::output uses crate::judge::format::show, a later room"),
        "{found:#?}"
    );
}

#[test]
fn the_scan_reads_paths_groups_and_skips_comments() {
    let text = "use crate::workloads::svm;\n// crate::tools in a comment\nuse crate::papers::r#async::{cds::Cds, fig3_4};\nlet x = crate::judge::format::show(None); // crate::runs\nuse crate::{CommonArgs, harness::cli};\n";
    assert_eq!(
        crate_paths(text),
        [
            "workloads::svm",
            "papers::async::cds::Cds",
            "papers::async::fig3_4",
            "judge::format::show",
            "CommonArgs",
            "harness::cli"
        ]
    );
}
