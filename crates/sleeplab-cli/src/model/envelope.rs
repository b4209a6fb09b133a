//! The envelope every result shares: version, tool, machine, settings, timing.

use crate::experiments::advise::AdviseData;
use crate::experiments::cpu::CpuData;
use crate::experiments::pace::PaceData;
use crate::experiments::runtimes::RuntimesData;
use crate::experiments::short::ShortData;
use crate::experiments::survey::SurveyData;
use crate::experiments::sweep::SweepData;
use crate::experiments::timers::TimersData;
use crate::sim::SimulateData;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab::system::{Fingerprint, Policy};

/// The version of the result format. Bumped on any incompatible change; readers
/// refuse other versions with a clear message. Version 2: tail quantiles are `null`
/// where the sample cannot resolve them (the quantile rule, `stats::quantile`).
pub const SCHEMA_VERSION: u32 = 2;

/// The oldest version this build still reads. Version-1 files load with every quantile
/// re-checked against its sample size (`stats::recheck_quantiles`).
pub const OLDEST_READABLE_VERSION: u32 = 1;

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
    /// `sleeplab pace`: a fixed-rate loop per precise-sleep contender.
    Pace(PaceData),
    /// `sleeplab cpu`: CPU usage against requested sleep.
    Cpu(CpuData),
    /// `sleeplab advise`: the candidates measured for one case and the recommendation.
    Advise(AdviseData),
    /// `sleeplab short`: what zero and minimal sleeps cost, per mechanism.
    Short(ShortData),
    /// `sleeplab runtimes`: every language runtime's own waits, through probes.
    Runtimes(RuntimesData),
    /// `sleeplab survey`: a short version of every experiment, each stage's result inside.
    Survey(SurveyData),
    /// `sleeplab timers`: periodic timers compared.
    Timers(TimersData),
    /// `sleeplab simulate`: the precise-sleep strategies under virtual schedulers.
    Simulate(SimulateData),
}

impl ExperimentData {
    /// The experiment's name as used on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            ExperimentData::Sweep(_) => "sweep",
            ExperimentData::Pace(_) => "pace",
            ExperimentData::Cpu(_) => "cpu",
            ExperimentData::Advise(_) => "advise",
            ExperimentData::Short(_) => "short",
            ExperimentData::Runtimes(_) => "runtimes",
            ExperimentData::Survey(_) => "survey",
            ExperimentData::Timers(_) => "timers",
            ExperimentData::Simulate(_) => "simulate",
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
