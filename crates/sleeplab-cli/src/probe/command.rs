//! A program to launch as a probe (or a build, or a query): program, fixed arguments,
//! environment and working directory.

use std::ffi::OsString;
use std::path::PathBuf;

/// A program to launch: what `exec` gets, minus the per-run arguments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProbeCommand {
    /// The program (a path, or a name looked up in `PATH`).
    pub program: PathBuf,
    /// Arguments before the per-run ones (e.g. the script path).
    pub args: Vec<OsString>,
    /// Extra environment variables.
    pub env: Vec<(OsString, OsString)>,
    /// Working directory (default: inherited).
    pub cwd: Option<PathBuf>,
}

impl ProbeCommand {
    /// A command running `program` with no fixed arguments.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            ..Self::default()
        }
    }

    /// Adds fixed arguments.
    pub fn with_args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Adds an environment variable.
    pub fn with_env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Sets the working directory.
    pub fn in_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// The command line as words (environment first, `K=V`), for reports.
    pub fn words(&self, extra: &[String]) -> Vec<String> {
        let mut w: Vec<String> = self
            .env
            .iter()
            .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
            .collect();
        w.push(self.program.display().to_string());
        w.extend(self.args.iter().map(|a| a.to_string_lossy().into_owned()));
        w.extend(extra.iter().cloned());
        w
    }
}
