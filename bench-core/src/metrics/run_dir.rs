//! A results directory written under a hidden temporary name and renamed into place only when
//! every file is complete, so an interrupted or failed run leaves no partial results and a
//! previous complete run at the same path stays intact until the new one is whole.

use crate::error::{CoreError, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A run directory under construction.
#[derive(Debug)]
pub struct RunDir {
    final_path: PathBuf,
    tmp_path: PathBuf,
    committed: bool,
}

impl RunDir {
    /// Starts a run directory that will become `final_path`.
    ///
    /// # Errors
    /// [`CoreError::Io`] when the parent cannot be created.
    pub fn create(final_path: impl Into<PathBuf>) -> Result<Self> {
        let final_path = final_path.into();
        let parent = final_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let name = final_path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| "run".into());
        std::fs::create_dir_all(&parent).map_err(|e| CoreError::io(&parent, e))?;
        let tmp_path = parent.join(format!(".{name}.partial-{}", std::process::id()));
        if tmp_path.exists() {
            std::fs::remove_dir_all(&tmp_path).map_err(|e| CoreError::io(&tmp_path, e))?;
        }
        std::fs::create_dir_all(&tmp_path).map_err(|e| CoreError::io(&tmp_path, e))?;
        Ok(RunDir {
            final_path,
            tmp_path,
            committed: false,
        })
    }

    /// Where the directory will be once committed.
    pub fn final_path(&self) -> &Path {
        &self.final_path
    }

    /// Path of `name` (which may contain `/`) inside the directory, parents created.
    fn path_for(&self, name: &str) -> Result<PathBuf> {
        let path = self.tmp_path.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| CoreError::io(parent, e))?;
        }
        Ok(path)
    }

    /// Writes `rows` as CSV to `name` inside the run directory.
    ///
    /// # Errors
    /// [`CoreError::Csv`] or [`CoreError::Io`] naming the file.
    pub fn write_csv<T: Serialize>(&self, name: &str, rows: &[T]) -> Result<()> {
        let path = self.path_for(name)?;
        let mut w = csv::Writer::from_path(&path).map_err(|source| CoreError::Csv {
            path: path.clone(),
            source,
        })?;
        for r in rows {
            w.serialize(r).map_err(|source| CoreError::Csv {
                path: path.clone(),
                source,
            })?;
        }
        w.flush().map_err(|e| CoreError::io(&path, e))?;
        Ok(())
    }

    /// Writes `value` as pretty JSON to `name`.
    ///
    /// # Errors
    /// [`CoreError::Io`] naming the file.
    pub fn write_json<T: Serialize>(&self, name: &str, value: &T) -> Result<()> {
        let path = self.path_for(name)?;
        let text = serde_json::to_string_pretty(value)?;
        std::fs::write(&path, text + "\n").map_err(|e| CoreError::io(&path, e))
    }

    /// Writes raw bytes to `name`.
    ///
    /// # Errors
    /// [`CoreError::Io`] naming the file.
    pub fn write_bytes(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let path = self.path_for(name)?;
        std::fs::write(&path, bytes).map_err(|e| CoreError::io(&path, e))
    }

    /// Moves the finished directory into place, replacing an older run at the same path.
    ///
    /// # Errors
    /// [`CoreError::Io`] when a rename fails (the older run is then left where it was).
    pub fn commit(mut self) -> Result<PathBuf> {
        let old = self.final_path.with_file_name(format!(
            ".{}.old-{}",
            self.final_path
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default(),
            std::process::id()
        ));
        let had_old = self.final_path.exists();
        if had_old {
            std::fs::rename(&self.final_path, &old)
                .map_err(|e| CoreError::io(&self.final_path, e))?;
        }
        if let Err(e) = std::fs::rename(&self.tmp_path, &self.final_path) {
            if had_old {
                let _ = std::fs::rename(&old, &self.final_path);
            }
            return Err(CoreError::io(&self.final_path, e));
        }
        if had_old {
            std::fs::remove_dir_all(&old).map_err(|e| CoreError::io(&old, e))?;
        }
        self.committed = true;
        Ok(self.final_path.clone())
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.tmp_path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appears_only_on_commit_and_vanishes_on_drop() {
        let base = std::env::temp_dir().join(format!("syncbench-rundir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let target = base.join("exp").join("run");
        {
            let d = RunDir::create(&target).unwrap();
            d.write_csv("a.csv", &[(1, 2)]).unwrap();
            assert!(!target.exists());
        }
        assert!(!target.exists());
        assert_eq!(std::fs::read_dir(base.join("exp")).unwrap().count(), 0);
        let d = RunDir::create(&target).unwrap();
        d.write_json("m.json", &serde_json::json!({"x": 1}))
            .unwrap();
        d.commit().unwrap();
        assert!(target.join("m.json").exists());
        let d = RunDir::create(&target).unwrap();
        d.write_bytes("b.txt", b"new").unwrap();
        d.commit().unwrap();
        assert!(target.join("b.txt").exists() && !target.join("m.json").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
