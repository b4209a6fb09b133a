//! `sleeplab sweep`.

use super::args::{self, List, OutputArgs, ThreadArgs, supported_contenders};
use super::tail;
use crate::error::UsageError;
use crate::experiments::sweep::{DEFAULT_DURATIONS_NS, Quota, SweepConfig, timertest_durations};
use crate::parse::{self, ParseError, dedup};
use clap::Args;

/// `sleeplab sweep`.
#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    /// Mechanisms to measure, comma-separated (default: every supported one; see `sleeplab list`).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::names("name list"))]
    pub mechanisms: Option<List<String>>,
    /// Requested durations, e.g. 0,1ns,50us,1.5ms,1s (default: 0,1us,10us,100us,1ms,10ms,100ms).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::durations, conflicts_with = "timertest")]
    pub durations: Option<List<u64>>,
    /// Seed 000's 14 durations: 0 and 1 ms to 1000 ms.
    #[arg(long)]
    pub timertest: bool,
    /// Samples per cell (instead of a time budget).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = iterations, conflicts_with = "budget")]
    pub iterations: Option<u64>,
    /// Time budget per cell: samples = budget / duration, within --min/--max-iterations.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = budget, default_value = "200ms")]
    pub budget: u64,
    /// With --budget: at least this many samples per cell.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = iterations, default_value = "5")]
    pub min_iterations: u64,
    /// With --budget: at most this many samples per cell.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = iterations, default_value = "20000")]
    pub max_iterations: u64,
    /// Competing busy threads, a list of levels, e.g. 0,1,2,5.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::loads, default_value = "0")]
    pub load: List<usize>,
    /// Calls per cell kept apart as "first calls" (not in the statistics).
    #[arg(long, allow_hyphen_values = true, value_name = "K", value_parser = args::warmup, default_value = "3")]
    pub warmup: u64,
    /// Interleaved passes over all cells: the units a cell's verdicts rest on (an
    /// interval over rounds needs 8).
    #[arg(long, allow_hyphen_values = true, value_name = "R", value_parser = rounds, default_value = "10")]
    pub rounds: u64,
    /// Timer slack(s) to measure under, e.g. 50us,1ns (default: leave it as it is).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::slacks)]
    pub timer_slack: Option<List<u64>>,
    /// Raw samples per cell kept in the JSON (the CSV gets all kept samples).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = args::json_samples, default_value = "1000")]
    pub json_samples: u64,
    /// Split each wake's lateness with the kernel's tracepoints (timer slack, timer
    /// interrupt, run queue, …; as root; see `sleeplab explain`).
    #[arg(long)]
    pub trace: bool,
    #[command(flatten)]
    pub threads: ThreadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments that measure from the first second on, for tens of seconds or more
/// ([`super::Command::long_runs`]).
pub const LONG_RUN: Option<&str> =
    Some("--mechanisms nanosleep,yield,spin-sleep --durations 0,1ms --iterations 5000 --load 0,1");

fn budget(s: &str) -> Result<u64, ParseError> {
    parse::positive_duration_ns("budget", s)
}

fn iterations(s: &str) -> Result<u64, ParseError> {
    parse::count("count", s, 1, 1_000_000_000)
}

fn rounds(s: &str) -> Result<u64, ParseError> {
    parse::count("rounds", s, 1, 1_000)
}

/// Builds the sweep's config from the arguments (validating names).
pub fn config(args: &SweepArgs) -> Result<SweepConfig, UsageError> {
    let mechanisms = supported_contenders(args.mechanisms.as_ref())?;
    let durations_ns = if args.timertest {
        timertest_durations()
    } else {
        args.durations
            .as_ref()
            .map_or_else(|| DEFAULT_DURATIONS_NS.to_vec(), |l| l.0.clone())
    };
    let quota = match args.iterations {
        Some(count) => Quota::Iterations { count },
        None => {
            if args.min_iterations > args.max_iterations {
                return Err(UsageError::new(format!(
                    "invalid --min-iterations {}: more than --max-iterations {}",
                    args.min_iterations, args.max_iterations
                )));
            }
            Quota::Budget {
                budget_ns: args.budget,
                min_count: args.min_iterations,
                max_count: args.max_iterations,
            }
        }
    };
    Ok(SweepConfig {
        mechanisms,
        durations_ns,
        loads: dedup(&args.load.0),
        timer_slacks_ns: args
            .timer_slack
            .as_ref()
            .map_or_else(Vec::new, |l| l.0.clone()),
        quota,
        warmup: args.warmup,
        rounds: args.rounds,
        json_samples: args.json_samples as usize,
        raw_cap: 100_000,
        focus: vec![],
        trace: args.trace,
    })
}

/// Runs the sweep, prints its tables, writes the requested files.
pub fn run(args: &SweepArgs, quiet: bool) -> anyhow::Result<i32> {
    tail::measure_and_save("sweep", quiet, &args.threads, &args.output, || config(args))
}
