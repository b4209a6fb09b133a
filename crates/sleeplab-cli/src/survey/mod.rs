//! `sleeplab survey` (what `sleeplab` runs with no arguments): a short version of every
//! experiment, one after the other, each through the experiment's own
//! [`Experiment`](crate::experiments::Experiment) with a survey-sized config, then a
//! report.
//!
//! The survey is a list of [stages](StagePlan) over that trait ([`plan`] sizes them for
//! a [`Level`]); its result is a [`SurveyData`] holding every stage's own result file and
//! a [`StageStatus`] per stage (those types are part of the result model, since the
//! survey's data nests result envelopes). A stage that fails is recorded with its error
//! and the others go on; Ctrl-C stops the stage in progress, keeps what it measured and
//! skips the rest.

mod csv_out;
pub(crate) mod estimate;
mod plan;
mod run;
mod stage;

pub use crate::model::{Level, StageState, StageStatus, SurveyData};
pub use csv_out::{CSV_COLUMNS, samples_csv};
pub use estimate::Estimate;
pub use plan::{
    NORMAL_BUDGET_MS, PlanEnv, QUICK_BUDGET_MS, QUICK_RUN_TIME, RUN_TIME, plan, planned_ms,
    sweep_loads, tune_stage,
};
pub use run::{SurveyOutcome, run};
pub use stage::StagePlan;
