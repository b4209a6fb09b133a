//! `sleeplab schema`: the JSON Schema of result files.

use crate::model::result_schema;
use clap::Args;
use sleeplab_stats::atomic_write;
use std::path::PathBuf;

/// `sleeplab schema [--output FILE]`.
#[derive(Debug, Clone, Args)]
pub struct SchemaArgs {
    /// Write it to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// None: `schema` measures nothing.
pub const LONG_RUN: Option<&str> = None;

/// Prints or writes the schema.
pub fn run(args: &SchemaArgs, _quiet: bool) -> anyhow::Result<i32> {
    super::outputs::check_outputs(&[("--output", &args.output)])?;
    let text = serde_json::to_string_pretty(&result_schema())? + "\n";
    match &args.output {
        Some(p) => atomic_write(p, text.as_bytes())?,
        None => print!("{text}"),
    }
    Ok(0)
}
