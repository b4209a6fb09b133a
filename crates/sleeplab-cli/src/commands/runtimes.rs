//! `sleeplab runtimes`: every language runtime's sleep, measured the same way.

use super::{check_outputs, save};
use crate::cli::{List, OutputArgs};
use crate::error::UsageError;
use crate::experiments::runtimes::{
    self, DEFAULT_DURATIONS_NS, MethodStatus, ProbeQuota, RuntimeStatus, RuntimesConfig, Target,
};
use crate::model::{ExperimentData, RunStart};
use crate::output::Progress;
use crate::parse::{self, ParseError};
use crate::probe::catalog::{Catalog, CatalogError, RuntimeId};
use clap::Args;

/// The default time budget per one-shot cell.
pub const DEFAULT_BUDGET: &str = "150ms";

/// `sleeplab runtimes`.
#[derive(Debug, Clone, Args)]
pub struct RuntimesArgs {
    /// Runtimes to measure, comma-separated: c, cpp, go, python, java, node, ruby, jruby,
    /// windows (default: all).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = names)]
    pub runtimes: Option<List<String>>,
    /// Only these methods, by the probes' names (see --list).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = names)]
    pub methods: Option<List<String>>,
    /// Requested durations of one-shot methods (default: 100ms,10ms,1ms,100us,10us;
    /// yield methods run at 0 only).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = durations)]
    pub durations: Option<List<u64>>,
    /// Time budget per one-shot cell: calls until their elapsed times add up to it.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = positive_duration, default_value = DEFAULT_BUDGET)]
    pub budget: u64,
    /// Exactly this many samples per one-shot cell (instead of --budget).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = count, conflicts_with = "budget")]
    pub count: Option<u64>,
    /// With --budget: at most this many samples per cell (waits that return at once
    /// would otherwise fill the budget with millions of samples).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = count, default_value = "20000")]
    pub max_count: u64,
    /// Warm-up calls per cell (warm-up ticks for periodic methods), not in the statistics.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = warmup, default_value = "5")]
    pub warmup: u64,
    /// Period of periodic methods.
    #[arg(long, allow_hyphen_values = true, value_name = "DURATION", value_parser = positive_duration, default_value = "10ms")]
    pub period: u64,
    /// Measured ticks of periodic methods.
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = count, default_value = "100")]
    pub ticks: u64,
    /// Competing busy threads, a list of levels, e.g. 0,1,2.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = crate::cli::loads, default_value = "0")]
    pub load: List<usize>,
    /// Timer slack(s) the probes run under, e.g. 50us,1ns (default: inherited).
    #[arg(long, allow_hyphen_values = true, value_name = "LIST", value_parser = crate::cli::slacks)]
    pub timer_slack: Option<List<u64>>,
    /// Pin the probe processes to this CPU.
    #[arg(long, allow_hyphen_values = true, value_name = "CPU", value_parser = cpu)]
    pub pin: Option<usize>,
    /// Raw samples per cell kept in the JSON (the CSV gets all).
    #[arg(long, allow_hyphen_values = true, value_name = "N", value_parser = json_samples, default_value = "1000")]
    pub json_samples: u64,
    /// Saved probe outputs to include, comma-separated files (a probe run where sleeplab
    /// cannot launch it, e.g. the Windows probe on real Windows, its stdout saved).
    #[arg(long, allow_hyphen_values = true, value_name = "FILES", value_parser = names)]
    pub saved: Option<List<String>>,
    /// Only detect, build and list every runtime's methods; measure nothing.
    #[arg(long, conflicts_with_all = ["json", "csv"])]
    pub list: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn names(s: &str) -> Result<List<String>, ParseError> {
    parse::list("name list", s, |x| Ok(x.to_string())).map(List)
}

fn durations(s: &str) -> Result<List<u64>, ParseError> {
    parse::list("duration list", s, parse::duration_ns).map(List)
}

fn positive_duration(s: &str) -> Result<u64, ParseError> {
    parse::positive_duration_ns("duration", s)
}

fn count(s: &str) -> Result<u64, ParseError> {
    parse::count("count", s, 1, 100_000_000)
}

fn warmup(s: &str) -> Result<u64, ParseError> {
    parse::count("warm-up count", s, 0, 100_000)
}

fn json_samples(s: &str) -> Result<u64, ParseError> {
    parse::count("JSON sample cap", s, 0, 10_000_000)
}

fn cpu(s: &str) -> Result<usize, ParseError> {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    parse::count("CPU", s, 0, n - 1).map(|c| c as usize)
}

/// Resolves `--runtimes` (default: all), suggesting the closest name for a typo.
pub fn resolve_runtimes(given: Option<&[String]>) -> Result<Vec<RuntimeId>, UsageError> {
    let Some(given) = given else {
        return Ok(RuntimeId::ALL.to_vec());
    };
    let mut out = Vec::new();
    for name in given {
        let Some(id) = RuntimeId::parse(name) else {
            let names = RuntimeId::names();
            let hint = parse::closest(name, names.iter().copied())
                .map(|c| format!("did you mean {c}?"))
                .unwrap_or_else(|| format!("known: {}", names.join(", ")));
            return Err(UsageError::new(format!(
                "unknown runtime {name:?} ({hint})"
            )));
        };
        if !out.contains(&id) {
            out.push(id);
        }
    }
    Ok(out)
}

