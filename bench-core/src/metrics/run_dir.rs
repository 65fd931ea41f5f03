//! A results directory written under a hidden temporary name and renamed into place only when
//! every file is complete, so an interrupted or failed run leaves no partial results and a
//! previous complete run at the same path stays intact until the new one is whole.
//!
//! Interrupts: every directory under construction is listed in a process-wide registry, so a
//! signal handler can remove them all ([`abandon_partials`]) before the process exits; a commit
//! in progress finishes first (both hold the registry's lock), so results are either the old
//! complete ones or the new complete ones. A process killed outright (SIGKILL, power loss)
//! leaves `.<name>.partial-<pid>` behind: the next run of the same figure removes it once no
//! process with that pid is alive, and puts back a previous result that a commit had moved
//! aside (`.<name>.old-<pid>`) when the final path is missing.

use crate::error::{CoreError, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Run directories under construction in this process: (final path, temporary path).
static LIVE: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<(PathBuf, PathBuf)>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes every run directory this process has under construction and returns their final
/// paths (what was interrupted). Meant for a signal handler about to exit the process: the
/// registry stays locked afterwards, so no commit can start, and one in progress has finished.
pub fn abandon_partials() -> Vec<PathBuf> {
    let mut guard = live();
    let mut out = Vec::new();
    for (final_path, tmp) in guard.drain(..) {
        let _ = std::fs::remove_dir_all(&tmp);
        out.push(final_path);
    }
    // Held until the process exits: nothing commits after an interrupt.
    std::mem::forget(guard);
    out
}

/// Whether a process with this id is alive on this host (unknown: assumed alive).
pub fn pid_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return true;
        };
        // SAFETY: kill with signal 0 only checks for the process; it sends nothing.
        let r = unsafe { libc::kill(pid, 0) };
        r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Leftovers of runs of `name` in `parent` whose process is gone: partial directories are
/// removed; a moved-aside previous result is put back when the final path is missing (a kill
/// between a commit's two renames), else removed. Returns what was done, for a log line.
fn sweep_stale(parent: &Path, name: &str, final_path: &Path) -> Vec<String> {
    let mut done = Vec::new();
    let Ok(entries) = std::fs::read_dir(parent) else {
        return done;
    };
    let partial = format!(".{name}.partial-");
    let old = format!(".{name}.old-");
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().to_string();
        let (is_partial, pid) = if let Some(p) = file.strip_prefix(&partial) {
            (true, p)
        } else if let Some(p) = file.strip_prefix(&old) {
            (false, p)
        } else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() || pid_alive(pid) {
            continue;
        }
        let path = e.path();
        if !is_partial && !final_path.exists() && std::fs::rename(&path, final_path).is_ok() {
            done.push(format!(
                "restored {} from {} (left by process {pid}, which is gone)",
                final_path.display(),
                path.display()
            ));
        } else if std::fs::remove_dir_all(&path).is_ok() {
            done.push(format!(
                "removed {} (left by process {pid}, which is gone)",
                path.display()
            ));
        }
    }
    done
}

