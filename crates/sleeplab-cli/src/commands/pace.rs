//! `sleeplab pace`.

use super::args::{self, List, OutputArgs, ThreadArgs};
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
    /// seed-hybrid, sdl-precise, fixed-margin, spin-sleep, precise; async, each awaited
    /// on a runtime of its own: asleep, asleep-reactor and asleep-interval (ours), tokio-sleep-until, tokio-interval-burst,
    /// tokio-interval-delay, async-io-timer, tokio-timerfd, tokio-spin-sleep. Default: std-sleep,
    /// spin, seed-hybrid, sdl-precise, spin-sleep, precise (6 × 500 frames at 60 Hz = 50 s).
    /// Each may carry a setting: seed-hybrid:x=2, fixed-margin:250us, spin-sleep:50us,
    /// precise:q=0.999,budget=3%,cap=2ms,tol=50us,early=20us.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::names("strategy list"))]
    pub strategies: Option<List<String>>,
    /// Competing busy threads, a list of levels, e.g. 0,2,5 (above the CPU count is
    /// oversubscribed); the contenders are interleaved within each level.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::loads, default_value = "0")]
    pub load: List<usize>,
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
    /// Runs of the whole interleaved comparison: a tail moves from run to run, so the
    /// result adds each contender's p99 and CPU range across the runs and how often each
    /// frontier verdict held (the tables show the first run).
    #[arg(long, allow_hyphen_values = true, value_name = "N", default_value = "1", value_parser = repeat)]
    pub repeat: u64,
    /// Split each frame's lateness with the kernel's tracepoints (timer interrupt, run
    /// queue, spin, …; as root): why frames were late, measured (the first run's).
    #[arg(long)]
    pub trace: bool,
    #[command(flatten)]
    pub threads: ThreadArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments that measure from the first second on, for tens of seconds or more
/// ([`super::Command::long_runs`]).
pub const LONG_RUN: Option<&str> = Some("--strategies spin,precise --frames 100000");

fn frames(s: &str) -> Result<u64, ParseError> {
    parse::count("frame count", s, 1, 10_000_000)
}

fn repeat(s: &str) -> Result<u64, ParseError> {
    parse::count("repeat count", s, 1, 1000)
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

/// Resolves contender names or settings (`seed-hybrid:x=2`, `precise:q=0.999,budget=3%`)
/// against the registry, with a suggestion for a mistyped name; returns canonical
/// settings in order without repeats. `None` gives `defaults`. Used by `cpu`.
pub fn resolve_strategies(
    given: Option<&List<String>>,
    defaults: &[&str],
) -> Result<Vec<String>, UsageError> {
    resolve_among(given, defaults, strategies::names())
}

/// [`resolve_strategies`] among `known` (`pace` adds its async contenders).
fn resolve_among(
    given: Option<&List<String>>,
    defaults: &[&str],
    known: Vec<&'static str>,
) -> Result<Vec<String>, UsageError> {
    let Some(list) = given else {
        return Ok(defaults.iter().map(|s| s.to_string()).collect());
    };
    let names = Names::new("strategy", known);
    let mut out: Vec<String> = Vec::new();
    for setting in strategies::join_settings(&list.0) {
        names.check(strategies::base_name(&setting))?;
        let canonical = strategies::canonical(&setting)
            .map_err(|e| UsageError::new(format!("invalid --strategies {setting}: {e}")))?;
        if !out.contains(&canonical) {
            out.push(canonical);
        }
    }
    Ok(out)
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
        strategies: resolve_among(
            args.strategies.as_ref(),
            &DEFAULT_STRATEGIES,
            strategies::names()
                .into_iter()
                .chain(crate::contenders::asyncs::names())
                .collect(),
        )?,
        loads: parse::dedup(&args.load.0),
        rate_hz: args.rate,
        period_ns,
        frames: args.frames,
        block: args.block.min(args.frames),
        work_ns: args.work,
        timer_slack_ns: Some(args.timer_slack),
        json_samples: args.json_samples,
        repeat: args.repeat,
        trace: args.trace,
    })
}

/// Runs `pace`.
pub fn run(args: &PaceArgs, quiet: bool) -> anyhow::Result<i32> {
    tail::measure_and_save("pace", quiet, &args.threads, &args.output, || config(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--repeat`: 1 to 1000 runs; anything else is refused naming the value (the binary's
    /// exit 2 for `--repeat 0` is in tests/bad_input.rs).
    #[test]
    fn repeat_takes_1_to_1000_runs() {
        assert_eq!(repeat("1").unwrap(), 1);
        assert_eq!(repeat("1000").unwrap(), 1000);
        for bad in ["0", "-3", "two", "1001", "2.5", ""] {
            let e = repeat(bad).unwrap_err();
            assert_eq!(e.value, bad, "{e:?}");
        }
    }
}
