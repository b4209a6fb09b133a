//! `sleeplab simulate`: the library's wait strategies under virtual schedulers
//! (seed 002, figure 4). See [`crate::sim`] and `docs/SIMULATE.md`.

use super::{check_outputs, save};
use crate::cli::{List, OutputArgs};
use crate::error::UsageError;
use crate::model::{ExperimentData, RunSettings, RunStart, load_result};
use crate::output::Progress;
use crate::parse::{self, ParseError};
use crate::sim::{
    self, DEFAULT_PREEMPT_PROB, DEFAULT_STRATEGIES, Empirical, Model, ModelSpec, ReplayChoice,
    SchedulerModel, SimCosts, SimulateConfig,
};
use clap::Args;
use sleeplab::precise::{VirtualCosts, strategies};
use std::path::PathBuf;
use std::sync::Arc;

/// The `spin_sleep` crate's name among the real-machine contenders.
const SPIN_SLEEP: &str = crate::contenders::strategies::SPIN_SLEEP;

/// `sleeplab simulate`.
#[derive(Debug, Clone, Args)]
pub struct SimulateArgs {
    /// Strategies, comma-separated: std-sleep, clock-nanosleep-abs, spin, seed-hybrid,
    /// sdl-precise, fixed-margin, precise. Default: std-sleep, fixed-margin, sdl-precise,
    /// seed-hybrid, precise. (`spin` costs simulation time in proportion to the
    /// requested interval; `spin-sleep`, the crate, cannot run in virtual time.)
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = names)]
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
    /// Measured sleeps per cell (the default grid: 70 cells of 180 sleeps per strategy,
    /// about 8 s of CPU in all, spread over the cores).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = sleeps, default_value = "150")]
    pub sleeps: u64,
    /// Unmeasured sleeps per cell before the measured ones, on the same strategy (it
    /// learns during them). 0 shows a cold start.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = warmup, default_value = "30")]
    pub warmup: u64,
    /// The seed: the same seed gives the same output on every machine.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = seed, default_value = "1")]
    pub seed: u64,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn names(s: &str) -> Result<List<String>, ParseError> {
    parse::list("strategy list", s, |x| Ok(x.to_string())).map(List)
}

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

fn load(s: &str) -> Result<usize, ParseError> {
    parse::count("load", s, 0, 1024).map(|n| n as usize)
}

fn sleeps(s: &str) -> Result<u64, ParseError> {
    parse::count("sleep count", s, 1, 10_000_000)
}

fn warmup(s: &str) -> Result<u64, ParseError> {
    parse::count("warm-up count", s, 0, 10_000_000)
}

fn seed(s: &str) -> Result<u64, ParseError> {
    parse::count("seed", s, 0, u64::MAX)
}

/// Resolves strategy names against the library registry: a typo gets a suggestion,
/// `spin-sleep` (a real-clock crate) gets an explanation.
pub fn resolve(given: Option<&List<String>>) -> Result<Vec<String>, UsageError> {
    let known: Vec<&str> = strategies().iter().map(|s| s.name).collect();
    let Some(given) = given else {
        return Ok(DEFAULT_STRATEGIES.iter().map(|s| s.to_string()).collect());
    };
    let mut out: Vec<String> = Vec::new();
    for name in &given.0 {
        if name == SPIN_SLEEP {
            return Err(UsageError::new(format!(
                "strategy {SPIN_SLEEP:?} cannot be simulated: the spin_sleep crate reads the real clock and really sleeps; fixed-margin is its algorithm (125 µs margin, yield-spin)"
            )));
        }
        if !known.contains(&name.as_str()) {
            let hint = parse::closest(name, known.iter().copied())
                .map(|c| format!(" (did you mean {c}?)"))
                .unwrap_or_else(|| format!(" (known: {})", known.join(", ")));
            return Err(UsageError::new(format!("unknown strategy {name:?}{hint}")));
        }
        if !out.contains(name) {
            out.push(name.clone());
        }
    }
    Ok(out)
}

