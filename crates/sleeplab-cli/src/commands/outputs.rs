//! The files a command writes: checked before anything is measured, written whole or
//! not at all after.

use crate::error::UsageError;
use crate::interrupt::EXIT_INTERRUPTED;
use crate::model::{ResultFile, write_json};
use sleeplab_stats::{atomic_write, check_writable, terminal_width, wrap};
use std::path::{Path, PathBuf};

/// The default report directory.
pub const DEFAULT_DIR: &str = "sleeplab-report";

/// Saves a finished result: prints its notes, writes the JSON when asked, then every
/// other file (CSV, histogram), and returns the exit code (130 when the run was
/// interrupted).
pub fn save(
    result: &ResultFile,
    json: Option<&Path>,
    files: &[(PathBuf, Vec<u8>)],
) -> anyhow::Result<i32> {
    // Wrapped to the tables' width (one line each with `--wide`).
    let width = terminal_width().map_or(usize::MAX, usize::from);
    for n in &result.notes {
        println!("{}", wrap("note:", n, width, 2).join("\n"));
    }
    if let Some(p) = json {
        write_json(p, result)?;
    }
    for (path, bytes) in files {
        atomic_write(path, bytes)?;
    }
    if !result.complete {
        eprintln!("sleeplab: interrupted; the results above and in the files are partial");
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(0)
}

/// Fails with a usage error unless every given output path is writable, and no two
/// of them name the same file (the second write would replace the first).
pub fn check_outputs(paths: &[(&str, &Option<PathBuf>)]) -> Result<(), UsageError> {
    let mut seen: Vec<(&str, PathBuf)> = Vec::new();
    for (flag, p) in paths {
        if let Some(p) = p {
            check_writable(p).map_err(|e| {
                UsageError::new(format!("invalid {flag} {:?}: {e}", p.display().to_string()))
            })?;
            let file = same_file_key(p);
            if let Some((other, _)) = seen.iter().find(|(_, f)| *f == file) {
                return Err(UsageError::new(format!(
                    "invalid {flag} {:?}: the same file as {other}",
                    p.display().to_string()
                )));
            }
            seen.push((flag, file));
        }
    }
    Ok(())
}

/// The file a path names, resolved (its directory exists: checked before).
fn same_file_key(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    dir.join(p.file_name().unwrap_or_default())
}

/// Checks (and creates) a report directory before anything is measured or written.
pub fn prepare_dir(dir: &Path) -> Result<(), UsageError> {
    prepare_dir_for("-o", dir)
}

/// [`prepare_dir`] for the directory given by `flag`, which its errors name.
pub fn prepare_dir_for(flag: &str, dir: &Path) -> Result<(), UsageError> {
    let bad = |why: String| {
        UsageError::new(format!(
            "invalid {flag} {:?}: {why}",
            dir.display().to_string()
        ))
    };
    if dir.as_os_str().is_empty() {
        return Err(bad("empty path".into()));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(bad("exists and is not a directory".into()));
    }
    std::fs::create_dir_all(dir).map_err(|e| bad(format!("cannot create it: {e}")))?;
    tempfile::Builder::new()
        .prefix(".sleeplab-check-")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| bad(format!("cannot write in it: {e}")))
}
