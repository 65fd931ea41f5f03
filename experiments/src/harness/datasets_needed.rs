//! The datasets a `--data real` run reads, checked before its first seed starts: every one that
//! is not fetched and verified is named in one error, with the one command that fetches them
//! all, rather than the first one a seed happens to open (prefixed by that seed).

use anyhow::{Context, Result};
use bench_core::data::{DatasetCache, DatasetLock};

/// The dataset names a configuration reads with real data, sorted, each once: the string value of every `dataset` key, except under a `data` table whose sibling
/// `cnn` table is present (the SVM's data, unused while the CNN trains: `runs::peers`, Hop's
/// CNN halves).
pub fn names(config: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(config, &mut out);
    out.sort();
    out
}

fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(t) => {
            // An absent CNN serialises as `"cnn": null`.
            let cnn = t.get("cnn").is_some_and(|c| !c.is_null());
            for (k, v) in t {
                match (k.as_str(), v) {
                    ("dataset", serde_json::Value::String(name)) => {
                        if !out.contains(name) {
                            out.push(name.clone());
                        }
                    }
                    ("data", _) if cnn => {}
                    _ => walk(v, out),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
        _ => {}
    }
}

/// Checks that every dataset of `names` is in the lock and fetched and verified in the cache.
///
/// # Errors
/// One error naming every dataset that is not, each with its reason, and the command that
/// fetches those missing from the cache.
pub fn check(names: &[String]) -> Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    let lock_path = crate::harness::data_source::lock_path(None);
    let lock = DatasetLock::read(&lock_path)
        .with_context(|| format!("--data real reads datasets of {}", lock_path.display()))?;
    let cache = DatasetCache::from_env()?;
    let mut unfetched = Vec::new();
    let mut other = Vec::new();
    for name in names {
        match lock.get(name) {
            Err(e) => other.push(format!("{name}: {e}")),
            // One read of the cache: path() is what a seed would open, and its error says why.
            Ok(entry) => match cache.path(entry) {
                Ok(_) => {}
                Err(_) if cache.status(entry) == bench_core::data::CacheStatus::Missing => {
                    unfetched.push(name.clone())
                }
                Err(e) => other.push(format!("{name}: {e}")),
            },
        }
    }
    if unfetched.is_empty() && other.is_empty() {
        return Ok(());
    }
    let mut parts = Vec::new();
    if !unfetched.is_empty() {
        parts.push(format!(
            "{} not in the cache at {} (run `syncbench datasets fetch {}`)",
            unfetched.join(", "),
            cache.root().display(),
            unfetched.join(" ")
        ));
    }
    parts.extend(other.iter().cloned());
    anyhow::bail!(
        "--data real: {} of the {} datasets this configuration reads cannot be read: {}",
        unfetched.len() + other.len(),
        names.len(),
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dataset_key_once_but_not_the_svm_data_beside_a_cnn() {
        let json = |text: &str| {
            let v: toml::Value = toml::from_str(text).unwrap();
            serde_json::to_value(v).unwrap()
        };
        let v = json(
            r#"
[common.data]
dataset = "webspam-unigram"
[common.cnn.images]
dataset = "cifar-10-binary"
[[runs]]
dataset = "rcv1-train"
[[runs]]
dataset = "cifar-10-binary"
[other.data]
dataset = "movielens-20m"
"#,
        );
        assert_eq!(
            names(&v),
            ["cifar-10-binary", "movielens-20m", "rcv1-train"],
            "webspam-unigram sits beside a cnn table: unused"
        );
        assert!(names(&json("[images]\nsize = 3\n")).is_empty());
        // The configuration serialised: an absent CNN is null, and the SVM's data is read.
        let v = serde_json::json!({"common": {"cnn": null, "data": {"dataset": "rcv1-train"}}});
        assert_eq!(names(&v), ["rcv1-train"]);
    }
}
