//! `sleeplab compare`: two results side by side, with ratios b/a of the median and p99
//! of every measurement both hold; or three and more (a fleet: one row per machine,
//! the outliers named), in the terminal, optionally as HTML and as JSON.

use super::outputs::{check_outputs, prepare_dir};
use crate::error::UsageError;
use crate::model::{ResultFile, load_result};
use crate::output::atomic_write;
use crate::report::{
    self,
    compare::{Fleet, Matched, Pair, View},
};
use clap::Args;
use std::path::PathBuf;

/// `sleeplab compare A.json B.json [C.json …] [-o DIR] [--json FILE]`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The results. Two: the first is the baseline ("a"), ratios are b/a. Three or more:
    /// a fleet, one row per machine, and the machines whose median of a measurement is
    /// more than ×2 the fleet median of it named as outliers.
    #[arg(value_name = "RESULT.json", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Also write the comparison as DIR/index.html.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Also write the fleet report (machines, matched medians, outliers, sentences) as
    /// JSON; for two results too (see docs/RESULTS.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// Runs `sleeplab compare`.
pub fn run(args: &CompareArgs) -> anyhow::Result<i32> {
    if args.files.len() < 2 {
        return Err(UsageError::new(format!(
            "compare needs at least two result files (A.json B.json [C.json …]), got one: {}",
            args.files[0].display()
        ))
        .into());
    }
    check_outputs(&[("--json", &args.json)])?;
    let results: Vec<ResultFile> = args
        .files
        .iter()
        .map(|f| load_result(f).map_err(UsageError::from))
        .collect::<Result<_, _>>()?;
    let names: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
    let named: Vec<(String, &ResultFile)> = names.iter().cloned().zip(&results).collect();
    let matched = Matched::of(&named).map_err(|e| UsageError::new(e.0))?;
    // Two results are shown as a pair (a, b and the ratios); three or more as a fleet,
    // which --json writes for two as well.
    let pair = Pair::of(&matched);
    let fleet = (pair.is_none() || args.json.is_some()).then(|| Fleet::of(&matched));
    let shown = pair
        .as_ref()
        .map(Pair::rendered)
        .or_else(|| fleet.as_ref().map(Fleet::rendered))
        .unwrap_or_default();
    if let Some(dir) = &args.output {
        prepare_dir(dir)?;
    }
    print!("{}", shown.terminal());
    if let (Some(path), Some(f)) = (&args.json, &fleet) {
        atomic_write(path, &serde_json::to_vec_pretty(f)?)?;
    }
    if let Some(dir) = &args.output {
        let index = report::write_index(dir, &shown.page().render())?;
        let shown = std::fs::canonicalize(&index).unwrap_or(index);
        println!("Report: {}", shown.display());
    }
    Ok(0)
}
