//! The journal of system-wide changes: every value `tune` writes to a system file
//! (sysfs, procfs) is recorded with the value it replaces *before* it is written, in a
//! file of the run's own under [`DEFAULT_DIR`]. The run restores them itself (after each
//! setting's rounds, on a normal exit, on Ctrl-C); a run that could not (SIGKILL, a
//! crash, a power cut of the process) leaves its journal behind, and the next sleeplab
//! run of any command replays it ([`replay_stale`], called at startup).
//!
//! The file holds one JSON object per line, `{"path": …, "value": …}`, rewritten whole
//! (temp file + rename) on every change, so a reader sees the old list or the new one.
//! A line that does not parse (a torn file written by other means) is skipped: its
//! change was never made, since the journal is written before the change. Replay
//! restores the lines last to first (a file changed twice gets its first, original
//! value back) and is idempotent: writing an original value twice changes nothing, and
//! the journal is removed only once every line is restored. A restore that fails (the
//! file refuses the write) keeps its line, in the live run's journal and in a replayed
//! one (rewritten with the lines that failed alone), so the next run tries it again.
//!
//! A journal is named `tune-<pid>-<start time>.jsonl` (`trace-…` for the tracer's,
//! written by `sleeplab_capture` in the same format); it is stale when no process of
//! that pid started at that time (a reused pid is not the owner).

use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where journals live: tmpfs, emptied at boot (when the changes are gone too).
pub const DEFAULT_DIR: &str = "/run/sleeplab";

/// The journal file of a live run, for the second Ctrl-C (which exits at once) to
/// replay before it goes.
static ACTIVE: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Held across a journal write and the system write it covers (and across a restore):
/// the second Ctrl-C's replay never falls between the two, where it would remove an
/// entry whose change is written just after (the change would then outlive the run).
static WRITING: Mutex<()> = Mutex::new(());

fn writing() -> std::sync::MutexGuard<'static, ()> {
    WRITING.lock().unwrap_or_else(|e| e.into_inner())
}

/// One change: the file and the value it held before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The system file.
    pub path: PathBuf,
    /// Its value before the change (as read, without the trailing newline).
    pub value: String,
}

/// A journal error: the file of the change or of the journal, and why.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The journal could not be written (so the change was not made).
    #[error("cannot write the journal {path}: {source}")]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The system file could not be read or written.
    #[error("cannot change {path}: {source}")]
    Change {
        /// The system file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The changes of this run, restored when dropped.
#[derive(Debug)]
pub struct Journal {
    file: PathBuf,
    entries: Vec<Entry>,
}

impl Journal {
    /// A new, empty journal of this process in `dir` (created if missing). Nothing is
    /// written until the first change.
    pub fn new(dir: &Path) -> Self {
        let name = format!(
            "tune-{}-{}.jsonl",
            std::process::id(),
            sleeplab::system::start_ticks(std::process::id()).unwrap_or(0)
        );
        Self {
            file: dir.join(name),
            entries: Vec::new(),
        }
    }

    /// The journal's file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// How many changes are in force (a change whose restore failed included).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no change is in force.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes `value` to `path`, journaled first with the value it replaces (where the
    /// write fails, the entry is dropped again: nothing changed).
    pub fn change(&mut self, path: &Path, value: &str) -> Result<(), JournalError> {
        let _writing = writing();
        let old = fs::read_to_string(path).map_err(|source| JournalError::Change {
            path: path.to_path_buf(),
            source,
        })?;
        self.entries.push(Entry {
            path: path.to_path_buf(),
            value: old.trim_end_matches('\n').to_string(),
        });
        if let Err(source) = self.persist() {
            self.entries.pop();
            return Err(JournalError::Journal {
                path: self.file.clone(),
                source,
            });
        }
        if let Err(source) = write_value(path, value) {
            // Nothing changed: nothing to restore.
            self.entries.pop();
            let _ = self.persist();
            return Err(JournalError::Change {
                path: path.to_path_buf(),
                source,
            });
        }
        Ok(())
    }

    /// Restores every change made since the journal held `mark` changes ([`Journal::len`]),
    /// last first; the files that could not be written back, with why. A change whose
    /// restore fails stays in the journal, in its place: still in force, it is tried
    /// again by the next rollback that reaches it ([`Journal::restore`] at the end of the
    /// run), and, should the run end with it, by the next run's replay.
    pub fn rollback(&mut self, mark: usize) -> Vec<String> {
        let _writing = writing();
        let mut failures = Vec::new();
        let mut i = self.entries.len();
        while i > mark {
            i -= 1;
            let e = &self.entries[i];
            if let Err(err) = write_value(&e.path, &e.value) {
                failures.push(format!("{}: {err}", e.path.display()));
                continue;
            }
            self.entries.remove(i);
            // Rewritten after each restore: a kill now replays only what is left.
            let _ = self.persist();
        }
        failures
    }

    /// Restores every change ([`Journal::rollback`] to 0).
    pub fn restore(&mut self) -> Vec<String> {
        self.rollback(0)
    }

    /// Restores every change at the end of a run and lets the journal go: the files that
    /// could not be written back, with why, stay in its file for the next run's replay
    /// (dropping it afterwards tries nothing again).
    pub fn finish(mut self) -> Vec<String> {
        let failures = self.restore();
        self.entries.clear();
        set_active(None);
        failures
    }

    /// Writes the entries to the journal file whole, or removes it when there are none.
    fn persist(&self) -> std::io::Result<()> {
        if self.entries.is_empty() {
            set_active(None);
            return match fs::remove_file(&self.file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            };
        }
        fs::create_dir_all(self.file.parent().unwrap_or(Path::new(".")))?;
        rewrite(&self.file, self.entries.iter())?;
        set_active(Some(self.file.clone()));
        Ok(())
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        for failure in self.restore() {
            eprintln!(
                "sleeplab: could not restore {failure}; kept in the journal {}: the next sleeplab run tries again",
                self.file.display()
            );
        }
    }
}

fn set_active(file: Option<PathBuf>) {
    if let Ok(mut a) = ACTIVE.lock() {
        *a = file;
    }
}

/// Replays the live run's journal, if any (the second Ctrl-C, just before it exits;
/// the run's thread may be changing a value this moment). Never blocks: where a change
/// or a restore is under way, its journal is left for the next run to replay; where
/// not, the lock is kept until the process exits, so no change follows the replay.
pub fn restore_active() {
    let Ok(writing) = WRITING.try_lock() else {
        return;
    };
    std::mem::forget(writing);
    let file = ACTIVE.try_lock().ok().and_then(|a| a.clone());
    if let Some(file) = file {
        let _ = replay_file(&file);
    }
}

/// Writes `value` to a system file as `echo value > path` would.
fn write_value(path: &Path, value: &str) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?;
    f.write_all(format!("{value}\n").as_bytes())
}

