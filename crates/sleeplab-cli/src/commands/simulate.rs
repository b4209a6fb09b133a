//! `sleeplab simulate`: the library's wait strategies under virtual schedulers
//! (seed 002, figure 4). See [`crate::experiments::simulate`] and `docs/SIMULATE.md`.

use super::args::{self, List, OutputArgs};
use super::outputs::check_outputs;
use super::tail;
use crate::error::UsageError;
use crate::experiments::simulate::{
    HostModel, Models, Replay, ReplayChoice, ReplayError, SimulateOptions,
};
use crate::model::{ExperimentData, load_result};
use crate::parse::{self, ParseError};
use crate::settings::ThreadSettings;
use clap::Args;
use std::path::PathBuf;

/// `sleeplab simulate`.
#[derive(Debug, Clone, Args)]
pub struct SimulateArgs {
    /// Strategies, comma-separated: std-sleep, clock-nanosleep-abs, spin, seed-hybrid,
    /// sdl-precise, fixed-margin, precise. Default: std-sleep, fixed-margin, sdl-precise,
    /// seed-hybrid, precise. (`spin` costs simulation time in proportion to the
    /// requested interval; `spin-sleep`, the crate, cannot run in virtual time.)
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::names("strategy list"))]
    pub strategies: Option<List<String>>,
    /// Requested intervals: the grid's rows.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = intervals,
          default_value = "1ms,2ms,5ms,10ms,20ms,50ms,100ms")]
    pub intervals: List<u64>,
    /// Scheduler periods: the grid's columns. A list (1ms,4ms,15.6ms) or a range in whole
    /// units (1..10ms = 1, 2, …, 10 ms).
    #[arg(long, visible_alias = "period", allow_hyphen_values = true, value_name = "LIST",
          value_parser = periods, default_value = "1..10ms", conflicts_with = "replay")]
    pub periods: List<u64>,
    /// Chance that another thread takes one more scheduler period, each time (0 to 0.9).
    #[arg(long, allow_hyphen_values = true, value_name = "P", value_parser = probability,
          default_value = "0.05", conflicts_with = "replay")]
    pub preempt_prob: f64,
    /// Replay the oversleeps of a `sleeplab sweep --json` result instead of a scheduler
    /// model (one column: how would each strategy do on that machine?).
    #[arg(long, value_name = "SWEEP.json")]
    pub replay: Option<PathBuf>,
    /// The measured mechanism whose oversleeps stand for every native sleep.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "clock-nanosleep-abs",
        requires = "replay"
    )]
    pub replay_mechanism: String,
    /// The load level of the replayed cells (default: the lowest measured).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = load, requires = "replay")]
    pub replay_load: Option<usize>,
    /// The timer slack of the replayed cells (default: the lowest measured).
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = parse::duration_ns, requires = "replay")]
    pub replay_slack: Option<u64>,
    /// A virtual machine's host that takes the CPU from spinning (running) vCPUs while
    /// sleeping (halted) ones are woken as the model says: none, quiet (this project's VM,
    /// fitted from its noise probe: gaps of 5–170 µs, about 900 a second of
    /// running) or busy (quiet, and a run of more than 100 µs since a wake risks a 1–2 ms
    /// deschedule).
    #[arg(long, value_name = "HOST", value_parser = host, default_value = "none")]
    pub host: HostChoice,
    /// Measured sleeps per cell, not counting the --warmup sleeps before them (the
    /// default grid: 70 cells of 30 warm-up + 150 measured = 180 sleeps per strategy,
    /// about 8 s of CPU in all, spread over the cores).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = sleeps, default_value = "150")]
    pub sleeps: u64,
    /// Unmeasured sleeps per cell before the measured ones, on the same strategy (it
    /// learns during them). 0 shows a cold start.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = warmup, default_value = "30")]
    pub warmup: u64,
    /// The seed: the same seed gives the same output on every machine.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = args::seed, default_value = "1")]
    pub seed: u64,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments that measure from the first second on, for tens of seconds or more
/// ([`super::Command::long_runs`]).
pub const LONG_RUN: Option<&str> = Some("--sleeps 10000000");

fn bad(what: &'static str, s: &str, reason: impl Into<String>) -> ParseError {
    ParseError {
        what,
        value: s.into(),
        reason: reason.into(),
    }
}

/// The longest requested interval or period accepted: 10 s of virtual time per sleep.
const MAX_SIM_NS: u64 = 10_000_000_000;

fn positive(what: &'static str, s: &str) -> Result<u64, ParseError> {
    let v = parse::positive_duration_ns(what, s)?;
    if v > MAX_SIM_NS {
        return Err(bad(what, s, "must be at most 10s"));
    }
    Ok(v)
}

fn intervals(s: &str) -> Result<List<u64>, ParseError> {
    parse::list("interval list", s, |x| positive("interval", x)).map(List)
}

