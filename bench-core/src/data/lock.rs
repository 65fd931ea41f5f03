//! `datasets.lock`: the datasets the papers use, where to get them and how to check them.

use crate::error::{CoreError, Result};
use std::path::{Path, PathBuf};

/// How a downloaded file is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checksum {
    /// SHA-256, lowercase hex.
    Sha256(String),
    /// MD5, lowercase hex (only where that is all the publisher gives).
    Md5(String),
    /// No published checksum yet: `pin` records one after a download.
    Unpinned,
}

impl Checksum {
    /// Parses `sha256:<64 hex>`, `md5:<32 hex>` or `unpinned`.
    ///
    /// # Errors
    /// [`CoreError::Config`] describing what is wrong with `s`.
    pub fn parse(s: &str) -> Result<Self> {
        let hex = |h: &str, len: usize, algo: &str| {
            if h.len() == len && h.bytes().all(|b| b.is_ascii_hexdigit()) {
                Ok(h.to_ascii_lowercase())
            } else {
                Err(CoreError::Config(format!(
                    "checksum '{s}': {algo} needs {len} hex digits"
                )))
            }
        };
        if s == "unpinned" {
            Ok(Checksum::Unpinned)
        } else if let Some(h) = s.strip_prefix("sha256:") {
            Ok(Checksum::Sha256(hex(h, 64, "sha256")?))
        } else if let Some(h) = s.strip_prefix("md5:") {
            Ok(Checksum::Md5(hex(h, 32, "md5")?))
        } else {
            Err(CoreError::Config(format!(
                "checksum '{s}': expected sha256:<hex>, md5:<hex> or unpinned"
            )))
        }
    }

    /// The lock-file spelling.
    pub fn label(&self) -> String {
        match self {
            Checksum::Sha256(h) => format!("sha256:{h}"),
            Checksum::Md5(h) => format!("md5:{h}"),
            Checksum::Unpinned => "unpinned".into(),
        }
    }
}

/// How a downloaded file is packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// Used as downloaded.
    None,
    /// bzip2.
    Bz2,
    /// xz.
    Xz,
    /// gzip.
    Gz,
    /// A gzip-compressed tar archive.
    TarGz,
    /// A zip archive.
    Zip,
}

impl Compression {
    /// Parses the lock-file spelling.
    ///
    /// # Errors
    /// [`CoreError::Config`] for an unknown kind.
    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "none" => Compression::None,
            "bz2" => Compression::Bz2,
            "xz" => Compression::Xz,
            "gz" => Compression::Gz,
            "tar.gz" => Compression::TarGz,
            "zip" => Compression::Zip,
            other => {
                return Err(CoreError::Config(format!(
                    "compression '{other}': expected none, bz2, xz, gz, tar.gz or zip"
                )))
            }
        })
    }
}

/// One dataset of the lock file.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetEntry {
    /// Name experiments use.
    pub name: String,
    /// Download address.
    pub url: String,
    /// Size of the download in bytes, if published.
    pub bytes: Option<u64>,
    /// Expected checksum of the download.
    pub checksum: Checksum,
    /// Packing of the download.
    pub compression: Compression,
    /// File format after unpacking.
    pub format: String,
    /// Rows (examples, ratings, documents), if known.
    pub rows: Option<u64>,
    /// Features (columns, words), if known.
    pub features: Option<u64>,
    /// Non-zeros, if known.
    pub nnz: Option<u64>,
    /// Classes, if a classification set.
    pub classes: Option<u64>,
    /// Where it comes from.
    pub source: String,
    /// Terms of use.
    pub licence: String,
    /// Experiments that use it.
    pub used_by: Vec<String>,
}

impl DatasetEntry {
    /// File name of the download (the last segment of the URL).
    pub fn file_name(&self) -> &str {
        self.url.rsplit('/').next().unwrap_or(&self.name)
    }
}

/// The parsed lock file.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetLock {
    /// Where it was read from (for messages and `pin`).
    pub path: PathBuf,
    /// Entries in file order.
    pub entries: Vec<DatasetEntry>,
}

