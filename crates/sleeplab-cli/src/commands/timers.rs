//! `sleeplab timers`: periodic timers compared (seed 004).

use super::args::{self, List, OutputArgs, ThreadArgs, supported};
use super::outputs::check_outputs;
use super::tail;
use crate::error::UsageError;
use crate::experiments::timers::{self, TimersConfig, mechanisms};
use crate::parse::{self, Names, ParseError, dedup};
use clap::Args;
use sleeplab_stats::fmt_ns;
use std::path::PathBuf;

/// The periods `--periods` defaults to.
const DEFAULT_PERIODS: &str = "100ms,50ms,20ms,10ms,5ms,2ms,1ms";

/// `--mechanisms`' help: every periodic mechanism, from the registry.
fn mechanisms_help() -> String {
    let names = mechanisms::names();
    format!(
        "Mechanisms, comma-separated (default: all {}): {}.",
        names.len(),
        names.join(", ")
    )
}

/// `--seconds`' help, with the default run's total from the registry and the default
/// periods.
fn seconds_help() -> String {
    let (m, p) = (
        mechanisms::names().len(),
        DEFAULT_PERIODS.split(',').count(),
    );
    format!(
        "How long each mechanism runs at each period (one contiguous run per cell), e.g. 1 \
         (a plain number is seconds, as in every command), 0.5, 250ms; at most 3600 s. \
         Total ≈ mechanisms × periods × seconds: {m} × {p} × 1 s ≈ {} s by default.",
        m * p
    )
}

/// Most deadlines one thread may be asked for in one cell (bounded memory).
const MAX_TICKS_PER_CELL: u64 = 2_000_000;

