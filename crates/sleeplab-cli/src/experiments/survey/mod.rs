//! `sleeplab survey` (what `sleeplab` runs with no arguments): a short version of every
//! experiment, one after the other, each through the experiment's own `run` function
//! with a survey-sized config, then a report.
//!
//! The survey is itself an experiment: its config is a list of [stages](StagePlan)
//! ([`plan`] sizes them for a [`Level`]), its result is a [`SurveyData`] holding every
//! stage's own [`ResultFile`] and a [`StageStatus`] per stage. A stage that fails is
//! recorded with its error and the others go on; Ctrl-C stops the stage in progress,
//! keeps what it measured and skips the rest.

mod csv_out;
mod plan;
mod run;

pub use csv_out::{CSV_COLUMNS, samples_csv};
pub use plan::{Level, NORMAL_BUDGET_MS, PlanEnv, StageConfig, StagePlan, plan};
pub use run::{SurveyOutcome, run};

use crate::model::ResultFile;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    /// Index of its result in [`SurveyData::results`], when it produced one.
    pub result: Option<usize>,
}

/// The result of a survey.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SurveyData {
    /// The size it ran at.
    pub level: Level,
    /// Every planned stage, in order, with how it ended.
    pub stages: Vec<StageStatus>,
    /// The results of the stages that produced one (complete or partial), in stage order.
    pub results: Vec<ResultFile>,
}

impl SurveyData {
    /// The result of the stage named `name`, if it produced one.
    pub fn stage_result(&self, name: &str) -> Option<&ResultFile> {
        self.stages
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.result)
            .and_then(|i| self.results.get(i))
    }

    /// The stage that produced result `index`.
    pub fn stage_of(&self, index: usize) -> Option<&StageStatus> {
        self.stages.iter().find(|s| s.result == Some(index))
    }
}