/// A period list: durations, or ranges `A..B<unit>` in whole steps of the unit.
pub fn periods(s: &str) -> Result<List<u64>, ParseError> {
    let mut out = Vec::new();
    for item in parse::list("period list", s, |x| Ok(x.to_string()))? {
        match item.split_once("..") {
            None => out.push(positive("period", &item)?),
            Some((a, b)) => {
                let b = b.trim();
                let split = b.find(|c: char| !c.is_ascii_digit()).ok_or_else(|| {
                    bad(
                        "period range",
                        &item,
                        "needs a unit after the end, e.g. 1..10ms",
                    )
                })?;
                let (hi, unit) = b.split_at(split);
                let lo = a.trim().strip_suffix(unit).unwrap_or(a.trim());
                let whole = |t: &str| {
                    t.parse::<u64>().map_err(|_| {
                        bad(
                            "period range",
                            &item,
                            "the ends must be whole numbers of one unit, e.g. 1..10ms",
                        )
                    })
                };
                let (lo, hi) = (whole(lo)?, whole(hi)?);
                if lo == 0 || lo > hi {
                    return Err(bad("period range", &item, "needs 0 < start ≤ end"));
                }
                if hi - lo >= 1_000 {
                    return Err(bad("period range", &item, "more than 1000 periods"));
                }
                let step = positive("period", &format!("1{unit}"))?;
                for k in lo..=hi {
                    let v = k
                        .checked_mul(step)
                        .filter(|&v| v <= MAX_SIM_NS)
                        .ok_or_else(|| bad("period range", &item, "must end at most at 10s"))?;
                    out.push(v);
                }
            }
        }
    }
    Ok(List(out))
}

fn probability(s: &str) -> Result<f64, ParseError> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| bad("preemption probability", s, "not a number"))?;
    if !(0.0..=0.9).contains(&v) {
        return Err(bad(
            "preemption probability",
            s,
            "must be between 0 and 0.9",
        ));
    }
    Ok(v)
}

/// `--host`: a host model by name, or none.
#[derive(Debug, Clone, PartialEq)]
pub struct HostChoice(pub Option<HostModel>);

fn host(s: &str) -> Result<HostChoice, ParseError> {
    match s.trim() {
        "none" => Ok(HostChoice(None)),
        name => HostModel::named(name)
            .map(|h| HostChoice(Some(h)))
            .ok_or_else(|| {
                bad(
                    "host",
                    s,
                    format!("must be none, {}", HostModel::NAMES.join(" or ")),
                )
            }),
    }
}

fn load(s: &str) -> Result<usize, ParseError> {
    parse::count("load", s, 0, 1024).map(|n| n as usize)
}

fn sleeps(s: &str) -> Result<u64, ParseError> {
    parse::count("sleep count", s, 1, 10_000_000)
}

fn warmup(s: &str) -> Result<u64, ParseError> {
    parse::count("warm-up count", s, 0, 10_000_000)
}

/// The simulation the arguments ask for. A replayed file is loaded here (a file that
/// is not a result is a usage error); what it holds is checked by the experiment.
pub fn options(args: &SimulateArgs) -> anyhow::Result<SimulateOptions> {
    let models = match &args.replay {
        Some(path) => {
            let result = load_result(path).map_err(UsageError::from)?;
            let experiment = result.data.name().to_string();
            let sweeps = result
                .data
                .into_flat()
                .into_iter()
                .filter_map(|d| match d {
                    ExperimentData::Sweep(s) => Some(s),
                    _ => None,
                })
                .collect();
            Models::Replay(Replay {
                choice: ReplayChoice {
                    file: path.display().to_string(),
                    mechanism: args.replay_mechanism.clone(),
                    load: args.replay_load,
                    timer_slack_ns: args.replay_slack,
                },
                experiment,
                sweeps,
            })
        }
        None => Models::Schedulers {
            periods_ns: args.periods.0.clone(),
            preempt_prob: args.preempt_prob,
        },
    };
    Ok(SimulateOptions {
        strategies: args.strategies.as_ref().map(|l| l.0.clone()),
        intervals_ns: args.intervals.0.clone(),
        models,
        sleeps: args.sleeps,
        warmup: args.warmup,
        seed: args.seed,
        host: args.host.0.clone(),
    })
}

/// A replay that does not fit, named by the flag that chose it.
fn replay_flags(e: anyhow::Error) -> anyhow::Error {
    let Some(r) = e.downcast_ref::<ReplayError>() else {
        return e;
    };
    let flag = match r {
        ReplayError::NotASweep { .. } | ReplayError::Empty { .. } => "--replay",
        ReplayError::NoMechanism { .. } => "--replay-mechanism",
        ReplayError::NoLoad { .. } => "--replay-load",
        ReplayError::NoSlack { .. } => "--replay-slack",
    };
    let hint = match r {
        ReplayError::NotASweep { .. } => "; give the --json of `sleeplab sweep`",
        _ => "",
    };
    UsageError::new(format!("{flag} {r}{hint}")).into()
}

/// Runs `simulate`: prints the heat tables, writes the requested files.
pub fn run(args: &SimulateArgs, quiet: bool) -> anyhow::Result<i32> {
    check_outputs(&[("--json", &args.output.json), ("--csv", &args.output.csv)])?;
    let options = options(args)?;
    tail::measure(&options, "simulate", quiet, ThreadSettings::default())
        .map_err(replay_flags)?
        .save(&args.output, vec![])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::simulate::{
        DEFAULT_INTERVALS_NS, DEFAULT_PREEMPT_PROB, default_periods_ns,
    };
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        args: SimulateArgs,
    }

    /// The flags' defaults are the experiment's (the survey plans with those).
    #[test]
    fn defaults_are_the_experiments() {
        let args = Cmd::try_parse_from(["simulate"]).unwrap().args;
        let o = options(&args).unwrap();
        assert_eq!(o.strategies, None);
        assert_eq!(o.intervals_ns, DEFAULT_INTERVALS_NS);
        assert_eq!(
            o.models,
            Models::Schedulers {
                periods_ns: default_periods_ns(),
                preempt_prob: DEFAULT_PREEMPT_PROB
            }
        );
        assert_eq!((o.sleeps, o.warmup, o.seed), (150, 30, 1));
        assert_eq!(o.host, None);
    }
}
