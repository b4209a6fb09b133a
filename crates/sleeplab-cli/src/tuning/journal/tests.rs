//! The journal against files in a temporary directory standing in for sysfs.

use super::*;

fn file(dir: &Path, name: &str, value: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, format!("{value}\n")).unwrap();
    p
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap().trim_end().to_string()
}

/// A journal named as a run that is gone (no process has pid `u32::MAX - 1`).
fn stale_name() -> String {
    format!("tune-{}-12345.jsonl", u32::MAX - 1)
}

#[test]
fn a_change_is_journaled_before_it_is_made_and_restored_on_drop() {
    let sys = tempfile::tempdir().unwrap();
    let run = tempfile::tempdir().unwrap();
    let a = file(sys.path(), "a", "1");
    let b = file(sys.path(), "b", "0-1");
    {
        let mut j = Journal::new(run.path());
        j.change(&a, "0").unwrap();
        j.change(&b, "1").unwrap();
        assert_eq!((read(&a), read(&b)), ("0".into(), "1".into()));
        let entries = parse(&fs::read_to_string(j.file()).unwrap());
        assert_eq!(
            entries,
            vec![
                Entry {
                    path: a.clone(),
                    value: "1".into()
                },
                Entry {
                    path: b.clone(),
                    value: "0-1".into()
                },
            ]
        );
    }
    assert_eq!((read(&a), read(&b)), ("1".into(), "0-1".into()));
    assert_eq!(
        fs::read_dir(run.path()).unwrap().count(),
        0,
        "the journal is removed"
    );
}

#[test]
fn rollback_to_a_mark_restores_only_the_later_changes() {
    let sys = tempfile::tempdir().unwrap();
    let run = tempfile::tempdir().unwrap();
    let a = file(sys.path(), "a", "1");
    let b = file(sys.path(), "b", "2");
    let mut j = Journal::new(run.path());
    j.change(&a, "10").unwrap();
    let mark = j.len();
    j.change(&b, "20").unwrap();
    assert!(j.rollback(mark).is_empty());
    assert_eq!((read(&a), read(&b)), ("10".into(), "2".into()));
    assert_eq!(parse(&fs::read_to_string(j.file()).unwrap()).len(), 1);
    assert!(j.restore().is_empty());
    assert_eq!(read(&a), "1");
    assert!(!j.file().exists());
}

/// A file changed twice gets its first value back: replay runs last to first.
#[test]
fn replay_restores_the_original_of_a_file_changed_twice() {
    let sys = tempfile::tempdir().unwrap();
    let run = tempfile::tempdir().unwrap();
    let a = file(sys.path(), "a", "orig");
    let text = format!(
        "{}\n{}\n",
        serde_json::to_string(&Entry {
            path: a.clone(),
            value: "orig".into()
        })
        .unwrap(),
        serde_json::to_string(&Entry {
            path: a.clone(),
            value: "first".into()
        })
        .unwrap(),
    );
    fs::write(&a, "second\n").unwrap();
    let journal = run.path().join(stale_name());
    fs::write(&journal, text).unwrap();
    assert_eq!(replay_stale(run.path()).len(), 1);
    assert_eq!(read(&a), "orig");
    assert!(!journal.exists());
}

/// A tracer's journal (`trace-…`, the line `sleeplab_capture` writes before it turns
/// `record-cmd` off) left by a run that is gone is replayed too, and named as such.
#[test]
fn a_stale_tracers_journal_is_replayed() {
    let sys = tempfile::tempdir().unwrap();
    let run = tempfile::tempdir().unwrap();
    let option = file(sys.path(), "record-cmd", "0");
    let journal = run
        .path()
        .join(format!("trace-{}-12345.jsonl", u32::MAX - 1));
    let line = serde_json::json!({ "path": option, "value": "1" });
    fs::write(&journal, format!("{line}\n")).unwrap();
    let notes = replay_stale(run.path());
    assert_eq!(notes.len(), 1);
    assert!(notes[0].contains("a traced sleeplab run"), "{notes:?}");
    assert_eq!(read(&option), "1");
    assert!(!journal.exists());
}

