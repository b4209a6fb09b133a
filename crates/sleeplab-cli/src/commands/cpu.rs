//! `sleeplab cpu`.

use super::args::{self, List, OutputArgs, ThreadArgs};
use super::outputs::check_outputs;
use super::pace::resolve_strategies;
use super::tail;
use crate::experiments::cpu::{CpuConfig, HYBRIDS};
use crate::parse::{self, ParseError};
use clap::Args;

/// `sleeplab cpu`: CPU usage against requested sleep for the hybrid strategies
/// (seed 002 figure 3).
#[derive(Debug, Clone, Args)]
pub struct CpuArgs {
    /// Contenders (default: the hybrids seed-hybrid, sdl-precise, fixed-margin, spin-sleep, precise).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::names("strategy list"))]
    pub strategies: Option<List<String>>,
    /// Requested sleeps.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = intervals,
          default_value = "1ms,2ms,3ms,4ms,5ms,6ms,8ms,10ms,15ms,20ms,25ms")]
    pub intervals: List<u64>,
    /// Wall time per point, e.g. 500ms or 2 (a plain number is seconds, as in every
    /// command); the seed used 5–10 s, 0.5 s keeps the default run under a minute.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", default_value = "500ms", value_parser = seconds)]
    pub seconds: u64,
    /// Timer slack for every contender.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", default_value = "1ns", value_parser = parse::slack_ns)]
    pub timer_slack: u64,
    #[command(flatten)]
    pub threads: ThreadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments that measure from the first second on, for tens of seconds or more
/// ([`super::Command::long_runs`]).
pub const LONG_RUN: Option<&str> =
    Some("--strategies precise,seed-hybrid --intervals 1ms,2ms --seconds 60s");

fn intervals(s: &str) -> Result<List<u64>, ParseError> {
    parse::list("interval list", s, |x| {
        parse::positive_duration_ns("interval", x)
    })
    .map(List)
}

fn seconds(s: &str) -> Result<u64, ParseError> {
    parse::seconds_ns(s, parse::MAX_DURATION_NS)
}

/// Runs `cpu`.
pub fn run(args: &CpuArgs, quiet: bool) -> anyhow::Result<i32> {
    let threads = args.threads.settings()?;
    check_outputs(&[("--json", &args.output.json), ("--csv", &args.output.csv)])?;
    let config = CpuConfig {
        strategies: resolve_strategies(args.strategies.as_ref(), &HYBRIDS)?,
        intervals_ns: args.intervals.0.clone(),
        seconds_ns: args.seconds,
        timer_slack_ns: Some(args.timer_slack),
        blocks: 1,
    };
    tail::measure(&config, "cpu", quiet, threads)?.save(&args.output, vec![])
}