/// Builds the experiment's config from the arguments.
pub fn config(args: &RuntimesArgs, ids: &[RuntimeId]) -> RuntimesConfig {
    let mut loads = Vec::new();
    for &l in &args.load.0 {
        if !loads.contains(&l) {
            loads.push(l);
        }
    }
    let mut durations_ns = Vec::new();
    for &d in args
        .durations
        .as_ref()
        .map_or(&DEFAULT_DURATIONS_NS[..], |l| &l.0[..])
    {
        if !durations_ns.contains(&d) {
            durations_ns.push(d);
        }
    }
    RuntimesConfig {
        runtimes: ids.iter().map(|r| r.name().to_string()).collect(),
        methods: args.methods.as_ref().map(|l| l.0.clone()),
        durations_ns,
        quota: match args.count {
            Some(count) => ProbeQuota::Count { count },
            None => ProbeQuota::Budget {
                budget_ns: args.budget,
                max_count: args.max_count,
            },
        },
        warmup: args.warmup,
        period_ns: args.period,
        ticks: args.ticks,
        loads,
        timer_slacks_ns: args
            .timer_slack
            .as_ref()
            .map_or_else(Vec::new, |l| l.0.clone()),
        pin_cpu: args.pin,
        policy: Default::default(),
        priority: 0,
        mlock: false,
        json_samples: args.json_samples as usize,
        output_cap_bytes: 64 << 20,
        startup_timeout_ns: 120_000_000_000,
        saved_files: args.saved.as_ref().map_or_else(Vec::new, |l| l.0.clone()),
    }
}

/// Detects and prepares (builds) every runtime in `ids`.
pub fn prepare(catalog: &Catalog, ids: &[RuntimeId], quiet: bool) -> Vec<Target> {
    let progress = Progress::new("prepare", ids.len() as u64, quiet);
    let targets = ids
        .iter()
        .map(|&id| {
            progress.message(id.name());
            let t = Target {
                id: id.name().to_string(),
                title: id.title().to_string(),
                protocol_runtime: Some(id.protocol_runtime().to_string()),
                preparation: catalog.prepare(id),
            };
            progress.inc(1);
            t
        })
        .collect();
    progress.finish();
    targets
}

/// Runs `sleeplab runtimes`: prints the tables, writes the requested files.
pub fn run(args: &RuntimesArgs, quiet: bool) -> anyhow::Result<i32> {
    check_outputs(&[("--json", &args.output.json), ("--csv", &args.output.csv)])?;
    let ids = resolve_runtimes(args.runtimes.as_ref().map(|l| &l.0[..]))?;
    let config = config(args, &ids);
    let mut saved_files = Vec::new();
    for f in &config.saved_files {
        let bytes = std::fs::read(f)
            .map_err(|e| UsageError::new(format!("cannot read saved probe output {f:?}: {e}")))?;
        saved_files.push((f.clone(), bytes));
    }
    let saved = runtimes::saved_runtimes(&saved_files, config.json_samples)?;
    let catalog = Catalog::locate().map_err(|e| match e {
        CatalogError::BadEnv(_) => anyhow::Error::new(UsageError::new(e.to_string())),
        CatalogError::NotFound(_) => anyhow::Error::new(e),
    })?;
    let start = RunStart::now();
    let targets = prepare(&catalog, &ids, quiet);
    let mut outcome = runtimes::run(&config, targets, !args.list, quiet)?;
    outcome.data.runtimes.extend(saved);
    if args.list {
        print!("{}", runtimes::render_listing(&outcome.data));
        return Ok(0);
    }
    print!("{}", runtimes::render(&outcome.data));
    let mut notes = Vec::new();
    let max_load = config.loads.iter().copied().max().unwrap_or(0);
    let cpus = start.fingerprint.cpu_count;
    if max_load >= cpus {
        notes.push(format!(
            "load {max_load} busy threads on {cpus} CPUs: the probes compete for a CPU"
        ));
    }
    let measured = outcome
        .data
        .runtimes
        .iter()
        .flat_map(|r| r.methods.iter())
        .any(|m| m.status == MethodStatus::Measured);
    let failed = outcome.data.runtimes.iter().any(|r| {
        matches!(r.status, RuntimeStatus::Failed { .. })
            || r.methods
                .iter()
                .any(|m| matches!(m.status, MethodStatus::Failed { .. }))
    });
    let settings = config.run_settings();
    let data = outcome.data.clone();
    let result = start.finish(
        ExperimentData::Runtimes(outcome.data),
        settings,
        outcome.complete,
        notes,
    );
    let code = save(&result, args.output.json.as_deref(), || {
        match &args.output.csv {
            Some(p) => runtimes::write_csv(p, &data),
            None => Ok(()),
        }
    })?;
    if code == 0 && !measured && failed {
        eprintln!("sleeplab: no probe could be measured");
        return Ok(1);
    }
    Ok(code)
}
