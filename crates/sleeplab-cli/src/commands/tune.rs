//! `sleeplab tune`.

use super::args::{self, List, OutputArgs};
use super::outputs::check_outputs;
use super::tail;
use crate::contenders;
use crate::error::UsageError;
use crate::experiments::tune::{
    self, BUDGET_NS, CellSpec, DEFAULT_ROUNDS, QUICK_BUDGET_NS, TuneConfig,
};
use crate::parse::{self, Names, ParseError};
use crate::settings::ThreadSettings;
use clap::Args;

/// `sleeplab tune`.
#[derive(Debug, Clone, Args)]
pub struct TuneArgs {
    /// Mechanisms to wait with, comma-separated (default: clock-nanosleep-abs, timerfd and
    /// epoll-pwait2 at 100 µs and 1 ms, and precise at 60 Hz).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::names("name list"))]
    pub mechanisms: Option<List<String>>,
    /// Requested durations, e.g. 100us,1ms (default: 100us,1ms).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::durations)]
    pub durations: Option<List<u64>>,
    /// The settings to try, comma-separated (default: every one that applies here; see
    /// `--dry-run`).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::names("setting list"))]
    pub settings: Option<List<String>>,
    /// Rounds: each visits every setting once (an interval over rounds needs 8; at least 3).
    #[arg(long, allow_hyphen_values = true, value_name = "R", value_parser = rounds)]
    pub rounds: Option<u64>,
    /// Waiting time per wait, setting and round (default 150ms; 25ms with --quick).
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = budget)]
    pub budget: Option<u64>,
    /// A short run (under 40 s here): 25 ms per wait, setting and round.
    #[arg(long)]
    pub quick: bool,
    /// The CPU the one-CPU settings (pin, keep-awake, IRQ affinity) are about.
    #[arg(long, value_name = "CPU", default_value = "0")]
    pub cpu: usize,
    /// Per-process settings only, even as root.
    #[arg(long)]
    pub no_system: bool,
    /// List what would change, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments that measure from the first second on, for tens of seconds or more
/// ([`super::Command::long_runs`]).
pub const LONG_RUN: Option<&str> = Some("--no-system --rounds 1000 --budget 50ms --durations 1ms");

fn rounds(s: &str) -> Result<u64, ParseError> {
    parse::count("rounds", s, 3, 1_000)
}

fn budget(s: &str) -> Result<u64, ParseError> {
    parse::positive_duration_ns("budget", s)
}

/// The config of the arguments (names checked).
pub fn config(a: &TuneArgs) -> Result<TuneConfig, UsageError> {
    let cpus = args::online_cpus();
    if a.cpu >= cpus {
        return Err(UsageError::new(format!(
            "invalid --cpu {}: this machine has CPUs 0..{}",
            a.cpu,
            cpus - 1
        )));
    }
    let cells = if a.mechanisms.is_none() && a.durations.is_none() {
        tune::default_cells()
    } else {
        let given = a.mechanisms.clone().unwrap_or_else(|| {
            List(
                ["clock-nanosleep-abs", "timerfd", "epoll-pwait2"]
                    .map(String::from)
                    .to_vec(),
            )
        });
        let mechanisms = args::supported_contenders(Some(&given))?;
        let durations = a
            .durations
            .as_ref()
            .map_or_else(|| vec![100_000, 1_000_000], |l| l.0.clone());
        let mut cells = Vec::new();
        for m in &mechanisms {
            for &d in &durations {
                if contenders::skip_reason(m, d).is_none() {
                    cells.push(CellSpec {
                        mechanism: m.clone(),
                        requested_ns: d,
                    });
                }
            }
        }
        if cells.is_empty() {
            return Err(UsageError::new(
                "invalid --durations: no mechanism given can wait for any of them",
            ));
        }
        cells
    };
    let mut config = TuneConfig {
        cells,
        settings: None,
        system: !a.no_system,
        rounds: a.rounds.unwrap_or(DEFAULT_ROUNDS),
        budget_ns: a
            .budget
            .unwrap_or(if a.quick { QUICK_BUDGET_NS } else { BUDGET_NS }),
        cpu: a.cpu,
    };
    if let Some(given) = &a.settings {
        let c = tune::catalogue(&config);
        let known: Vec<&str> = c
            .settings
            .iter()
            .map(|s| s.info.name.as_str())
            .chain(c.unavailable.iter().map(|u| u.name.as_str()))
            .collect();
        let names = Names::new("setting", known.iter().copied())
            .otherwise("see `sleeplab tune --dry-run`")
            .resolve(&given.0)?;
        config.settings = Some(names);
    }
    Ok(config)
}

/// Runs `tune`.
pub fn run(a: &TuneArgs, quiet: bool) -> anyhow::Result<i32> {
    let config = config(a)?;
    if a.dry_run {
        print!(
            "{}",
            sleeplab_stats::fit_lines(&tune::plan(&config), sleeplab_stats::terminal_width())
        );
        return Ok(0);
    }
    check_outputs(&[("--json", &a.output.json), ("--csv", &a.output.csv)])?;
    tail::measure(&config, "tune", quiet, ThreadSettings::default())?.save(&a.output, vec![])
}
