//! The command line (clap derive). Values are parsed by [`crate::parse`], so a bad
//! value is reported with its text, in one line, with exit code 2.

use crate::parse::{self, ParseError};
use crate::settings::ThreadArgs;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// sleeplab: how long does waiting really take here, and why?
#[derive(Debug, Parser)]
#[command(name = "sleeplab", version, about, long_about = None)]
pub struct Cli {
    /// No progress bars.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// The survey's options, for `sleeplab` without a subcommand (= `sleeplab survey`).
    #[command(flatten)]
    pub survey: crate::commands::survey::SurveyArgs,
    /// The experiment to run (default: the survey).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Every experiment in short (about 90 s), then a report directory and the findings (the default).
    Survey(Box<crate::commands::survey::SurveyArgs>),
    /// Re-render a saved result (any experiment's --json, or a survey) as DIR/index.html.
    Report(Box<crate::commands::report::ReportArgs>),
    /// Two results side by side, with ratios b/a of every matching median and p99.
    Compare(Box<crate::commands::compare::CompareArgs>),
    /// List every wait mechanism, what it calls, and whether this machine supports it.
    List,
    /// Requested duration × mechanism × load → how long the wait really took (seed 000).
    Sweep(Box<SweepArgs>),
    /// A fixed-rate loop (60 FPS) per precise-sleep contender: error and CPU (seed 002).
    Pace(Box<crate::commands::pace::PaceArgs>),
    /// CPU usage against requested sleep for the hybrid sleep+spin strategies (seed 002).
    Cpu(Box<crate::commands::cpu::CpuArgs>),
    /// Which way of waiting meets your tolerance at the lowest CPU here, with evidence.
    Advise(Box<crate::commands::advise::AdviseArgs>),
    /// What zero and minimal sleeps really cost, per mechanism, with 99.9 % CIs (seed 001).
    Short(Box<crate::commands::short::ShortArgs>),
    /// Every language runtime's own sleep, measured the same way through probes (seed 003).
    Runtimes(Box<crate::commands::runtimes::RuntimesArgs>),
    /// Periodic timers compared: count, avg error %, σ, lateness, missed ticks (seed 004).
    Timers(Box<crate::commands::timers::TimersArgs>),
    /// The precise-sleep strategies under virtual schedulers: error and CPU heatmaps (seed 002 fig. 4).
    Simulate(Box<crate::commands::simulate::SimulateArgs>),
    /// Print the JSON Schema of result files.
    Schema {
        /// Write it to this file instead of stdout.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// A comma-separated list given as one argument (a newtype so clap keeps it one value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List<T>(pub Vec<T>);

/// Where results go.
#[derive(Debug, Clone, Args, Default)]
pub struct OutputArgs {
    /// Write the whole result as JSON (schema: `sleeplab schema`).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write raw samples as long-form CSV.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

/// `sleeplab sweep`.
#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    /// Mechanisms to measure, comma-separated (default: every supported one; see `sleeplab list`).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = names)]
    pub mechanisms: Option<List<String>>,
    /// Requested durations, e.g. 0,1ns,50us,1.5ms,1s (default: 0,1us,10us,100us,1ms,10ms,100ms).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = durations, conflicts_with = "timertest")]
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
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = loads, default_value = "0")]
    pub load: List<usize>,
    /// Calls per cell kept apart as "first calls" (not in the statistics).
    #[arg(long, allow_hyphen_values = true, value_name = "K", value_parser = warmup, default_value = "3")]
    pub warmup: u64,
    /// Interleaved passes over all cells.
    #[arg(long, allow_hyphen_values = true, value_name = "R", value_parser = rounds, default_value = "5")]
    pub rounds: u64,
    /// Timer slack(s) to measure under, e.g. 50us,1ns (default: leave it as it is).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = slacks)]
    pub timer_slack: Option<List<u64>>,
    /// Raw samples per cell kept in the JSON (the CSV gets all kept samples).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = json_samples, default_value = "1000")]
    pub json_samples: u64,
    #[command(flatten)]
    pub threads: ThreadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn durations(s: &str) -> Result<List<u64>, ParseError> {
    parse::list("duration list", s, parse::duration_ns).map(List)
}

/// A list of timer slacks (each at least 1 ns), shared by every command with `--timer-slack LIST`.
pub fn slacks(s: &str) -> Result<List<u64>, ParseError> {
    parse::list("timer slack list", s, parse::slack_ns).map(List)
}

fn budget(s: &str) -> Result<u64, ParseError> {
    parse::positive_duration_ns("budget", s)
}

fn iterations(s: &str) -> Result<u64, ParseError> {
    parse::count("count", s, 1, 1_000_000_000)
}

fn warmup(s: &str) -> Result<u64, ParseError> {
    parse::count("warm-up count", s, 0, 100_000)
}

fn rounds(s: &str) -> Result<u64, ParseError> {
    parse::count("rounds", s, 1, 1_000)
}

fn json_samples(s: &str) -> Result<u64, ParseError> {
    parse::count("JSON sample cap", s, 0, 10_000_000)
}

/// A list of load levels (busy threads, 0–1024), shared by every command with `--load LIST`.
pub fn loads(s: &str) -> Result<List<usize>, ParseError> {
    parse::list("load list", s, |x| {
        parse::count("load", x, 0, 1024).map(|n| n as usize)
    })
    .map(List)
}

fn names(s: &str) -> Result<List<String>, ParseError> {
    parse::list("name list", s, |x| Ok(x.to_string())).map(List)
}
