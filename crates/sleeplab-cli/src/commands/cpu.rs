//! `sleeplab cpu`.

use super::pace::resolve_strategies;
use super::{check_outputs, save};
use crate::cli::{List, OutputArgs};
use crate::experiments::cpu::{self, CpuConfig};
use crate::model::{ExperimentData, RunStart};
use crate::output::Progress;
use crate::parse::{self, ParseError};
use crate::settings::ThreadArgs;
use clap::Args;

/// `sleeplab cpu`: CPU usage against requested sleep for the hybrid strategies
/// (seed 002 figure 3).
#[derive(Debug, Clone, Args)]
pub struct CpuArgs {
    /// Contenders (default: the hybrids seed-hybrid, sdl-precise, fixed-margin, spin-sleep, precise).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = names)]
    pub strategies: Option<List<String>>,
    /// Requested sleeps.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = intervals,
          default_value = "1ms,2ms,3ms,4ms,5ms,6ms,8ms,10ms,15ms,20ms,25ms")]
    pub intervals: List<u64>,
    /// Wall time per point (the seed used 5–10 s; 0.5 s keeps the default run under a minute).
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

fn names(s: &str) -> Result<List<String>, ParseError> {
    parse::list("strategy list", s, |x| Ok(x.to_string())).map(List)
}

fn intervals(s: &str) -> Result<List<u64>, ParseError> {
    parse::list("interval list", s, |x| {
        parse::positive_duration_ns("interval", x)
    })
    .map(List)
}

fn seconds(s: &str) -> Result<u64, ParseError> {
    parse::positive_duration_ns("duration per point", s)
}

/// The default contenders: the strategies that mix sleeping and spinning.
pub const HYBRIDS: [&str; 5] = [
    "seed-hybrid",
    "sdl-precise",
    "fixed-margin",
    "spin-sleep",
    "precise",
];

/// Runs `cpu`.
pub fn run(args: &CpuArgs, quiet: bool) -> anyhow::Result<i32> {
    args.threads.validate()?;
    check_outputs(&[("--json", &args.output.json), ("--csv", &args.output.csv)])?;
    let strategies = match &args.strategies {
        Some(l) => resolve_strategies(Some(l))?,
        None => HYBRIDS.iter().map(|s| s.to_string()).collect(),
    };
    let config = CpuConfig {
        strategies,
        intervals_ns: args.intervals.0.clone(),
        seconds_ns: args.seconds,
        timer_slack_ns: Some(args.timer_slack),
    };
    let start = RunStart::now();
    let steps = (config.strategies.len() * config.intervals_ns.len()) as u64;
    let progress = Progress::new("cpu", steps, quiet);
    let (data, settings, complete) = cpu::run(&config, &args.threads, &progress)?;
    progress.finish();
    print!("{}", cpu::render(&data));
    let csv_data = data.clone();
    let result = start.finish(ExperimentData::Cpu(data), settings, complete, vec![]);
    save(&result, args.output.json.as_deref(), || {
        match &args.output.csv {
            Some(p) => cpu::write_csv(p, &csv_data),
            None => Ok(()),
        }
    })
}