/// `sleeplab timers`: every mechanism runs for `--seconds` at each period (period-major,
/// one contiguous run per cell); every wake is accounted against `t0 + k·period`.
#[derive(Debug, Clone, Args)]
pub struct TimersArgs {
    /// Mechanisms, comma-separated (the help lists the registry's: `mechanisms_help`).
    #[arg(long, help = mechanisms_help(), allow_hyphen_values = true, value_name = "LIST", value_parser = args::names("mechanism list"))]
    pub mechanisms: Option<List<String>>,
    /// Periods, e.g. 100ms,1ms,500us.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = periods, default_value = DEFAULT_PERIODS)]
    pub periods: List<u64>,
    /// How long each mechanism runs at each period (the help states the default total:
    /// `seconds_help`).
    #[arg(long, help = seconds_help(), allow_hyphen_values = true, value_name = "DURATION", value_parser = seconds, default_value = "1")]
    pub seconds: u64,
    /// Measuring threads per cell, each with its own timer (as cyclictest -t N).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = thread_count, default_value = "1")]
    pub threads: usize,
    /// Competing busy threads, a list of levels, e.g. 0,1,2.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::loads, default_value = "0")]
    pub load: List<usize>,
    /// Timer slack(s) to measure under, e.g. 50us,1ns (default: leave it as it is).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::slacks)]
    pub timer_slack: Option<List<u64>>,
    /// Write a cyclictest-style latency histogram (1 µs buckets) to FILE.
    #[arg(long, allow_hyphen_values = true, value_name = "FILE")]
    pub histogram: Option<PathBuf>,
    /// Largest latency the histogram tracks, µs (later ones are overflows).
    #[arg(long, allow_hyphen_values = true, value_name = "US", value_parser = histogram_max, default_value = "1000")]
    pub histogram_max: u64,
    /// Lateness samples per thread and cell kept in the JSON (the CSV gets all).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = args::json_samples, default_value = "1000")]
    pub json_samples: u64,
    /// Split each wake's lateness with the kernel's tracepoints (timer interrupt, run
    /// queue, …; as root; see `sleeplab explain`). Wakes delivered outside the measuring
    /// threads (posix-timer-thread's callbacks, setitimer's child) are not traced.
    #[arg(long)]
    pub trace: bool,
    #[command(flatten)]
    pub threads_args: ThreadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments that measure from the first second on, for tens of seconds or more
/// ([`super::Command::long_runs`]).
pub const LONG_RUN: Option<&str> =
    Some("--mechanisms timerfd-interval,busy-wait --periods 1ms --seconds 60 --load 1");

fn periods(s: &str) -> Result<List<u64>, ParseError> {
    parse::list("period list", s, |x| {
        let ns = parse::duration_ns(x)?;
        if ns < 1_000 {
            return Err(ParseError {
                what: "period",
                value: x.into(),
                reason: "must be at least 1us".into(),
            });
        }
        Ok(ns)
    })
    .map(List)
}

fn seconds(s: &str) -> Result<u64, ParseError> {
    parse::seconds_ns(s, 3_600_000_000_000)
}

fn thread_count(s: &str) -> Result<usize, ParseError> {
    parse::count("thread count", s, 1, 64).map(|n| n as usize)
}

fn histogram_max(s: &str) -> Result<u64, ParseError> {
    parse::count("histogram maximum (µs)", s, 1, 1_000_000)
}

/// Builds the config from the arguments (validating names and periods).
pub fn config(args: &TimersArgs) -> anyhow::Result<TimersConfig> {
    let mechanisms_list = supported(
        args.mechanisms.as_ref(),
        Names::new("mechanism", mechanisms::names()).otherwise("see `sleeplab timers --help`"),
        |n| Some(mechanisms::support(n)),
    )?;
    let periods_ns = dedup(&args.periods.0);
    for &p in &periods_ns {
        if p > args.seconds {
            return Err(UsageError::new(format!(
                "invalid --periods {}: longer than --seconds {} (no tick would be due)",
                fmt_ns(p),
                fmt_ns(args.seconds)
            ))
            .into());
        }
        if args.seconds / p > MAX_TICKS_PER_CELL {
            return Err(UsageError::new(format!(
                "invalid --periods {}: {} ticks per cell at --seconds {} (at most {MAX_TICKS_PER_CELL})",
                fmt_ns(p),
                args.seconds / p,
                fmt_ns(args.seconds)
            ))
            .into());
        }
    }
    Ok(TimersConfig {
        mechanisms: mechanisms_list,
        periods_ns,
        duration_ns: args.seconds,
        threads: args.threads,
        loads: dedup(&args.load.0),
        timer_slacks_ns: args
            .timer_slack
            .as_ref()
            .map_or_else(Vec::new, |l| dedup(&l.0)),
        json_samples: args.json_samples as usize,
        trace: args.trace,
    })
}

/// Runs `timers`, prints its tables, writes the requested files.
pub fn run(args: &TimersArgs, quiet: bool) -> anyhow::Result<i32> {
    let threads = args.threads_args.settings()?;
    check_outputs(&[
        ("--json", &args.output.json),
        ("--csv", &args.output.csv),
        ("--histogram", &args.histogram),
    ])?;
    let config = config(args)?;
    let cells = timers::cell_count(&config);
    let total_s = cells as f64 * config.duration_ns as f64 / 1e9;
    if !quiet {
        eprintln!(
            "timers: {} mechanisms × {} periods × {} = {cells} cells, about {total_s:.0} s \
             (shorten with --mechanisms and --seconds)",
            config.mechanisms.len(),
            config.periods_ns.len(),
            fmt_ns(config.duration_ns),
        );
    }
    let title = format!("timers ~{total_s:.0}s");
    let mut run = tail::measure(&config, &title, quiet, threads)?;
    if config.mechanisms.iter().any(|m| m == "ticker") && config.timer_slacks_ns.is_empty() {
        run.note(
            "ticker ran with timer slack 1 ns (PreciseSleeper's default); the others with the \
             inherited slack"
                .into(),
        );
    }
    let histogram = match &args.histogram {
        Some(p) => vec![(
            p.clone(),
            timers::histogram_text(run.data(), args.histogram_max).into_bytes(),
        )],
        None => vec![],
    };
    run.save(&args.output, histogram)
}
