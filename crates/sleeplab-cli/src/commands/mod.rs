//! One function per subcommand: parse-validated arguments in, output and exit code out.

pub mod list;
pub mod schema;
pub mod sweep;

use crate::error::UsageError;
use crate::output::check_writable;
use std::path::PathBuf;

/// Fails with a usage error unless every given output path is writable.
pub fn check_outputs(paths: &[(&str, &Option<PathBuf>)]) -> Result<(), UsageError> {
    for (flag, p) in paths {
        if let Some(p) = p {
            check_writable(p).map_err(|e| {
                UsageError::new(format!("invalid {flag} {:?}: {e}", p.display().to_string()))
            })?;
        }
    }
    Ok(())
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
