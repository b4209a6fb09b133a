//! `sleeplab short`.

use super::args::{self, List, OutputArgs, ThreadArgs, supported};
use super::tail;
use crate::error::UsageError;
use crate::experiments::short::{CONFIDENCE, MIN_BATCH, ShortConfig};
use crate::parse::{self, Names, ParseError, dedup};
use clap::Args;
use sleeplab::wait;

/// `sleeplab short`: what a zero and a minimal sleep really cost, per mechanism (seed 001).
/// `--help` explains the method and the choice of batch length.
#[derive(Debug, Clone, Args)]
#[command(after_help = AFTER_HELP)]
pub struct ShortArgs {
    /// Mechanisms to measure, comma-separated (default: every supported one; see `sleeplab list`).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::names("name list"))]
    pub mechanisms: Option<List<String>>,
    /// Calls per batch, at most (the seed's 3000).
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value = "3000", value_parser = batch)]
    pub batch: u64,
    /// Time cap of one batch: expensive calls get fewer calls per batch (at least 10);
    /// 0 = no cap, every batch has --batch calls.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", default_value = "20ms", value_parser = batch_time)]
    pub batch_time: u64,
    /// Interleaved repetitions of every cell (the seed: at least 20).
    #[arg(long, allow_hyphen_values = true, value_name = "R", default_value = "20", value_parser = repetitions)]
    pub repetitions: u64,
    /// Timer slack(s) to measure under, e.g. 50us,1ns, side by side (default: leave it as it is).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::slacks)]
    pub timer_slack: Option<List<u64>>,
    /// Seed of the RNG that shuffles the order of the cells in each repetition.
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value = "1", value_parser = args::seed)]
    pub seed: u64,
    #[command(flatten)]
    pub threads: ThreadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments that measure from the first second on, for tens of seconds or more
/// ([`super::Command::long_runs`]).
pub const LONG_RUN: Option<&str> =
    Some("--mechanisms nanosleep,spin --batch 200 --batch-time 0 --repetitions 100000");

/// The method and the choice of batch length, shown after the options in `--help`.
const AFTER_HELP: &str = "\
Method: each mechanism at 0 and at the smallest request its API takes (1 ns; 1 µs for
select; 1 ms for poll/epoll); yield at 0 only, timerfd at 1 ns only. One figure = one
batch of N calls timed as a whole (clock read, N calls, clock read) ÷ N. Before every
batch an empty black_box loop of the same N runs (the ground truth); the median of a
cell's empty loops is subtracted (\"net\"). Repetitions are interleaved and shuffled;
± is the 99.9 % confidence interval of the mean by Student's t over the per-repetition
per-call means. CPU time and context switches: getrusage(RUSAGE_THREAD) per batch.

Batch length: the seed used 3000 calls per batch. A nanosleep(1 ns) costs ~60-80 µs at
the default 50 µs timer slack and a poll(1 ms) over 1 ms, so 3000 of each × 20
repetitions × every mechanism would take minutes. Each cell's N is fixed before the
first repetition from a short calibration: --batch, or as many calls as fit in
--batch-time (at least 10), whichever is fewer. Cheap calls keep all 3000; sleeping
calls get a few hundred; the defaults finish in ~10-15 s. --batch-time 0 gives every cell
the full --batch, exactly as in the seed (minutes).";

fn batch(s: &str) -> Result<u64, ParseError> {
    parse::count("batch size", s, 1, 1_000_000)
}

fn batch_time(s: &str) -> Result<u64, ParseError> {
    let v = parse::duration_ns(s)?;
    if v > 60_000_000_000 {
        return Err(ParseError {
            what: "batch time",
            value: s.into(),
            reason: "too long (the maximum is 60s)".into(),
        });
    }
    Ok(v)
}

fn repetitions(s: &str) -> Result<u64, ParseError> {
    // Two is the fewest that give a confidence interval.
    parse::count("repetitions", s, 2, 100_000)
}

/// Builds the config from the arguments (validating names: OS wait mechanisms only).
pub fn config(args: &ShortArgs) -> Result<ShortConfig, UsageError> {
    let mechanisms = supported(
        args.mechanisms.as_ref(),
        Names::new("mechanism", wait::mechanisms().iter().map(|m| m.name))
            .otherwise("see `sleeplab list`"),
        |n| wait::find(n).map(|m| m.support()),
    )?;
    Ok(ShortConfig {
        mechanisms,
        timer_slacks_ns: dedup(args.timer_slack.as_ref().map_or(&[][..], |l| &l.0[..])),
        batch: args.batch,
        batch_time_ns: args.batch_time,
        min_batch: MIN_BATCH.min(args.batch),
        repetitions: args.repetitions,
        seed: args.seed,
        confidence: CONFIDENCE,
    })
}

/// Runs `short`, prints its tables and verdicts, writes the requested files.
pub fn run(args: &ShortArgs, quiet: bool) -> anyhow::Result<i32> {
    tail::measure_and_save("short", quiet, &args.threads, &args.output, || config(args))
}
