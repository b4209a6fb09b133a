//! `sleeplab pace`.

use super::args::{self, List, OutputArgs, ThreadArgs};
use super::outputs::check_outputs;
use super::tail;
use crate::contenders::strategies;
use crate::error::UsageError;
use crate::experiments::pace::{DEFAULT_STRATEGIES, PaceConfig};
use crate::parse::{self, Names, ParseError};
use clap::Args;

/// `sleeplab pace`: a fixed-rate loop per precise-sleep contender (seed 002 figure 1).
#[derive(Debug, Clone, Args)]
pub struct PaceArgs {
    /// Contenders, comma-separated. Known: std-sleep, clock-nanosleep-abs, spin,
    /// seed-hybrid, sdl-precise, fixed-margin, spin-sleep, precise. Default: std-sleep,
    /// spin, seed-hybrid, sdl-precise, spin-sleep, precise (6 × 500 frames at 60 Hz = 50 s).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::names("strategy list"))]
    pub strategies: Option<List<String>>,
    /// Frames per second.
    #[arg(long, allow_hyphen_values = true, value_name = "HZ", default_value = "60", value_parser = rate)]
    pub rate: f64,
    /// Frames per contender.
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value = "500", value_parser = frames)]
    pub frames: u64,
    /// Frames per interleaved block (contenders take turns block by block).
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value = "50", value_parser = frames)]
    pub block: u64,
    /// Busy work per frame before the wait (e.g. 2ms), as a game would update its state.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", default_value = "0", value_parser = parse::duration_ns)]
    pub work: u64,
    /// Timer slack for every contender (the same for all, so the comparison is fair).
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", default_value = "1ns", value_parser = parse::slack_ns)]
    pub timer_slack: u64,
    /// Raw frame errors per contender kept in the JSON.
    #[arg(long, value_name = "N", default_value = "1000")]
    pub json_samples: usize,
    #[command(flatten)]
    pub threads: ThreadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn frames(s: &str) -> Result<u64, ParseError> {
    parse::count("frame count", s, 1, 10_000_000)
}

fn rate(s: &str) -> Result<f64, ParseError> {
    let bad = |reason: &str| ParseError {
        what: "rate",
        value: s.into(),
        reason: reason.into(),
    };
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| bad("not a number of frames per second"))?;
    if !v.is_finite() || v <= 0.0 {
        return Err(bad("must be a positive, finite number"));
    }
    if !(0.1..=100_000.0).contains(&v) {
        return Err(bad("must be between 0.1 and 100000 Hz"));
    }
    Ok(v)
}

/// Resolves contender names against the registry (with a suggestion for typos);
/// `None` gives `defaults`. Used by `pace` and `cpu`.
pub fn resolve_strategies(
    given: Option<&List<String>>,
    defaults: &[&str],
) -> Result<Vec<String>, UsageError> {
    match given {
        None => Ok(defaults.iter().map(|s| s.to_string()).collect()),
        Some(list) => Ok(Names::new("strategy", strategies::names()).resolve(&list.0)?),
    }
}

/// Builds the config from the arguments.
pub fn config(args: &PaceArgs) -> Result<PaceConfig, UsageError> {
    let period_ns = (1e9 / args.rate).round() as u64;
    if args.work >= period_ns {
        return Err(UsageError::new(format!(
            "invalid --work {}: not shorter than the frame period {} ns",
            args.work, period_ns
        )));
    }
    Ok(PaceConfig {
        strategies: resolve_strategies(args.strategies.as_ref(), &DEFAULT_STRATEGIES)?,
        rate_hz: args.rate,
        period_ns,
        frames: args.frames,
        block: args.block.min(args.frames),
        work_ns: args.work,
        timer_slack_ns: Some(args.timer_slack),
        json_samples: args.json_samples,
    })
}

/// Runs `pace`.
pub fn run(args: &PaceArgs, quiet: bool) -> anyhow::Result<i32> {
    let threads = args.threads.settings()?;
    check_outputs(&[("--json", &args.output.json), ("--csv", &args.output.csv)])?;
    let config = config(args)?;
    tail::measure(&config, "pace", quiet, threads)?.save(&args.output, vec![])
}
