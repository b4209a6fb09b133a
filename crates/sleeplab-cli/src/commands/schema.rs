//! `sleeplab schema`: the JSON Schema of result files.

use crate::model::result_schema;
use crate::output::atomic_write;
use std::path::Path;

/// Prints or writes the schema.
pub fn run(output: Option<&Path>) -> anyhow::Result<i32> {
    if let Some(p) = output {
        super::outputs::check_outputs(&[("--output", &Some(p.to_path_buf()))])?;
    }
    let text = serde_json::to_string_pretty(&result_schema())? + "\n";
    match output {
        Some(p) => atomic_write(p, text.as_bytes())?,
        None => print!("{text}"),
    }
    Ok(0)
}