/// A torn last line (the process killed mid-write by other means) is skipped; the
/// complete lines before it are restored.
#[test]
fn a_torn_journal_restores_its_complete_lines() {
    let sys = tempfile::tempdir().unwrap();
    let run = tempfile::tempdir().unwrap();
    let a = file(sys.path(), "a", "changed");
    let b = file(sys.path(), "b", "untouched");
    let whole = serde_json::to_string(&Entry {
        path: a.clone(),
        value: "orig".into(),
    })
    .unwrap();
    let torn = serde_json::to_string(&Entry {
        path: b.clone(),
        value: "x".into(),
    })
    .unwrap();
    let journal = run.path().join(stale_name());
    fs::write(&journal, format!("{whole}\n{}", &torn[..torn.len() / 2])).unwrap();
    replay_stale(run.path());
    assert_eq!((read(&a), read(&b)), ("orig".into(), "untouched".into()));
    assert!(!journal.exists());
}

/// Replaying twice (a replay itself killed half-way, then run again) ends the same.
#[test]
fn replay_is_idempotent() {
    let sys = tempfile::tempdir().unwrap();
    let run = tempfile::tempdir().unwrap();
    let a = file(sys.path(), "a", "changed");
    let line = serde_json::to_string(&Entry {
        path: a.clone(),
        value: "orig".into(),
    })
    .unwrap();
    let journal = run.path().join(stale_name());
    fs::write(&journal, format!("{line}\n")).unwrap();
    let copy = run.path().join("copy");
    fs::copy(&journal, &copy).unwrap();
    assert!(replay_file(&journal).is_empty());
    assert_eq!(read(&a), "orig");
    fs::rename(&copy, &journal).unwrap();
    assert!(replay_file(&journal).is_empty());
    assert_eq!(read(&a), "orig");
    assert!(
        replay_stale(run.path()).is_empty(),
        "nothing left to replay"
    );
}

/// The journal of a live run (this process) is its own to restore: never replayed.
#[test]
fn a_live_runs_journal_is_left_alone() {
    let sys = tempfile::tempdir().unwrap();
    let run = tempfile::tempdir().unwrap();
    let a = file(sys.path(), "a", "orig");
    let mut j = Journal::new(run.path());
    j.change(&a, "new").unwrap();
    assert!(replay_stale(run.path()).is_empty());
    assert_eq!(read(&a), "new");
    drop(j);
    assert_eq!(read(&a), "orig");
}

/// A journal that cannot be written makes no change.
#[test]
fn no_change_without_a_journal() {
    let sys = tempfile::tempdir().unwrap();
    let a = file(sys.path(), "a", "orig");
    let blocker = file(sys.path(), "not-a-dir", "x");
    let mut j = Journal::new(&blocker.join("sub"));
    assert!(matches!(
        j.change(&a, "new"),
        Err(JournalError::Journal { .. })
    ));
    assert_eq!(read(&a), "orig");
    assert!(j.is_empty());
}

#[test]
fn owners_are_read_from_names() {
    assert_eq!(
        owner("tune-42-777.jsonl"),
        Some(("a `sleeplab tune`", 42, 777))
    );
    assert_eq!(
        owner("trace-42-777.jsonl"),
        Some(("a traced sleeplab run", 42, 777))
    );
    assert_eq!(owner("tune-42.jsonl"), None);
    assert_eq!(owner(".tune-abc"), None);
    assert_eq!(owner("other-42-777.jsonl"), None);
    assert!(sleeplab::system::start_ticks(std::process::id()).is_some());
}

/// A system file that refuses writes while it lives: read-only by its mode, and where
/// this process writes read-only files anyway (root), immutable as well
/// (`FS_IOC_SETFLAGS`); writable again when dropped.
struct ReadOnly {
    path: PathBuf,
    immutable: bool,
}

/// `FS_IMMUTABLE_FL` of `<linux/fs.h>`.
const IMMUTABLE: libc::c_int = 0x10;

fn set_immutable(path: &Path, on: bool) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(f) = fs::File::open(path) else {
        return false;
    };
    let mut flags: libc::c_int = 0;
    // SAFETY: FS_IOC_GETFLAGS and FS_IOC_SETFLAGS read and write one int.
    unsafe {
        if libc::ioctl(f.as_raw_fd(), libc::FS_IOC_GETFLAGS, &mut flags) != 0 {
            return false;
        }
        flags = if on {
            flags | IMMUTABLE
        } else {
            flags & !IMMUTABLE
        };
        libc::ioctl(f.as_raw_fd(), libc::FS_IOC_SETFLAGS, &flags) == 0
    }
}

