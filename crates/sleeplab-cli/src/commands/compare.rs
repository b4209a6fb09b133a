//! `sleeplab compare`: two results side by side, with ratios b/a of the median and p99
//! of every measurement both hold (judged on each run's own units, said to leave
//! run-to-run variation out); or three and more (a fleet: one row per machine, the
//! outliers named); or two sides of three or more runs each (`--against`: the runs as
//! the units), in the terminal, optionally as HTML and as JSON.

use super::hints::WORDING;
use super::outputs::{check_outputs, prepare_dir};
use crate::error::UsageError;
use crate::model::{ResultFile, load_result};
use crate::report::{self, Fleet, Matched, Pair, Sides, View};
use clap::Args;
use sleeplab_stats::{MIN_RUNS, atomic_write};
use std::path::PathBuf;

/// `sleeplab compare A.json B.json [C.json …] [-o DIR] [--json FILE]`, or
/// `sleeplab compare A1.json A2.json A3.json --against B1.json B2.json B3.json`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The results. Two: the first is the baseline ("a"), ratios are b/a. Three or more:
    /// a fleet, one row per machine, and the machines whose median of a measurement is
    /// more than ×2 the fleet median of it named as outliers. With --against: side a.
    #[arg(value_name = "RESULT.json", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Side b: runs of the same thing as side a under the other condition. One result a
    /// side is the pair (within-run intervals); three or more a side take the runs as the
    /// units (each run's median; the sides' geometric means and b/a with intervals over
    /// the runs).
    #[arg(long, value_name = "RESULT.json", num_args = 1..)]
    pub against: Vec<PathBuf>,
    /// Also write the comparison as DIR/index.html.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Also write the fleet report (machines, matched medians, outliers, sentences) as
    /// JSON; for two results too (see docs/RESULTS.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// None: `compare` measures nothing (it reads results).
pub const LONG_RUN: Option<&str> = None;

/// Runs `sleeplab compare`.
pub fn run(args: &CompareArgs, _quiet: bool) -> anyhow::Result<i32> {
    if args.files.len() + args.against.len() < 2 {
        return Err(UsageError::new(format!(
            "compare needs at least two result files (A.json B.json [C.json …]), got one: {}",
            args.files[0].display()
        ))
        .into());
    }
    let sides = sides(args)?;
    check_outputs(&[("--json", &args.json)])?;
    let files: Vec<&PathBuf> = args.files.iter().chain(&args.against).collect();
    let results: Vec<ResultFile> = files
        .iter()
        .map(|f| load_result(f).map_err(UsageError::from))
        .collect::<Result<_, _>>()?;
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let named: Vec<(String, &ResultFile)> = names.iter().cloned().zip(&results).collect();
    let matched = Matched::of(&named).map_err(|e| UsageError::new(e.0))?;
    // Each result's host noise, and the pairs whose noise differs beyond its intervals.
    let noise: Vec<(&str, _)> = named
        .iter()
        .map(|(n, r)| (n.as_str(), r.host_noise.as_ref()))
        .collect();
    let noise = crate::model::host_noise::compare_lines(&noise);
    if let Some(a) = sides {
        return show(&Sides::of(&matched, a, WORDING).rendered(), &noise, args);
    }
    // Two results are shown as a pair (a, b and the ratios); three or more as a fleet,
    // which --json writes for two as well.
    let pair = Pair::of(&matched);
    let fleet = (pair.is_none() || args.json.is_some()).then(|| Fleet::of(&matched));
    let shown = pair
        .as_ref()
        .map(Pair::rendered)
        .or_else(|| fleet.as_ref().map(Fleet::rendered))
        .unwrap_or_default();
    if let (Some(path), Some(f)) = (&args.json, &fleet) {
        atomic_write(path, &serde_json::to_vec_pretty(f)?)?;
    }
    show(&shown, &noise, args)
}

/// With `--against`: how many results side a holds, where both sides have three or
/// more (the runs as the units); `None` for one result a side (the pair) or without
/// `--against`. Any other split is the user's to fix, and so is `--json` with sides of
/// runs (it writes a fleet).
fn sides(args: &CompareArgs) -> Result<Option<usize>, UsageError> {
    let (a, b) = (args.files.len(), args.against.len());
    match (a, b) {
        (_, 0) | (1, 1) => Ok(None),
        (a, b) if a >= MIN_RUNS && b >= MIN_RUNS => {
            if args.json.is_some() {
                return Err(UsageError::new(
                    "--json writes a fleet report; it does not go with --against sides of runs (drop --json, or --against for a fleet)",
                ));
            }
            Ok(Some(a))
        }
        (a, b) => Err(UsageError::new(format!(
            "invalid --against: {a} result(s) against {b}; give one a side (within-run intervals) or {MIN_RUNS} or more a side (the runs as the units)"
        ))),
    }
}

/// Prints the results' host `noise` lines and `shown`, and writes its page where `-o`
/// asks (checked first: a bad `-o` prints nothing).
fn show(shown: &crate::report::Rendered, noise: &str, args: &CompareArgs) -> anyhow::Result<i32> {
    if let Some(dir) = &args.output {
        prepare_dir(dir)?;
    }
    print!("{noise}");
    print!(
        "{}",
        sleeplab_stats::fit_lines(&shown.terminal(), sleeplab_stats::terminal_width())
    );
    if let Some(dir) = &args.output {
        let index = report::write_index(dir, &shown.page().render())?;
        let shown = std::fs::canonicalize(&index).unwrap_or(index);
        println!("Report: {}", shown.display());
    }
    Ok(0)
}
