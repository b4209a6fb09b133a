//! `sleeplab advise`.

use super::args::{self, OutputArgs, ThreadArgs};
use super::outputs::check_outputs;
use super::tail;
use crate::error::UsageError;
use crate::experiments::advise::{AdviseConfig, Need};
use crate::parse;
use clap::Args;

/// `sleeplab advise`: measure the ways of waiting for your case and recommend the one
/// that meets the tolerance at the lowest CPU, with the evidence and a Rust snippet.
#[derive(Debug, Clone, Args)]
pub struct AdviseArgs {
    /// A periodic loop with this period (e.g. 1ms, 16.667ms).
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = args::positive_duration,
          conflicts_with = "duration", required_unless_present = "duration")]
    pub period: Option<u64>,
    /// One-shot waits of this duration.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = args::positive_duration)]
    pub duration: Option<u64>,
    /// Acceptable lateness at the 99th percentile (e.g. 20us).
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = parse::duration_ns)]
    pub tolerance: u64,
    /// Measuring time per candidate, e.g. 2s or 2 (a plain number is seconds, as in every
    /// command).
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = seconds, default_value = "2s")]
    pub seconds: u64,
    /// Afterwards, measure what each per-process machine setting (timer slack, a
    /// real-time policy, nice, pinning, keeping the CPU awake, mlockall…) does to the
    /// recommended way of waiting, and name the best one beside it (a short `tune`).
    #[arg(long)]
    pub tune: bool,
    #[command(flatten)]
    pub threads: ThreadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments that measure from the first second on, for tens of seconds or more
/// ([`super::Command::long_runs`]).
pub const LONG_RUN: Option<&str> = Some("--duration 1ms --tolerance 50us --seconds 60s");

/// Runs `advise`.
pub fn run(args: &AdviseArgs, quiet: bool) -> anyhow::Result<i32> {
    let threads = args.threads.settings()?;
    check_outputs(&[("--json", &args.output.json)])?;
    if let Some(csv) = &args.output.csv {
        return Err(UsageError::new(format!(
            "invalid --csv {:?}: advise writes no CSV (use --json)",
            csv.display().to_string()
        ))
        .into());
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
    let config = AdviseConfig {
        need,
        tolerance_ns: args.tolerance,
        seconds_ns: args.seconds,
        tune: args.tune,
    };
    tail::measure(&config, "advise", quiet, threads)?.save(&args.output, vec![])
}

fn seconds(s: &str) -> Result<u64, crate::parse::ParseError> {
    parse::seconds_ns(s, parse::MAX_DURATION_NS)
}