/// The entries of a journal's text; lines that do not parse (a torn end) are skipped.
pub fn parse(text: &str) -> Vec<Entry> {
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Restores the changes of one journal file, last first, and removes it once every one
/// is restored; the files that could not be written back. Where some could not, the
/// journal is rewritten with those alone (in their order), for the next run to try
/// again: a restored value is never written a second time over what a user set since.
pub fn replay_file(file: &Path) -> Vec<String> {
    let Ok(text) = fs::read_to_string(file) else {
        return Vec::new();
    };
    let mut failures = Vec::new();
    let mut kept = Vec::new();
    for e in parse(&text).into_iter().rev() {
        if let Err(err) = write_value(&e.path, &e.value) {
            // A file that no longer exists (a CPU gone offline) has nothing to restore.
            if err.kind() != std::io::ErrorKind::NotFound {
                failures.push(format!("{}: {err}", e.path.display()));
                kept.push(e);
            }
        }
    }
    if failures.is_empty() {
        let _ = fs::remove_file(file);
    } else if let Err(err) = rewrite(file, kept.iter().rev()) {
        failures.push(format!("{}: {err}", file.display()));
    }
    failures
}

/// Writes `entries` as the whole journal `file` (temp file + rename).
fn rewrite<'a>(file: &Path, entries: impl Iterator<Item = &'a Entry>) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut text = String::new();
    for e in entries {
        text.push_str(&serde_json::to_string(e).map_err(std::io::Error::other)?);
        text.push('\n');
    }
    let mut tmp = tempfile::Builder::new().prefix(".tune-").tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

/// The run that writes journals of each kind, by the prefix of their names: `tune`'s
/// settings, and the tracer's (`sleeplab_capture`'s instances turn the machine's
/// `options/record-cmd` off for a moment, journaled as `trace-<pid>-<start>.jsonl`).
const KINDS: [(&str, &str); 2] = [
    ("tune-", "a `sleeplab tune`"),
    ("trace-", "a traced sleeplab run"),
];

/// The owner of a journal named `<kind>-<pid>-<start>.jsonl`: its run's words (from
/// [`KINDS`]), pid and start time.
fn owner(name: &str) -> Option<(&'static str, u32, u64)> {
    let (prefix, run) = KINDS.iter().find(|(p, _)| name.starts_with(p))?;
    let rest = name.strip_prefix(prefix)?.strip_suffix(".jsonl")?;
    let (pid, start) = rest.split_once('-')?;
    Some((run, pid.parse().ok()?, start.parse().ok()?))
}

/// Replays every journal in `dir` whose run is gone (killed before it could restore, or
/// ended with a restore that failed); a note per journal replayed (or that could not
/// be), for stderr.
pub fn replay_stale(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((run, pid, start)) = owner(&name) else {
            continue;
        };
        if sleeplab::system::start_ticks(pid) == Some(start) {
            continue; // its run is alive and restores its own changes
        }
        let failures = replay_file(&entry.path());
        notes.push(if failures.is_empty() {
            format!("restored the system settings {run} (pid {pid}) left changed")
        } else {
            format!(
                "could not restore what {run} (pid {pid}) left changed: {}; its journal {} keeps them for the next run",
                failures.join("; "),
                entry.path().display()
            )
        });
    }
    notes
}

#[cfg(test)]
mod tests;