/// A run directory under construction.
#[derive(Debug)]
pub struct RunDir {
    final_path: PathBuf,
    tmp_path: PathBuf,
    committed: bool,
    /// The folders above `final_path` this directory created, deepest first: a run that does
    /// not commit removes those it left empty, so a failed run leaves no empty folder behind.
    created: Vec<PathBuf>,
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
        let created: Vec<PathBuf> = parent
            .ancestors()
            .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
            .map(Path::to_path_buf)
            .collect();
        std::fs::create_dir_all(&parent).map_err(|e| CoreError::io(&parent, e))?;
        for what in sweep_stale(&parent, &name, &final_path) {
            eprintln!("results: {what}");
        }
        let tmp_path = parent.join(format!(".{name}.partial-{}", std::process::id()));
        if tmp_path.exists() {
            std::fs::remove_dir_all(&tmp_path).map_err(|e| CoreError::io(&tmp_path, e))?;
        }
        std::fs::create_dir_all(&tmp_path).map_err(|e| CoreError::io(&tmp_path, e))?;
        live().push((final_path.clone(), tmp_path.clone()));
        Ok(RunDir {
            final_path,
            tmp_path,
            committed: false,
            created,
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

    /// Reads back a CSV file written to `name` before the commit (rows by the header's names;
    /// columns the row type does not name are ignored): files made from other files of the
    /// run, such as a figure's aggregate over its seeds.
    ///
    /// # Errors
    /// [`CoreError::Csv`] naming the file when it is missing or a row does not parse.
    pub fn read_csv<T: DeserializeOwned>(&self, name: &str) -> Result<Vec<T>> {
        let path = self.tmp_path.join(name);
        let csv_err = |source| CoreError::Csv {
            path: path.clone(),
            source,
        };
        let mut r = csv::Reader::from_path(&path).map_err(csv_err)?;
        r.deserialize()
            .collect::<std::result::Result<Vec<T>, _>>()
            .map_err(csv_err)
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
        // Held through both renames: an interrupt waits until the commit is whole.
        let mut registry = live();
        registry.retain(|(_, t)| t != &self.tmp_path);
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
            registry.push((self.final_path.clone(), self.tmp_path.clone()));
            return Err(CoreError::io(&self.final_path, e));
        }
        self.committed = true;
        drop(registry);
        if had_old {
            std::fs::remove_dir_all(&old).map_err(|e| CoreError::io(&old, e))?;
        }
        Ok(self.final_path.clone())
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if !self.committed {
            let mut registry = live();
            let _ = std::fs::remove_dir_all(&self.tmp_path);
            registry.retain(|(_, t)| t != &self.tmp_path);
            // remove_dir removes only an empty folder: one another run wrote into stays.
            for dir in &self.created {
                if std::fs::remove_dir(dir).is_err() {
                    break;
                }
            }
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
        // The folders the run created above its directory went with it.
        assert!(!base.join("exp").exists());
        // A folder that was there before stays.
        std::fs::create_dir_all(base.join("exp")).unwrap();
        drop(RunDir::create(base.join("exp").join("other")).unwrap());
        assert!(base.join("exp").is_dir());
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

    #[test]
    fn a_csv_written_before_the_commit_reads_back_by_its_header() {
        #[derive(Serialize)]
        struct Row {
            name: &'static str,
            n: u32,
            extra: f64,
        }
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Named {
            n: u32,
            name: String,
        }
        let base =
            std::env::temp_dir().join(format!("syncbench-rundir-read-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let d = RunDir::create(base.join("run")).unwrap();
        let rows = [
            Row {
                name: "a",
                n: 1,
                extra: 0.5,
            },
            Row {
                name: "b",
                n: 2,
                extra: 1.5,
            },
        ];
        d.write_csv("seeds/2/x.csv", &rows).unwrap();
        let back: Vec<Named> = d.read_csv("seeds/2/x.csv").unwrap();
        assert_eq!(
            back,
            [
                Named {
                    n: 1,
                    name: "a".into()
                },
                Named {
                    n: 2,
                    name: "b".into()
                }
            ]
        );
        let missing = d.read_csv::<Named>("nope.csv").unwrap_err().to_string();
        assert!(missing.contains("nope.csv"), "{missing}");
        drop(d);
        let _ = std::fs::remove_dir_all(&base);
    }

    /// A pid that is not alive: a child that has exited and been reaped.
    fn dead_pid() -> u32 {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        assert!(!pid_alive(pid));
        pid
    }

    #[test]
    fn leftovers_of_a_dead_process_are_swept_and_a_live_ones_kept() {
        let base = std::env::temp_dir().join(format!("syncbench-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let target = base.join("fig");
        let dead = dead_pid();
        // A killed run: its partial directory, and a previous result moved aside mid-commit.
        let partial = base.join(format!(".fig.partial-{dead}"));
        std::fs::create_dir_all(&partial).unwrap();
        let old = base.join(format!(".fig.old-{dead}"));
        std::fs::create_dir_all(&old).unwrap();
        std::fs::write(old.join("keep.csv"), "x\n1\n").unwrap();
        // A run in progress in another live process (pid 1 is always alive).
        let running = base.join(".fig.partial-1");
        std::fs::create_dir_all(&running).unwrap();
        // Another figure's leftovers are not this figure's business.
        let other = base.join(format!(".other.partial-{dead}"));
        std::fs::create_dir_all(&other).unwrap();
        let d = RunDir::create(&target).unwrap();
        assert!(
            !partial.exists(),
            "a dead process's partial directory stays"
        );
        assert!(
            target.join("keep.csv").exists(),
            "the previous result was not put back"
        );
        assert!(running.exists(), "a live process's partial was removed");
        assert!(other.exists());
        drop(d);
        assert!(!live().iter().any(|(f, _)| f.starts_with(&base)));
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn live_directories_are_registered_until_committed_or_dropped() {
        let base = std::env::temp_dir().join(format!("syncbench-live-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let d = RunDir::create(base.join("a")).unwrap();
        assert!(live().iter().any(|(f, _)| f == &base.join("a")));
        d.commit().unwrap();
        assert!(!live().iter().any(|(f, _)| f.starts_with(&base)));
        let d = RunDir::create(base.join("b")).unwrap();
        drop(d);
        assert!(!live().iter().any(|(f, _)| f.starts_with(&base)));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
