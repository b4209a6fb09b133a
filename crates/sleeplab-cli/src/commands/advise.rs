//! `sleeplab advise`.

use super::{check_outputs, save};
use crate::cli::OutputArgs;
use crate::error::UsageError;
use crate::experiments::advise::{self, CANDIDATES, Need};
use crate::model::{ExperimentData, RunStart};
use crate::output::Progress;
use crate::parse::{self, ParseError};
use crate::settings::ThreadArgs;
use clap::Args;

/// `sleeplab advise`: measure the ways of waiting for your case and recommend the one
/// that meets the tolerance at the lowest CPU, with the evidence and a Rust snippet.
#[derive(Debug, Clone, Args)]
pub struct AdviseArgs {
    /// A periodic loop with this period (e.g. 1ms, 16.667ms).
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = positive,
          conflicts_with = "duration", required_unless_present = "duration")]
    pub period: Option<u64>,
    /// One-shot waits of this duration.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = positive)]
    pub duration: Option<u64>,
    /// Acceptable lateness at the 99th percentile (e.g. 20us).
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = parse::duration_ns)]
    pub tolerance: u64,
    /// Measuring time per candidate.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = positive, default_value = "2s")]
    pub seconds: u64,
    #[command(flatten)]
    pub threads: ThreadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn positive(s: &str) -> Result<u64, ParseError> {
    parse::positive_duration_ns("duration", s)
}

/// Runs `advise`.
pub fn run(args: &AdviseArgs, quiet: bool) -> anyhow::Result<i32> {
    args.threads.validate()?;
    check_outputs(&[("--json", &args.output.json)])?;
    if args.output.csv.is_some() {
        return Err(UsageError::new("invalid --csv: advise writes no CSV (use --json)").into());
    }
    let need = match (args.period, args.duration) {
        (Some(p), None) => Need::Period { period_ns: p },
        (None, Some(d)) => Need::Duration { duration_ns: d },
        _ => return Err(UsageError::new("give exactly one of --period or --duration").into()),
    };
    if let Need::Period { period_ns } = need
        && period_ns > args.seconds / 20
    {
        return Err(UsageError::new(format!(
            "invalid --seconds {}: shorter than 20 periods of {} ns",
            args.seconds, period_ns
        ))
        .into());
    }
    let start = RunStart::now();
    let steps = match need {
        Need::Period { period_ns } => {
            (args.seconds / period_ns).clamp(20, 1_000_000) * (CANDIDATES.len() as u64 + 1)
        }
        Need::Duration { .. } => CANDIDATES.len() as u64 + 1,
    };
    let progress = Progress::new("advise", steps, quiet);
    let (data, settings, complete) = advise::run(
        &need,
        args.tolerance,
        args.seconds,
        &args.threads,
        &progress,
    )?;
    progress.finish();
    print!("{}", advise::render(&data));
    let result = start.finish(ExperimentData::Advise(data), settings, complete, vec![]);
    save(&result, args.output.json.as_deref(), || Ok(()))
}