/// The simulation's configuration and loaded models from the arguments, plus notes for
/// the result. Bad names, files and values are usage errors (exit 2).
pub fn config(args: &SimulateArgs) -> anyhow::Result<(SimulateConfig, Vec<Model>, Vec<String>)> {
    let strategies = resolve(args.strategies.as_ref())?;
    let mut notes = vec![format!(
        "{SPIN_SLEEP} (the spin_sleep crate) is not simulated: it reads the real clock and really sleeps; fixed-margin runs its algorithm (125 µs margin, yield-spin) in virtual time"
    )];
    let (specs, models) = match &args.replay {
        Some(path) => {
            let file = path.display().to_string();
            let result = load_result(path)?;
            let choice = ReplayChoice {
                file,
                mechanism: args.replay_mechanism.clone(),
                load: args.replay_load,
                timer_slack_ns: args.replay_slack,
            };
            let (dist, source) = Empirical::from_result(&result, &choice)
                .map_err(|e| UsageError::new(e.to_string()))?;
            for a in &source.anchors {
                if a.from == "histogram" {
                    notes.push(format!(
                        "replay: the {} cell kept no raw samples; its oversleeps come from √2-wide histogram buckets (coarse)",
                        crate::output::fmt_ns(a.requested_ns)
                    ));
                } else if a.samples < 20 {
                    notes.push(format!(
                        "replay: the {} cell has only {} samples; its tail is a guess",
                        crate::output::fmt_ns(a.requested_ns),
                        a.samples
                    ));
                }
            }
            (
                vec![ModelSpec::Replay(source)],
                vec![Model::Replay(Arc::new(dist))],
            )
        }
        None => {
            let mut periods: Vec<u64> = Vec::new();
            for &p in &args.periods.0 {
                if !periods.contains(&p) {
                    periods.push(p);
                }
            }
            let ms: Vec<SchedulerModel> = periods
                .iter()
                .map(|&period_ns| SchedulerModel {
                    period_ns,
                    preempt_prob: args.preempt_prob,
                })
                .collect();
            (
                ms.iter().copied().map(ModelSpec::Scheduler).collect(),
                ms.into_iter().map(Model::Scheduler).collect(),
            )
        }
    };
    let mut intervals_ns: Vec<u64> = Vec::new();
    for &i in &args.intervals.0 {
        if !intervals_ns.contains(&i) {
            intervals_ns.push(i);
        }
    }
    let config = SimulateConfig {
        strategies,
        intervals_ns,
        models: specs,
        sleeps: args.sleeps,
        warmup: args.warmup,
        seed: args.seed,
        costs: SimCosts::from(VirtualCosts::default()),
    };
    if args.preempt_prob != DEFAULT_PREEMPT_PROB && args.replay.is_none() {
        notes.push(format!(
            "preemption probability {} (seed 002 used {DEFAULT_PREEMPT_PROB})",
            args.preempt_prob
        ));
    }
    Ok((config, models, notes))
}

/// Runs `simulate`: prints the heat tables, writes the requested files.
pub fn run(args: &SimulateArgs, quiet: bool) -> anyhow::Result<i32> {
    check_outputs(&[("--json", &args.output.json), ("--csv", &args.output.csv)])?;
    let (config, models, notes) = config(args)?;
    let start = RunStart::now();
    let cells = sim::grid::cell_indices(&config).len() as u64;
    let progress = Progress::new("simulate", cells, quiet);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let outcome = sim::run(&config, &models, &progress, threads)?;
    progress.finish();
    print!("{}", sim::render(&outcome.data));
    let data = outcome.data.clone();
    let result = start.finish(
        ExperimentData::Simulate(outcome.data),
        RunSettings::default(),
        outcome.complete,
        notes,
    );
    save(&result, args.output.json.as_deref(), || {
        match &args.output.csv {
            Some(p) => sim::write_csv(p, &data),
            None => Ok(()),
        }
    })
}
