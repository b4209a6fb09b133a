//! The command-line pieces several commands share: lists, output files, thread
//! settings, the value parsers of common flags, and the mapping of the experiments'
//! setting errors back to the flags that asked for them.

use crate::error::UsageError;
use crate::parse::{self, Names, ParseError};
use crate::settings::{SettingError, ThreadSettings};
use clap::Args;
use sleeplab::system::Policy;
use sleeplab::wait::Support;
use sleeplab_stats::fmt_ns;
use std::path::PathBuf;

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

/// Settings that change how long waits take (`--pin`, `--policy`, `--priority`,
/// `--mlock`). Each command applies them to what measures for it: its measuring threads,
/// or (`runtimes`) the probe processes, so the help names neither.
#[derive(Debug, Clone, Args, Default)]
pub struct ThreadArgs {
    /// Pin the measuring threads or processes to this CPU.
    #[arg(long, value_name = "CPU")]
    pub pin: Option<usize>,
    /// Scheduling policy of the measuring threads or processes: other, fifo or rr.
    #[arg(long, default_value = "other", value_parser = parse_policy)]
    pub policy: Policy,
    /// Priority for fifo/rr (1–99).
    #[arg(long, value_name = "P")]
    pub priority: Option<i32>,
    /// Lock all memory (mlockall) so page faults stay out of the measurements.
    #[arg(long)]
    pub mlock: bool,
}

fn parse_policy(s: &str) -> Result<Policy, String> {
    s.parse()
}

/// Online CPUs, for checking `--pin` values.
pub fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl ThreadArgs {
    /// The settings, checked before any measuring starts.
    pub fn settings(&self) -> Result<ThreadSettings, UsageError> {
        if let Some(cpu) = self.pin {
            let n = online_cpus();
            if cpu >= n {
                return Err(UsageError::new(format!(
                    "invalid --pin {cpu}: this machine has CPUs 0..{}",
                    n - 1
                )));
            }
        }
        let priority = self.priority.unwrap_or(match self.policy {
            Policy::Other => 0,
            _ => 1,
        });
        match self.policy {
            Policy::Other if priority != 0 => Err(UsageError::new(format!(
                "invalid --priority {priority}: policy other takes no priority (use --policy fifo or rr)"
            ))),
            Policy::Fifo | Policy::Rr if !(1..=99).contains(&priority) => {
                Err(UsageError::new(format!(
                    "invalid --priority {priority}: policy {} takes 1..=99",
                    self.policy
                )))
            }
            _ => Ok(ThreadSettings {
                pin: self.pin,
                policy: self.policy,
                priority,
                mlock: self.mlock,
            }),
        }
    }
}

/// An experiment's error, with a setting the system refused named by its flag
/// (`--pin 3: …`); other errors as they are.
pub fn name_flags(e: anyhow::Error) -> anyhow::Error {
    let Some(s) = e.downcast_ref::<SettingError>() else {
        return e;
    };
    let msg = match s {
        SettingError::Pin { cpu, cause } => format!("--pin {cpu}: {cause}"),
        SettingError::Policy { policy, cause } => format!("--policy {policy}: {cause}"),
        SettingError::Mlock { cause } => format!("--mlock: {cause}"),
        SettingError::TimerSlack { ns, cause } => {
            format!("--timer-slack {}: {cause}", fmt_ns(*ns))
        }
    };
    UsageError::new(msg).into()
}

/// The names in `given` (every supported one of `known` when `None`), each known, and
/// supported here by `support` (`None`: not a name it knows, taken as supported).
pub fn supported(
    given: Option<&List<String>>,
    known: Names<'_>,
    support: impl Fn(&str) -> Option<Support>,
) -> Result<Vec<String>, UsageError> {
    let Some(given) = given else {
        return Ok(known
            .known()
            .iter()
            .filter(|n| matches!(support(n), None | Some(Support::Supported)))
            .map(|n| n.to_string())
            .collect());
    };
    let names = known.resolve(&given.0)?;
    for n in &names {
        if let Some(Support::Unsupported(why)) = support(n) {
            return Err(UsageError::new(format!(
                "mechanism {n} is not supported on this machine: {why}"
            )));
        }
    }
    Ok(names)
}

/// The wait mechanisms of `sleeplab list` named in `given` (every supported one when
/// `None`), each known and supported here.
pub fn supported_contenders(given: Option<&List<String>>) -> Result<Vec<String>, UsageError> {
    let infos = crate::contenders::all();
    supported(
        given,
        Names::new("mechanism", infos.iter().map(|i| i.name)).otherwise("see `sleeplab list`"),
        |n| {
            infos
                .iter()
                .find(|i| i.name == n)
                .map(|i| i.support.clone())
        },
    )
}

/// A comma-separated list of names (`what` says what kind, e.g. "strategy list").
pub fn names(
    what: &'static str,
) -> impl Fn(&str) -> Result<List<String>, ParseError> + Clone + Send + Sync + 'static {
    move |s| parse::list(what, s, |x| Ok(x.to_string())).map(List)
}

/// A list of durations, e.g. `0,1us,10ms`.
pub fn durations(s: &str) -> Result<List<u64>, ParseError> {
    parse::list("duration list", s, parse::duration_ns).map(List)
}

/// A list of timer slacks (each at least 1 ns), for every command with `--timer-slack LIST`.
pub fn slacks(s: &str) -> Result<List<u64>, ParseError> {
    parse::list("timer slack list", s, parse::slack_ns).map(List)
}

/// A list of load levels (busy threads, 0–1024), for every command with `--load LIST`.
pub fn loads(s: &str) -> Result<List<usize>, ParseError> {
    parse::list("load list", s, |x| {
        parse::count("load", x, 0, 1024).map(|n| n as usize)
    })
    .map(List)
}

/// A warm-up count (0–100 000).
pub fn warmup(s: &str) -> Result<u64, ParseError> {
    parse::count("warm-up count", s, 0, 100_000)
}

/// The cap on raw samples kept in the JSON (0–10 000 000).
pub fn json_samples(s: &str) -> Result<u64, ParseError> {
    parse::count("JSON sample cap", s, 0, 10_000_000)
}

/// A duration of more than 0.
pub fn positive_duration(s: &str) -> Result<u64, ParseError> {
    parse::positive_duration_ns("duration", s)
}

/// The seed of a random generator (any 64-bit number).
pub fn seed(s: &str) -> Result<u64, ParseError> {
    parse::count("seed", s, 0, u64::MAX)
}
