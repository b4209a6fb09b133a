//! `sleeplab report`: re-renders a saved result (one experiment or a survey) as
//! `DIR/index.html`.

use super::outputs::{DEFAULT_DIR, prepare_dir};
use crate::error::UsageError;
use crate::model::load_result;
use crate::report::{self, findings, view::Results};
use clap::Args;
use std::path::PathBuf;

/// `sleeplab report RESULTS.json [-o DIR]`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// A result written by sleeplab: any experiment's --json, or a survey's results.json.
    #[arg(value_name = "RESULTS.json")]
    pub input: PathBuf,
    /// The directory to write index.html into (created if missing).
    #[arg(short = 'o', long = "output", value_name = "DIR", default_value = DEFAULT_DIR)]
    pub output: PathBuf,
}

/// Runs `sleeplab report`.
pub fn run(args: &ReportArgs) -> anyhow::Result<i32> {
    let result = load_result(&args.input).map_err(UsageError::from)?;
    prepare_dir(&args.output)?;
    let index = report::write_index(&args.output, &report::render(&result))?;
    let r = Results::of(&result);
    for (i, f) in findings::findings(&r).iter().enumerate() {
        println!("{:>2}. {}", i + 1, f.text);
    }
    let shown = std::fs::canonicalize(&index).unwrap_or(index);
    println!("Report: {}", shown.display());
    Ok(0)
}
