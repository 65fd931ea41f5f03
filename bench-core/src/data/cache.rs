//! The local dataset cache: download, verify, unpack, and hand out only verified data.
//!
//! Layout under the cache root, per dataset `NAME`:
//! * `NAME/<file>.part`: a download in progress (resumed by the next fetch);
//! * `NAME/<file>`: the complete download;
//! * `NAME/<file>.rejected`: a download whose checksum did not match, moved aside;
//! * `NAME/data/`: the unpacked files (built in `data.tmp/` and renamed when complete);
//! * `NAME/verified`: written last, holding the download's sha256; [`DatasetCache::path`]
//!   refuses any dataset without it.

use super::digest::{digest_file, FileDigest};
use super::download::download;
use super::lock::{Checksum, DatasetEntry};
use super::unpack::unpack;
use crate::error::{CoreError, Result};
use std::path::{Path, PathBuf};

/// Where a dataset stands in the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheStatus {
    /// Nothing there.
    Missing,
    /// A partial download of this many bytes.
    Partial(u64),
    /// Downloaded, not (yet) verified and unpacked.
    Downloaded,
    /// Verified and unpacked; the path experiments read.
    Ready(PathBuf),
}

impl CacheStatus {
    /// Short label for listings.
    pub fn label(&self) -> String {
        match self {
            CacheStatus::Missing => "missing".into(),
            CacheStatus::Partial(b) => format!("partial ({b} bytes)"),
            CacheStatus::Downloaded => "downloaded, not verified".into(),
            CacheStatus::Ready(_) => "ready".into(),
        }
    }
}

/// What a fetch did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchReport {
    /// Bytes of the download.
    pub bytes: u64,
    /// Bytes an earlier interrupted download had already fetched (0: fresh).
    pub resumed_from: u64,
    /// The download's digests.
    pub digest: FileDigest,
    /// True when the lock has no checksum to compare with (pin it).
    pub unpinned: bool,
    /// The path experiments read.
    pub path: PathBuf,
}

/// The dataset cache rooted at one directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetCache {
    root: PathBuf,
}

