//! What a figure's runs trained, read from its `manifest.json`: the DSSP figures train either
//! a CPU proxy (logistic regression) or real CNNs (`[cnn]` in the config), and their panels
//! must not call a CNN's accuracy a proxy's.

use std::path::Path;

/// Whether the run in `dir` trained CNNs: its manifest's config has a `cnn` section. A missing
/// or unreadable manifest counts as the proxy (the figure still draws).
pub fn trains_cnn(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|m| m["config"]["cnn"].is_object())
}

/// `(title word, y label)` for the accuracy panels of the run in `dir`.
pub fn accuracy_words(dir: &Path) -> (&'static str, &'static str) {
    if trains_cnn(dir) {
        ("CNN accuracy", "test accuracy (CNN)")
    } else {
        ("Proxy accuracy", "test accuracy (proxy)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cnn_section_in_the_manifest_names_the_cnn() {
        let dir = std::env::temp_dir().join(format!("learning-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(!trains_cnn(&dir), "no manifest: the proxy");
        std::fs::write(dir.join("manifest.json"), r#"{"config":{"svm":{}}}"#).unwrap();
        assert_eq!(accuracy_words(&dir).0, "Proxy accuracy");
        std::fs::write(
            dir.join("manifest.json"),
            r#"{"config":{"cnn":{"fc_heavy":"alexnet"}}}"#,
        )
        .unwrap();
        assert_eq!(accuracy_words(&dir).0, "CNN accuracy");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