fn writable(path: &Path) -> bool {
    fs::OpenOptions::new().write(true).open(path).is_ok()
}

impl ReadOnly {
    fn new(path: &Path) -> Self {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o444)).unwrap();
        let immutable = writable(path) && set_immutable(path, true);
        assert!(
            !writable(path),
            "{} stays writable (root on a file system without the immutable attribute): \
             this test needs a file that refuses writes",
            path.display()
        );
        Self {
            path: path.to_path_buf(),
            immutable,
        }
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.immutable {
            set_immutable(&self.path, false);
        }
        let _ = fs::set_permissions(&self.path, fs::Permissions::from_mode(0o644));
    }
}

/// A restore that fails during the run (the file turned read-only) keeps its line in the
/// journal, in its place: the end of the run tries it again, and so does the next run's
/// replay, which restores it once the file takes writes again.
#[test]
fn a_failed_restore_stays_in_the_journal_and_is_retried() {
    let sys = tempfile::tempdir().unwrap();
    let run = tempfile::tempdir().unwrap();
    let a = file(sys.path(), "a", "orig-a");
    let b = file(sys.path(), "b", "orig-b");
    let mut j = Journal::new(run.path());
    j.change(&a, "new-a").unwrap();
    let mark = j.len();
    j.change(&b, "new-b").unwrap();
    let locked = ReadOnly::new(&b);
    let failures = j.rollback(mark);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].contains(&*b.to_string_lossy()), "{failures:?}");
    // Still in force, and still journaled after a's line.
    assert_eq!(j.len(), 2);
    let lines = parse(&fs::read_to_string(j.file()).unwrap());
    assert_eq!(
        lines.iter().map(|e| e.value.as_str()).collect::<Vec<_>>(),
        ["orig-a", "orig-b"]
    );
    // The end of the run restores a and fails on b again: b's line alone stays.
    let journal = j.file().to_path_buf();
    let failures = j.finish();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!((read(&a), read(&b)), ("orig-a".into(), "new-b".into()));
    assert_eq!(
        parse(&fs::read_to_string(&journal).unwrap()),
        vec![Entry {
            path: b.clone(),
            value: "orig-b".into()
        }]
    );
    // The next run (the journal of a run that is gone) replays it: still refused, kept;
    let stale = run.path().join(stale_name());
    fs::rename(&journal, &stale).unwrap();
    let notes = replay_stale(run.path());
    assert!(
        notes.len() == 1 && notes[0].contains("keeps them"),
        "{notes:?}"
    );
    assert!(stale.exists());
    // ... once the file takes writes, restored, and the journal removed.
    drop(locked);
    let notes = replay_stale(run.path());
    assert!(
        notes.len() == 1 && notes[0].starts_with("restored"),
        "{notes:?}"
    );
    assert_eq!(read(&b), "orig-b");
    assert!(!stale.exists());
}

/// A replay that restores some lines and not others keeps only those it could not: the
/// restored ones are never written again over what was set since.
#[test]
fn a_replay_keeps_only_the_lines_it_could_not_restore() {
    let sys = tempfile::tempdir().unwrap();
    let run = tempfile::tempdir().unwrap();
    let a = file(sys.path(), "a", "changed-a");
    let b = file(sys.path(), "b", "changed-b");
    let line = |p: &Path, v: &str| {
        serde_json::to_string(&Entry {
            path: p.to_path_buf(),
            value: v.into(),
        })
        .unwrap()
    };
    let journal = run.path().join(stale_name());
    fs::write(
        &journal,
        format!("{}\n{}\n", line(&a, "orig-a"), line(&b, "orig-b")),
    )
    .unwrap();
    let locked = ReadOnly::new(&b);
    assert_eq!(replay_file(&journal).len(), 1);
    assert_eq!(read(&a), "orig-a");
    assert_eq!(
        fs::read_to_string(&journal).unwrap(),
        format!("{}\n", line(&b, "orig-b"))
    );
    // A user sets a again: the next replay leaves it alone.
    fs::write(&a, "user\n").unwrap();
    drop(locked);
    assert!(replay_file(&journal).is_empty());
    assert_eq!((read(&a), read(&b)), ("user".into(), "orig-b".into()));
    assert!(!journal.exists());
}
