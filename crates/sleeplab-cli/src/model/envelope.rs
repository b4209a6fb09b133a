//! The envelope every result shares: version, tool, machine, settings, timing.

use crate::experiments::sweep::SweepData;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab::system::{Fingerprint, Policy};

/// The version of the result format. Bumped on any incompatible change; readers
/// refuse other versions with a clear message.
pub const SCHEMA_VERSION: u32 = 1;

/// The tool that wrote a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolInfo {
    /// Always `sleeplab`.
    pub name: String,
    /// The sleeplab version.
    pub version: String,
}

impl Default for ToolInfo {
    fn default() -> Self {
        Self {
            name: "sleeplab".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// The thread settings a run measured under (each changes the answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct RunSettings {
    /// Timer slack of the measuring thread(s), ns, as it was in force. Experiments that
    /// vary the slack record it per cell as well.
    pub timer_slack_ns: u64,
    /// CPU the measuring thread was pinned to.
    pub pin_cpu: Option<usize>,
    /// Scheduling policy of the measuring thread.
    pub policy: Policy,
    /// Scheduling priority (0 for `other`).
    pub priority: i32,
    /// Whether memory was locked with mlockall.
    pub mlock: bool,
}

/// The data of one experiment, tagged by its name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "experiment", content = "data", rename_all = "snake_case")]
pub enum ExperimentData {
    /// `sleeplab sweep`: requested duration × mechanism × load → elapsed.
    Sweep(SweepData),
}

impl ExperimentData {
    /// The experiment's name as used on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            ExperimentData::Sweep(_) => "sweep",
        }
    }
}

/// One run's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResultFile {
    /// Format version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The tool and its version.
    pub tool: ToolInfo,
    /// False when the run was interrupted (Ctrl-C) or a stage failed: the data holds
    /// what was measured until then.
    pub complete: bool,
    /// Start of the run, RFC 3339 UTC.
    pub started_at: String,
    /// End of the run, RFC 3339 UTC.
    pub finished_at: String,
    /// The exact command line.
    pub command_line: Vec<String>,
    /// The machine.
    pub fingerprint: Fingerprint,
    /// Settings of the measuring thread.
    pub settings: RunSettings,
    /// Plain-language notes and warnings about the run (e.g. more load threads than
    /// cores, a setting that could not be applied).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The experiment and its data.
    #[serde(flatten)]
    pub data: ExperimentData,
}

/// The current time as RFC 3339 (UTC, seconds).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
