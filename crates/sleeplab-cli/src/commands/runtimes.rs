//! `sleeplab runtimes`: every language runtime's sleep, measured the same way.

use super::args::{self, List, OutputArgs, ThreadArgs, online_cpus};
use super::hints::WORDING;
use super::outputs::check_outputs;
use super::tail;
use crate::error::UsageError;
use crate::experiments::runtimes::{
    self, DEFAULT_DURATIONS_NS, MethodStatus, ProbeQuota, ProbeSettingError, ProbeSettings,
    RuntimeStatus, RuntimesConfig, RuntimesData,
};
use crate::experiments::{Context, Experiment};
use crate::parse::{self, Names, ParseError, dedup};
use crate::probe::catalog::RuntimeId;
use crate::settings::ThreadSettings;
use clap::Args;
use sleeplab_stats::Progress;

/// The default calls per one-shot request (seed 003 fixed the count before measuring;
/// 100 resolves a p99).
pub const DEFAULT_COUNT: u64 = 100;

/// The default cap on a cell's requested sleep, count × request (seed 003 slept about
/// 1 s per request): a 100 ms request gets 10 calls.
pub const DEFAULT_MAX_IDEAL_NS: u64 = 1_000_000_000;

/// `sleeplab runtimes`.
#[derive(Debug, Clone, Args)]
pub struct RuntimesArgs {
    /// Runtimes to measure, comma-separated: c, cpp, go, python, java, node, ruby, jruby,
    /// windows (default: all).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::names("name list"))]
    pub runtimes: Option<List<String>>,
    /// Only these methods, by the probes' names (see --list).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::names("name list"))]
    pub methods: Option<List<String>>,
    /// Requested durations of one-shot methods (default: 100ms,10ms,1ms,100us,10us;
    /// yield methods run at 0 only).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::durations)]
    pub durations: Option<List<u64>>,
    /// Calls per one-shot request, fixed before measuring as in seed 003 (the ideal total
    /// count × request is set, the actual total measured); fewer where count × request
    /// would exceed --max-ideal [default: 100].
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = count)]
    pub count: Option<u64>,
    /// At most this much requested sleep per cell (count × request): a longer request
    /// gets fewer calls, at least one [default: 1s].
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = args::positive_duration)]
    pub max_ideal: Option<u64>,
    /// Instead of a fixed count: calls until their elapsed times add up to this, per
    /// one-shot cell (the actual total is then fixed and the count varies).
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = args::positive_duration, conflicts_with_all = ["count", "max_ideal"])]
    pub budget: Option<u64>,
    /// With --budget: at most this many samples per cell (waits that return at once
    /// would otherwise fill the budget with millions of samples).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = count, default_value = "20000")]
    pub max_count: u64,
    /// Warm-up calls per cell (warm-up ticks for periodic methods), not in the statistics.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = args::warmup, default_value = "5")]
    pub warmup: u64,
    /// Period of periodic methods.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = args::positive_duration, default_value = "10ms")]
    pub period: u64,
    /// Measured ticks of periodic methods.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = count, default_value = "100")]
    pub ticks: u64,
    /// Competing busy threads, a list of levels, e.g. 0,1,2.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::loads, default_value = "0")]
    pub load: List<usize>,
    /// Timer slack(s) the probes run under, e.g. 50us,1ns (default: inherited).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = args::slacks)]
    pub timer_slack: Option<List<u64>>,
    /// The probe processes' CPU, scheduling policy and priority (set before they start)
    /// and memory locking (each probe locks its own; a run with a probe that cannot is
    /// refused).
    #[command(flatten)]
    pub threads: ThreadArgs,
    /// Raw samples per cell kept in the JSON (the CSV gets all).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = args::json_samples, default_value = "1000")]
    pub json_samples: u64,
    /// Saved probe outputs to include, comma-separated files (a probe run where sleeplab
    /// cannot launch it, e.g. the Windows probe on real Windows, its stdout saved).
    #[arg(long, allow_hyphen_values = true, value_name = "FILES", value_parser = args::names("name list"))]
    pub saved: Option<List<String>>,
    /// Split each probe call's lateness with the kernel's tracepoints (needs root and
    /// tracefs; probes that name their measuring thread and give --timestamps).
    #[arg(long)]
    pub trace: bool,
    /// Only detect, build and list every runtime's methods; measure nothing.
    #[arg(long, conflicts_with_all = ["json", "csv"])]
    pub list: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments that measure from the first second on, for tens of seconds or more
/// ([`super::Command::long_runs`]).
pub const LONG_RUN: Option<&str> =
    Some("--runtimes python --methods time.sleep --durations 100ms --count 1000");

fn count(s: &str) -> Result<u64, ParseError> {
    parse::count("count", s, 1, 100_000_000)
}

/// Resolves `--runtimes` (default: all), suggesting the closest name for a typo.
pub fn resolve_runtimes(given: Option<&[String]>) -> Result<Vec<RuntimeId>, UsageError> {
    let Some(given) = given else {
        return Ok(RuntimeId::ALL.to_vec());
    };
    let names = Names::new("runtime", RuntimeId::names()).resolve(given)?;
    Ok(names.iter().filter_map(|n| RuntimeId::parse(n)).collect())
}

