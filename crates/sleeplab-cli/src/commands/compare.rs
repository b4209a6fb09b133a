//! `sleeplab compare`: two results side by side, with ratios b/a of the median and p99
//! of every measurement both hold, in the terminal and optionally as HTML.

use super::outputs::prepare_dir;
use crate::error::UsageError;
use crate::model::load_result;
use crate::report::{self, compare::compare};
use clap::Args;
use std::path::PathBuf;

/// `sleeplab compare A.json B.json [-o DIR]`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The first result ("a", the baseline).
    #[arg(value_name = "A.json")]
    pub a: PathBuf,
    /// The second result ("b"); ratios are b/a.
    #[arg(value_name = "B.json")]
    pub b: PathBuf,
    /// Also write the comparison as DIR/index.html.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// Runs `sleeplab compare`.
pub fn run(args: &CompareArgs) -> anyhow::Result<i32> {
    let a = load_result(&args.a).map_err(UsageError::from)?;
    let b = load_result(&args.b).map_err(UsageError::from)?;
    let (an, bn) = (args.a.display().to_string(), args.b.display().to_string());
    let c = compare(&a, &b, &an, &bn).map_err(|e| UsageError::new(e.0))?;
    if let Some(dir) = &args.output {
        prepare_dir(dir)?;
    }
    print!("{}", c.terminal());
    if let Some(dir) = &args.output {
        let index = report::write_index(dir, &c.page().render())?;
        let shown = std::fs::canonicalize(&index).unwrap_or(index);
        println!("Report: {}", shown.display());
    }
    Ok(0)
}
