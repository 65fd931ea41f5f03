//! The files a run read beside its configuration and datasets, named with their SHA-256 in
//! `manifest.json` (`inputs`): a straggler trace replayed by path
//! (`[stragglers] trace = { path = ... }`) is recorded by its bytes, so that a result cannot be
//! confused with one from an edited trace of the same name.

use std::path::Path;

/// One input of `config` (the resolved configuration, as written to the manifest): every
/// `trace` object's `path`, each once, with its size and SHA-256, or why it has none (a trace
/// recorded in the same process is named, not read).
pub fn inputs(config: &serde_json::Value) -> Vec<serde_json::Value> {
    let mut paths = Vec::new();
    walk(config, &mut paths);
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .map(|p| match bench_core::data::digest_file(Path::new(&p)) {
            Ok(d) => serde_json::json!({
                "what": "straggler trace",
                "path": p,
                "bytes": d.bytes,
                "sha256": d.sha256,
            }),
            Err(_) => serde_json::json!({
                "what": "straggler trace",
                "path": p,
                "sha256": serde_json::Value::Null,
                "note": "not a file here: a trace recorded in this run, named only",
            }),
        })
        .collect()
}

fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(t) => {
            for (k, v) in t {
                if k == "trace" {
                    if let Some(p) = v.get("path").and_then(|p| p.as_str()) {
                        out.push(p.to_string());
                        continue;
                    }
                }
                walk(v, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_by_path_is_named_with_its_sha256() {
        let dir = std::env::temp_dir().join(format!("syncbench-inputs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("trace.csv");
        let text = "worker,iter,compute_ns,wait_ns\n0,0,1,0\n";
        std::fs::write(&file, text).unwrap();
        let path = file.display().to_string();
        let config = serde_json::json!({
            "parts": [{"stragglers": {"trace": {"path": path, "unit_ns": null}}}],
            "other": {"stragglers": {"trace": {"path": path}}},
            "recorded": {"trace": {"path": "ps-modes/trace.csv (recorded)"}},
        });
        let got = inputs(&config);
        assert_eq!(got.len(), 2, "{got:?}");
        let by_path = got.iter().find(|i| i["path"] == path.as_str()).unwrap();
        assert_eq!(by_path["bytes"], text.len() as u64);
        assert_eq!(
            by_path["sha256"],
            bench_core::data::digest_file(&file)
                .unwrap()
                .sha256
                .as_str()
        );
        let named = got.iter().find(|i| i["sha256"].is_null()).unwrap();
        assert!(named["note"].as_str().unwrap().contains("named only"));
        assert!(inputs(&serde_json::json!({"stragglers": {"kind": "none"}})).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