impl DatasetLock {
    /// Reads and checks a lock file.
    ///
    /// # Errors
    /// [`CoreError::Io`] when unreadable; [`CoreError::Config`] naming the file, the entry and
    /// the field for invalid TOML, a missing or mistyped field, or a duplicate name.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| CoreError::io(path, e))?;
        Self::parse(&text, path)
    }

    /// Parses lock-file text; `path` names it in messages.
    ///
    /// # Errors
    /// As [`DatasetLock::read`].
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let at = |m: String| CoreError::Config(format!("{}: {m}", path.display()));
        let doc: toml::Table = toml::from_str(text).map_err(|e| at(e.to_string()))?;
        for key in doc.keys() {
            if key != "dataset" {
                return Err(at(format!(
                    "unknown top-level key '{key}' (expected [[dataset]] tables)"
                )));
            }
        }
        let tables = match doc.get("dataset") {
            None => Vec::new(),
            Some(toml::Value::Array(a)) => a.clone(),
            Some(_) => {
                return Err(at(
                    "'dataset' must be an array of tables ([[dataset]])".into()
                ))
            }
        };
        let mut entries: Vec<DatasetEntry> = Vec::new();
        for (i, t) in tables.iter().enumerate() {
            let t = t
                .as_table()
                .ok_or_else(|| at(format!("dataset #{} is not a table", i + 1)))?;
            let label = t
                .get("name")
                .and_then(|v| v.as_str())
                .map_or(format!("dataset #{}", i + 1), |n| format!("dataset '{n}'"));
            let e = entry(t).map_err(|m| at(format!("{label}: {m}")))?;
            if entries.iter().any(|x| x.name == e.name) {
                return Err(at(format!("{label}: the name appears twice")));
            }
            entries.push(e);
        }
        Ok(DatasetLock {
            path: path.to_path_buf(),
            entries,
        })
    }

    /// The entry named `name`.
    ///
    /// # Errors
    /// [`CoreError::Config`] for an unknown name, listing the known ones.
    pub fn get(&self, name: &str) -> Result<&DatasetEntry> {
        self.entries.iter().find(|e| e.name == name).ok_or_else(|| {
            CoreError::Config(format!(
                "unknown dataset '{name}' in {} (known: {})",
                self.path.display(),
                self.entries
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }
}

const KNOWN: &[&str] = &[
    "name",
    "url",
    "bytes",
    "checksum",
    "compression",
    "format",
    "rows",
    "features",
    "nnz",
    "classes",
    "source",
    "licence",
    "used_by",
];

fn entry(t: &toml::Table) -> std::result::Result<DatasetEntry, String> {
    if let Some(k) = t.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(format!("unknown field '{k}'"));
    }
    let s = |k: &str| -> std::result::Result<String, String> {
        match t.get(k) {
            Some(toml::Value::String(v)) if !v.is_empty() => Ok(v.clone()),
            Some(_) => Err(format!("field '{k}' must be a non-empty string")),
            None => Err(format!("missing field '{k}'")),
        }
    };
    let n = |k: &str| -> std::result::Result<Option<u64>, String> {
        match t.get(k) {
            None => Ok(None),
            Some(toml::Value::Integer(v)) if *v >= 0 => Ok(Some(*v as u64)),
            Some(_) => Err(format!("field '{k}' must be a non-negative integer")),
        }
    };
    let bytes = match t.get("bytes") {
        Some(toml::Value::Integer(v)) if *v > 0 => Some(*v as u64),
        Some(toml::Value::String(v)) if v == "unknown" => None,
        Some(_) => return Err("field 'bytes' must be a positive integer or \"unknown\"".into()),
        None => return Err("missing field 'bytes'".into()),
    };
    let url = s("url")?;
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Err(format!("url '{url}' is not http(s)"));
    }
    let used_by = match t.get("used_by") {
        None => Vec::new(),
        Some(toml::Value::Array(a)) => a
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or("field 'used_by' must list strings")?,
        Some(_) => return Err("field 'used_by' must be an array of strings".into()),
    };
    Ok(DatasetEntry {
        name: s("name")?,
        url,
        bytes,
        checksum: Checksum::parse(&s("checksum")?).map_err(|e| e.to_string())?,
        compression: Compression::parse(&s("compression")?).map_err(|e| e.to_string())?,
        format: s("format")?,
        rows: n("rows")?,
        features: n("features")?,
        nnz: n("nnz")?,
        classes: n("classes")?,
        source: s("source")?,
        licence: s("licence")?,
        used_by,
    })
}

/// `text` with the checksum of entry `name` set to `sha256` (lowercase hex), everything else
/// (comments, order, spacing) untouched.
///
/// # Errors
/// [`CoreError::Config`] when the entry is unknown, already pinned (a pinned checksum is never
/// overwritten), or its checksum line cannot be found.
pub fn pin_in_text(text: &str, path: &Path, name: &str, sha256: &str) -> Result<String> {
    let lock = DatasetLock::parse(text, path)?;
    let entry = lock.get(name)?;
    if entry.checksum != Checksum::Unpinned {
        return Err(CoreError::Config(format!(
            "dataset '{name}' is already pinned to {} in {}: pin never overwrites a checksum (edit the file by hand if the publisher changed it)",
            entry.checksum.label(),
            path.display()
        )));
    }
    let mut out = String::with_capacity(text.len() + 80);
    let (mut in_entry, mut done) = (false, false);
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with("[[") {
            in_entry = false;
        }
        if let Some(v) = trimmed.strip_prefix("name") {
            let v = v.trim_start();
            if let Some(v) = v.strip_prefix('=') {
                in_entry = v.trim().trim_matches('"') == name;
            }
        }
        if in_entry && !done && trimmed.starts_with("checksum") && trimmed.contains("\"unpinned\"")
        {
            out.push_str(&line.replacen("\"unpinned\"", &format!("\"sha256:{sha256}\""), 1));
            done = true;
            continue;
        }
        out.push_str(line);
    }
    if !done {
        return Err(CoreError::Config(format!(
            "dataset '{name}' in {}: no `checksum = \"unpinned\"` line to replace",
            path.display()
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = r#"
# a comment
[[dataset]]
name = "a"
url = "http://example.org/a.bz2"
bytes = "unknown"
checksum = "unpinned"   # until pinned
compression = "bz2"
format = "libsvm"
rows = 3
source = "s"
licence = "l"

[[dataset]]
name = "b"
url = "https://example.org/b.tar.gz"
bytes = 10
checksum = "sha256:C4A38C50A1BC5F3A1C5537F2155AB9D68F9F25EB1ED8D9DDDA3DB29A59BCA1DD"
compression = "tar.gz"
format = "cifar-binary"
source = "s"
licence = "l"
used_by = ["x"]
"#;

    #[test]
    fn parses_entries_and_normalises_hex() {
        let l = DatasetLock::parse(ONE, Path::new("t.lock")).unwrap();
        assert_eq!(l.entries.len(), 2);
        assert_eq!(l.get("a").unwrap().bytes, None);
        assert_eq!(l.get("a").unwrap().rows, Some(3));
        assert_eq!(l.get("a").unwrap().file_name(), "a.bz2");
        let b = l.get("b").unwrap();
        assert_eq!(b.compression, Compression::TarGz);
        assert!(matches!(&b.checksum, Checksum::Sha256(h) if h.starts_with("c4a38c")));
        let e = l.get("zzz").unwrap_err().to_string();
        assert!(
            e.contains("unknown dataset 'zzz'") && e.contains("a, b"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_or_bad_field_names_entry_and_field() {
        for (bad, want) in [
            (
                ONE.replace("licence = \"l\"\n\n", "\n"),
                "dataset 'a': missing field 'licence'",
            ),
            (
                ONE.replace("bytes = 10", "bytes = -1"),
                "dataset 'b': field 'bytes'",
            ),
            (ONE.replace("\"bz2\"", "\"rar\""), "compression 'rar'"),
            (
                ONE.replace("sha256:C4", "sha256:Z4"),
                "sha256 needs 64 hex digits",
            ),
            (ONE.replace("rows = 3", "rowz = 3"), "unknown field 'rowz'"),
            (ONE.replace("name = \"b\"", "name = \"a\""), "appears twice"),
            (
                ONE.replace("http://example", "ftp://example"),
                "is not http(s)",
            ),
        ] {
            let e = DatasetLock::parse(&bad, Path::new("t.lock"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("t.lock") && e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn pin_replaces_only_the_unpinned_checksum_and_refuses_to_overwrite() {
        let h = "ab".repeat(32);
        let out = pin_in_text(ONE, Path::new("t.lock"), "a", &h).unwrap();
        assert!(out.contains(&format!("checksum = \"sha256:{h}\"   # until pinned")));
        assert!(out.contains("# a comment"));
        assert_eq!(
            out.len(),
            ONE.len() + "sha256:".len() + 64 - "unpinned".len()
        );
        let l = DatasetLock::parse(&out, Path::new("t.lock")).unwrap();
        assert_eq!(l.get("a").unwrap().checksum, Checksum::Sha256(h.clone()));
        let e = pin_in_text(&out, Path::new("t.lock"), "a", &h).unwrap_err();
        assert!(e.to_string().contains("already pinned"), "{e}");
        assert!(pin_in_text(ONE, Path::new("t.lock"), "b", &h).is_err());
    }

    #[test]
    fn the_repository_lock_parses() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets.lock");
        let l = DatasetLock::read(&path).unwrap();
        assert!(l.entries.len() >= 17, "{}", l.entries.len());
        for name in [
            "rcv1-full",
            "cifar-10-binary",
            "movielens-20m",
            "nytimes-docword",
            "mnist8m",
        ] {
            assert!(l.get(name).is_ok(), "{name}");
        }
        assert_eq!(
            l.get("cifar-100-binary").unwrap().checksum.label(),
            "sha256:58a81ae192c23a4be8b1804d68e518ed807d710a4eb253b1f2a199162a40d8ec"
        );
    }
}
