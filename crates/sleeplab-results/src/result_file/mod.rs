//! The result model: one versioned JSON document per run, read back by `report` and
//! `compare`. Its schema is generated from these types (`sleeplab schema`) and
//! committed as `spec/result.schema.json`; `docs/RESULTS.md` explains it.

mod envelope;
pub mod host_noise;
mod io;
mod run;
mod survey;

pub use crate::experiments::{OLDEST_READABLE_VERSION, SCHEMA_VERSION};
pub use envelope::{ExperimentData, OtherExperiment, ResultFile, SurveyData, ToolInfo};
pub use io::{LoadError, load_result, parse_result, result_schema, write_json};
pub use run::{RunStart, now_rfc3339};
pub use survey::{Level, StageState, StageStatus};
