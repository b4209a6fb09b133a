//! `sleeplab report`: re-renders a saved result (one experiment or a survey) as
//! `DIR/index.html`, with the result beside it as `DIR/results.json`, so a report
//! directory never holds an index and results of different runs. A directory that holds
//! another run's report is refused (exit 2) unless `--force`.

use super::hints::WORDING;
use super::outputs::{DEFAULT_DIR, prepare_dir};
use crate::error::UsageError;
use crate::model::load_result;
use crate::report::{self, Results};
use clap::Args;
use sleeplab_stats::atomic_write;
use std::path::{Path, PathBuf};

/// `sleeplab report RESULTS.json [-o DIR]`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// A result written by sleeplab: any experiment's --json, or a survey's results.json.
    #[arg(value_name = "RESULTS.json")]
    pub input: PathBuf,
    /// The directory to write index.html and results.json into (created if missing).
    #[arg(short = 'o', long = "output", value_name = "DIR", default_value = DEFAULT_DIR)]
    pub output: PathBuf,
    /// Write into DIR even when it holds another run's report (its samples.csv, which
    /// belongs to that run, is removed).
    #[arg(long)]
    pub force: bool,
}

/// None: `report` measures nothing (it reads a result).
pub const LONG_RUN: Option<&str> = None;

/// Whether `dir` holds the report of a run other than `input` (bytes): an `index.html`
/// or `results.json` whose `results.json` is missing or differs from the input.
pub fn holds_other_run(dir: &Path, input: &[u8]) -> bool {
    let (index, json) = (dir.join("index.html"), dir.join("results.json"));
    match std::fs::read(&json) {
        Ok(bytes) => bytes != input,
        Err(_) => index.exists(),
    }
}

/// Runs `sleeplab report`.
pub fn run(args: &ReportArgs, _quiet: bool) -> anyhow::Result<i32> {
    let result = load_result(&args.input).map_err(UsageError::from)?;
    let input = std::fs::read(&args.input)
        .map_err(|e| UsageError::new(format!("cannot read {}: {e}", args.input.display())))?;
    let dir = &args.output;
    let other = holds_other_run(dir, &input);
    if other && !args.force {
        return Err(UsageError::new(format!(
            "invalid -o {:?}: it holds another run's report (index.html and results.json); choose another directory or add --force",
            dir.display().to_string()
        ))
        .into());
    }
    prepare_dir(dir)?;
    if other {
        let _ = std::fs::remove_file(dir.join("samples.csv"));
    }
    let json = dir.join("results.json");
    if std::fs::read(&json).ok().as_deref() != Some(&input[..]) {
        atomic_write(&json, &input)?;
        report::readable(&json);
    }
    let index = report::write_index(dir, &report::render(&result, WORDING))?;
    let r = Results::of(&result);
    // The answer first, as the survey prints it; then every finding, numbered.
    let answer = report::Answer::of(&r).terminal();
    if !answer.is_empty() {
        println!("{answer}");
    }
    for (i, f) in report::findings(&r, WORDING).iter().enumerate() {
        println!("{:>2}. {}", i + 1, f.text);
    }
    let shown = std::fs::canonicalize(&index).unwrap_or(index);
    println!("Report: {}", shown.display());
    Ok(0)
}