impl DatasetCache {
    /// A cache at `root`.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        DatasetCache { root: root.into() }
    }

    /// The cache the environment names: `$SYNCBENCH_DATA`, else `$XDG_CACHE_HOME/syncbench`,
    /// else `$HOME/.cache/syncbench`.
    ///
    /// # Errors
    /// [`CoreError::Config`] when none of the three variables is set.
    pub fn from_env() -> Result<Self> {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        if let Some(d) = var("SYNCBENCH_DATA") {
            return Ok(Self::at(PathBuf::from(d)));
        }
        if let Some(d) = var("XDG_CACHE_HOME") {
            return Ok(Self::at(PathBuf::from(d).join("syncbench")));
        }
        if let Some(h) = var("HOME") {
            return Ok(Self::at(PathBuf::from(h).join(".cache").join("syncbench")));
        }
        Err(CoreError::Config(
            "no dataset cache: set SYNCBENCH_DATA (or XDG_CACHE_HOME or HOME)".into(),
        ))
    }

    /// The cache root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn dir(&self, e: &DatasetEntry) -> PathBuf {
        self.root.join(&e.name)
    }

    fn download_path(&self, e: &DatasetEntry) -> PathBuf {
        self.dir(e).join(e.file_name())
    }

    fn with_suffix(p: &Path, suffix: &str) -> PathBuf {
        let mut s = p.as_os_str().to_owned();
        s.push(suffix);
        PathBuf::from(s)
    }

    fn marker(&self, e: &DatasetEntry) -> PathBuf {
        self.dir(e).join("verified")
    }

    /// Where `e` stands.
    pub fn status(&self, e: &DatasetEntry) -> CacheStatus {
        if let Ok(p) = self.path(e) {
            return CacheStatus::Ready(p);
        }
        let d = self.download_path(e);
        if d.is_file() {
            return CacheStatus::Downloaded;
        }
        match std::fs::metadata(Self::with_suffix(&d, ".part")) {
            Ok(m) => CacheStatus::Partial(m.len()),
            Err(_) => CacheStatus::Missing,
        }
    }

    /// The verified, unpacked data of `e`: the decompressed file, or the directory an archive
    /// unpacked into.
    ///
    /// # Errors
    /// [`CoreError::Dataset`] when `e` was never fetched, or its download failed verification
    /// (an experiment never reads an unverified file).
    pub fn path(&self, e: &DatasetEntry) -> Result<PathBuf> {
        let marker = self.marker(e);
        let recorded = std::fs::read_to_string(&marker).map_err(|_| CoreError::Dataset {
            name: e.name.clone(),
            message: format!(
                "not in the cache at {} (run `syncbench datasets fetch {}`)",
                self.root.display(),
                e.name
            ),
        })?;
        let mut lines = recorded.lines();
        let sha = lines.next().unwrap_or_default();
        if let Checksum::Sha256(want) = &e.checksum {
            if sha != format!("sha256:{want}") {
                return Err(CoreError::Dataset {
                    name: e.name.clone(),
                    message: format!(
                        "the cached download was verified as {sha}, but the lock now says sha256:{want}; run `syncbench datasets fetch {}` again",
                        e.name
                    ),
                });
            }
        }
        let rel = lines.next().unwrap_or("data");
        Ok(self.dir(e).join(rel))
    }

    /// Downloads (resuming a partial download), verifies against the lock's checksum and size,
    /// and unpacks `e`; a dataset already verified is left as it is.
    ///
    /// # Errors
    /// [`CoreError::Dataset`] for a failed or truncated download (the partial file is kept for
    /// resuming), a size or checksum mismatch (the file is moved aside to `<file>.rejected` and
    /// nothing is unpacked), or a corrupt archive (nothing is left under `data/`);
    /// [`CoreError::Io`] for local file errors.
    pub fn fetch(
        &self,
        e: &DatasetEntry,
        progress: &mut dyn FnMut(u64, Option<u64>),
    ) -> Result<FetchReport> {
        let dir = self.dir(e);
        std::fs::create_dir_all(&dir).map_err(|err| CoreError::io(&dir, err))?;
        let file = self.download_path(e);
        let (mut bytes, mut resumed_from) = (0, 0);
        if !file.is_file() {
            let part = Self::with_suffix(&file, ".part");
            let d = download(&e.name, &e.url, &part, progress)?;
            std::fs::rename(&part, &file).map_err(|err| CoreError::io(&file, err))?;
            bytes = d.bytes;
            resumed_from = d.resumed_from;
        }
        let digest = self.check(e, &file)?;
        if bytes == 0 {
            bytes = digest.bytes;
        }
        let path = self.unpack_verified(e, &file, &digest)?;
        Ok(FetchReport {
            bytes,
            resumed_from,
            unpinned: e.checksum == Checksum::Unpinned,
            digest,
            path,
        })
    }

    /// Re-checks the downloaded file of `e` against the lock (and unpacks it if that was not
    /// done yet).
    ///
    /// # Errors
    /// As [`DatasetCache::fetch`], and [`CoreError::Dataset`] when nothing was downloaded.
    pub fn verify(&self, e: &DatasetEntry) -> Result<FetchReport> {
        let file = self.download_path(e);
        if !file.is_file() {
            return Err(CoreError::Dataset {
                name: e.name.clone(),
                message: format!(
                    "no download at {} (run `syncbench datasets fetch {}`)",
                    file.display(),
                    e.name
                ),
            });
        }
        let _ = std::fs::remove_file(self.marker(e));
        let digest = self.check(e, &file)?;
        let path = self.unpack_verified(e, &file, &digest)?;
        Ok(FetchReport {
            bytes: digest.bytes,
            resumed_from: 0,
            unpinned: e.checksum == Checksum::Unpinned,
            digest,
            path,
        })
    }

    /// The sha256 of the complete download of `e`, for `pin`.
    ///
    /// # Errors
    /// [`CoreError::Dataset`] when nothing was downloaded.
    pub fn download_digest(&self, e: &DatasetEntry) -> Result<FileDigest> {
        let file = self.download_path(e);
        if !file.is_file() {
            return Err(CoreError::Dataset {
                name: e.name.clone(),
                message: format!(
                    "nothing to pin: no download at {} (run `syncbench datasets fetch {}`)",
                    file.display(),
                    e.name
                ),
            });
        }
        digest_file(&file)
    }

    /// Size and checksum of `file` against `e`; a mismatch moves the file aside.
    fn check(&self, e: &DatasetEntry, file: &Path) -> Result<FileDigest> {
        let digest = digest_file(file)?;
        let expected = match &e.checksum {
            Checksum::Sha256(h) => Some(("sha256", h.as_str(), digest.sha256.as_str())),
            Checksum::Md5(h) => Some(("md5", h.as_str(), digest.md5.as_str())),
            Checksum::Unpinned => None,
        };
        let size_bad = e.bytes.is_some_and(|b| b != digest.bytes);
        let sum_bad = expected.is_some_and(|(_, want, got)| want != got);
        if size_bad || sum_bad {
            let aside = Self::with_suffix(file, ".rejected");
            std::fs::rename(file, &aside).map_err(|err| CoreError::io(&aside, err))?;
            let what = match expected {
                Some((algo, want, got)) if sum_bad => {
                    format!("{algo} is {got}, the lock expects {want}")
                }
                _ => format!(
                    "it has {} bytes, the lock expects {}",
                    digest.bytes,
                    e.bytes.unwrap_or_default()
                ),
            };
            return Err(CoreError::Dataset {
                name: e.name.clone(),
                message: format!(
                    "checksum mismatch for {}: {what}; the file was moved aside to {} and will not be used (fetch again, or check the lock)",
                    e.url,
                    aside.display()
                ),
            });
        }
        Ok(digest)
    }

    /// Unpacks a verified download into `data/` (through `data.tmp/`), then writes the marker.
    fn unpack_verified(
        &self,
        e: &DatasetEntry,
        file: &Path,
        digest: &FileDigest,
    ) -> Result<PathBuf> {
        let dir = self.dir(e);
        let data = dir.join("data");
        let tmp = dir.join("data.tmp");
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(|err| CoreError::io(&tmp, err))?;
        let unpacked = match unpack(&e.name, file, e.compression, &tmp) {
            Ok(p) => p,
            Err(err) => {
                let _ = std::fs::remove_dir_all(&tmp);
                return Err(err);
            }
        };
        let rel = unpacked
            .strip_prefix(&tmp)
            .map(|r| Path::new("data").join(r))
            .unwrap_or_else(|_| PathBuf::from("data"));
        let _ = std::fs::remove_dir_all(&data);
        std::fs::rename(&tmp, &data).map_err(|err| CoreError::io(&data, err))?;
        let marker = self.marker(e);
        let rel_text = rel.to_string_lossy().trim_end_matches('/').to_string();
        let rel_text = if rel_text.is_empty() {
            "data".to_string()
        } else {
            rel_text
        };
        let body = format!("sha256:{}\n{rel_text}\n", digest.sha256);
        let tmp_marker = dir.join("verified.tmp");
        std::fs::write(&tmp_marker, body).map_err(|err| CoreError::io(&tmp_marker, err))?;
        std::fs::rename(&tmp_marker, &marker).map_err(|err| CoreError::io(&marker, err))?;
        Ok(dir.join(rel_text))
    }
}
