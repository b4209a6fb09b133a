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
    assert_eq!(owner("tune-42-777.jsonl"), Some((42, 777)));
    assert_eq!(owner("tune-42.jsonl"), None);
    assert_eq!(owner(".tune-abc"), None);
    assert!(start_time(std::process::id()).is_some());
}