/// The one-shot quota the arguments ask for: seed 003's fixed count per request by
/// default, or `--budget`.
pub fn quota(args: &RuntimesArgs) -> ProbeQuota {
    match args.budget {
        Some(budget_ns) => ProbeQuota::Budget {
            budget_ns,
            max_count: args.max_count,
        },
        None => ProbeQuota::PerRequest {
            count: args.count.unwrap_or(DEFAULT_COUNT),
            max_ideal_ns: args.max_ideal.unwrap_or(DEFAULT_MAX_IDEAL_NS),
        },
    }
}

/// Builds the experiment's config from the arguments (the thread settings are the
/// probes', checked by [`ThreadArgs::settings`]).
pub fn config(args: &RuntimesArgs, ids: &[RuntimeId], probes: ThreadSettings) -> RuntimesConfig {
    RuntimesConfig {
        runtimes: ids.iter().map(|r| r.name().to_string()).collect(),
        methods: args.methods.as_ref().map(|l| l.0.clone()),
        durations_ns: dedup(
            args.durations
                .as_ref()
                .map_or(&DEFAULT_DURATIONS_NS[..], |l| &l.0[..]),
        ),
        quota: quota(args),
        warmup: args.warmup,
        period_ns: args.period,
        ticks: args.ticks,
        loads: dedup(&args.load.0),
        timer_slacks_ns: args
            .timer_slack
            .as_ref()
            .map_or_else(Vec::new, |l| l.0.clone()),
        pin_cpu: probes.pin,
        policy: probes.policy,
        priority: probes.priority,
        mlock: probes.mlock,
        // The trace lines the probes' calls up by their starts on CLOCK_MONOTONIC.
        timestamps: args.trace,
        trace: args.trace,
        json_samples: args.json_samples as usize,
        saved_files: args.saved.as_ref().map_or_else(Vec::new, |l| l.0.clone()),
        // The output cap and the start-up allowance have no flags.
        ..RuntimesConfig::default()
    }
}

/// Runs `sleeplab runtimes`: prints the tables, writes the requested files.
pub fn run(args: &RuntimesArgs, quiet: bool) -> anyhow::Result<i32> {
    check_outputs(&[("--json", &args.output.json), ("--csv", &args.output.csv)])?;
    let ids = resolve_runtimes(args.runtimes.as_ref().map(|l| &l.0[..]))?;
    let config = config(args, &ids, args.threads.settings()?);
    config.validate().map_err(probe_flags)?;
    if args.list {
        let ctx = Context::new(
            Progress::new(RuntimesConfig::NAME, config.steps(), quiet),
            ThreadSettings::default(),
            online_cpus(),
            WORDING,
        );
        let data = runtimes::list(&config, &ctx);
        ctx.progress.finish();
        print!(
            "{}",
            sleeplab_stats::fit_lines(
                &runtimes::render_listing(&data?),
                sleeplab_stats::terminal_width()
            )
        );
        return Ok(0);
    }
    // The settings are the probes' (applied in each forked child): the harness's own
    // threads run as they are.
    let run = tail::measure(
        &config,
        RuntimesConfig::NAME,
        quiet,
        ThreadSettings::default(),
    )
    .map_err(|e| match e.downcast::<ProbeSettingError>() {
        Ok(p) => probe_flags(p).into(),
        Err(e) => e,
    })?;
    let nothing_measured = no_probe_measured(run.data());
    let code = run.save(&args.output, vec![])?;
    if code == 0 && nothing_measured {
        eprintln!("sleeplab: no probe could be measured");
        return Ok(1);
    }
    Ok(code)
}

/// A setting the probes cannot be given, named by the flags that asked for it.
fn probe_flags(e: ProbeSettingError) -> UsageError {
    UsageError::new(match e {
        ProbeSettingError::PolicyTrial => "--policy: the trial thread panicked".to_string(),
        ProbeSettingError::Policy {
            policy,
            priority,
            cause,
        } => format!("--policy {policy} --priority {priority}: cannot be given to the probes: {cause}"),
        ProbeSettingError::MlockNotPermitted => "--mlock: the probes could not lock their memory: that needs CAP_IPC_LOCK (root) or an unlimited RLIMIT_MEMLOCK (ulimit -l unlimited)".to_string(),
        ProbeSettingError::MlockUnsupported { cannot, can } => {
            let instead = if can.is_empty() {
                "drop --mlock".to_string()
            } else {
                format!("drop --mlock, or measure only --runtimes {}", can.join(","))
            };
            format!(
                "--mlock cannot be applied to the probe of {}: memory locks do not survive exec, and that language cannot lock its own memory (its --list offers no mlock option); {instead}",
                cannot.join(", ")
            )
        }
    })
}

/// Whether every probe failed (none measured a method, and one failed): exit 1.
fn no_probe_measured(data: &RuntimesData) -> bool {
    let measured = data
        .runtimes
        .iter()
        .flat_map(|r| r.methods.iter())
        .any(|m| m.status == MethodStatus::Measured);
    let failed = data.runtimes.iter().any(|r| {
        matches!(r.status, RuntimeStatus::Failed { .. })
            || r.methods
                .iter()
                .any(|m| matches!(m.status, MethodStatus::Failed { .. }))
    });
    !measured && failed
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        args: RuntimesArgs,
    }

    /// The flags' defaults are the experiment's (the survey and the tests start from
    /// them).
    #[test]
    fn defaults_are_the_experiments() {
        let args = Cmd::try_parse_from(["runtimes"]).unwrap().args;
        let ids = resolve_runtimes(None).unwrap();
        let probes = args.threads.settings().unwrap();
        assert_eq!(config(&args, &ids, probes), RuntimesConfig::default());
    }
}
