//! The start and end of a run: what is known when it starts, and the envelope it
//! closes with.

use super::{ExperimentData, ResultFile, SCHEMA_VERSION, ToolInfo};
use crate::settings::RunSettings;
use sleeplab::system::Fingerprint;

/// What is known when a run starts: the clock, the machine, the command line.
#[derive(Debug, Clone)]
pub struct RunStart {
    /// Start time, RFC 3339.
    pub started_at: String,
    /// The machine.
    pub fingerprint: Fingerprint,
    /// The command line.
    pub command_line: Vec<String>,
}

impl RunStart {
    /// Notes the start of a run now.
    pub fn now() -> Self {
        Self {
            started_at: now_rfc3339(),
            fingerprint: Fingerprint::collect(),
            command_line: std::env::args().collect(),
        }
    }

    /// The start of a part of this run (a survey stage) now: the same machine and
    /// command line.
    pub fn part(&self) -> Self {
        Self {
            started_at: now_rfc3339(),
            fingerprint: self.fingerprint.clone(),
            command_line: self.command_line.clone(),
        }
    }

    /// Closes the run: the result envelope around `data`.
    pub fn finish(
        self,
        data: ExperimentData,
        settings: RunSettings,
        complete: bool,
        notes: Vec<String>,
    ) -> ResultFile {
        ResultFile {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo::default(),
            complete,
            started_at: self.started_at,
            finished_at: now_rfc3339(),
            command_line: self.command_line,
            fingerprint: self.fingerprint,
            settings,
            notes,
            data,
        }
    }
}

/// The current time as RFC 3339 (UTC, seconds).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
