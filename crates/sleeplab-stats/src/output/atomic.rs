//! Files written whole or not at all: a temporary file in the same directory, renamed
//! over the target once complete.

use anyhow::Context;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically (temp file in the same directory + rename).
pub fn atomic_write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".sleeplab-")
        .tempfile_in(dir)
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.flush())
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Checks before a run that `path` can be written: its directory exists and is
/// writable, and the path is not a directory. Measuring for a minute and then failing
/// to save would waste the user's time.
pub fn check_writable(path: &Path) -> Result<(), String> {
    if path.as_os_str().is_empty() {
        return Err("empty output path".into());
    }
    if path.is_dir() {
        return Err(format!("{} is a directory", path.display()));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!("directory {} does not exist", dir.display()));
    }
    tempfile::Builder::new()
        .prefix(".sleeplab-check-")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| format!("cannot write in {}: {e}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_file_and_checks_paths() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        atomic_write(&p, b"{}").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{}");
        assert!(check_writable(&p).is_ok());
        assert!(check_writable(dir.path()).is_err());
        assert!(check_writable(&dir.path().join("missing/x.json")).is_err());
        // No temp files left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
