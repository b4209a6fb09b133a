//! One function per subcommand: parse-validated arguments in, output and exit code out.

pub mod advise;
pub mod compare;
pub mod cpu;
pub mod list;
pub mod pace;
pub mod report;
pub mod runtimes;
pub mod schema;
pub mod short;
pub mod simulate;
pub mod survey;
pub mod sweep;
pub mod timers;

use crate::error::UsageError;
use crate::interrupt::EXIT_INTERRUPTED;
use crate::model::{ResultFile, write_json};
use crate::output::check_writable;
use std::path::{Path, PathBuf};

/// Saves a finished result: JSON when asked, then whatever else `extra` writes (CSV),
/// and returns the exit code (130 when the run was interrupted).
pub fn save(
    result: &ResultFile,
    json: Option<&Path>,
    extra: impl FnOnce() -> anyhow::Result<()>,
) -> anyhow::Result<i32> {
    for n in &result.notes {
        println!("note: {n}");
    }
    if let Some(p) = json {
        write_json(p, result)?;
    }
    extra()?;
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

/// Resolves a list of contender names, suggesting the closest name for a typo.
pub fn resolve_names(given: &[String], known: &[&str]) -> Result<Vec<String>, UsageError> {
    let mut out: Vec<String> = Vec::new();
    for name in given {
        if !known.contains(&name.as_str()) {
            let hint = crate::parse::closest(name, known.iter().copied())
                .map(|c| format!(" (did you mean {c}?)"))
                .unwrap_or_else(|| " (see `sleeplab list`)".into());
            return Err(UsageError::new(format!("unknown mechanism {name:?}{hint}")));
        }
        if !out.contains(name) {
            out.push(name.clone());
        }
    }
    Ok(out)
}
