//! The result model: one versioned JSON document per run, read back by `report` and
//! `compare`. Its schema is generated from these types (`sleeplab schema`) and
//! committed as `spec/result.schema.json`; `docs/RESULTS.md` explains it.

mod envelope;
mod io;

pub use envelope::{
    ExperimentData, OLDEST_READABLE_VERSION, ResultFile, RunSettings, RunStart, SCHEMA_VERSION,
    ToolInfo, now_rfc3339,
};
pub use io::{LoadError, load_result, parse_result, result_schema, write_json};
