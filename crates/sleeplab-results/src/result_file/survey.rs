//! The survey's stages as a result records them: how thorough it was ([`Level`]) and
//! how each stage ended ([`StageStatus`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How thorough the survey is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// A 30-second glance (`--quick`).
    Quick,
    /// The default: every experiment in about 70 seconds.
    #[default]
    Normal,
    /// The thorough version (`--full`): longer budgets, more durations and loads.
    Full,
}

impl Level {
    /// The level's name.
    pub fn name(self) -> &'static str {
        match self {
            Level::Quick => "quick",
            Level::Normal => "normal",
            Level::Full => "full",
        }
    }
}

/// How a stage ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StageState {
    /// Ran to the end.
    Ok,
    /// Stopped by Ctrl-C while running: its result holds what was measured.
    Interrupted,
    /// Failed (an error or a panic); the survey went on without it.
    Failed {
        /// The error, one line.
        error: String,
    },
    /// Not applicable on this machine (e.g. no language runtime installed).
    Skipped {
        /// Why.
        reason: String,
    },
    /// Not started because the survey was interrupted before it.
    NotRun,
}

impl StageState {
    /// A short label for tables: `ok`, `interrupted`, `failed`, `skipped`, `not run`.
    pub fn label(&self) -> &'static str {
        match self {
            StageState::Ok => "ok",
            StageState::Interrupted => "interrupted",
            StageState::Failed { .. } => "failed",
            StageState::Skipped { .. } => "skipped",
            StageState::NotRun => "not run",
        }
    }
}

/// What happened to one stage of the survey.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StageStatus {
    /// The stage's name, e.g. `sweep`, `sweep-slack`.
    pub name: String,
    /// The experiment it runs, e.g. `sweep`.
    pub experiment: String,
    /// What it asks, in a few words.
    pub title: String,
    /// How it ended.
    #[serde(flatten)]
    pub state: StageState,
    /// The time it was planned to take, ms.
    pub planned_ms: u64,
    /// The time it took, ms.
    pub elapsed_ms: u64,
    /// Index of its result in `SurveyData::results`, when it produced one.
    pub result: Option<usize>,
}
