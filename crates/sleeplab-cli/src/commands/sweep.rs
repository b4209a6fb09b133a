//! `sleeplab sweep`.

use super::{check_outputs, resolve_names, save};
use crate::cli::SweepArgs;
use crate::contenders;
use crate::experiments::sweep::{
    self, DEFAULT_DURATIONS_NS, Quota, SweepConfig, timertest_durations,
};
use crate::model::{ExperimentData, RunStart};
use crate::output::Progress;
use sleeplab::wait::Support;

/// Builds the sweep's config from the arguments (validating names and paths).
pub fn config(args: &SweepArgs) -> anyhow::Result<SweepConfig> {
    config_with(args, &contenders::all())
}

/// [`config`] with the contender listing already at hand (each listing opens and closes
/// every mechanism's fds to check its support, so it is taken once per command).
fn config_with(args: &SweepArgs, infos: &[contenders::Info]) -> anyhow::Result<SweepConfig> {
    let mechanisms = match &args.mechanisms {
        Some(given) => {
            let names = resolve_names(&given.0, &contenders::names())?;
            for n in &names {
                if let Some(Support::Unsupported(why)) =
                    infos.iter().find(|i| i.name == n).map(|i| &i.support)
                {
                    return Err(crate::error::UsageError::new(format!(
                        "mechanism {n} is not supported on this machine: {why}"
                    ))
                    .into());
                }
            }
            names
        }
        None => infos
            .iter()
            .filter(|i| i.support == Support::Supported)
            .map(|i| i.name.to_string())
            .collect(),
    };
    let durations_ns = if args.timertest {
        timertest_durations()
    } else {
        args.durations
            .as_ref()
            .map_or_else(|| DEFAULT_DURATIONS_NS.to_vec(), |l| l.0.clone())
    };
    let quota = match args.iterations {
        Some(count) => Quota::Iterations { count },
        None => {
            if args.min_iterations > args.max_iterations {
                return Err(crate::error::UsageError::new(format!(
                    "invalid --min-iterations {}: more than --max-iterations {}",
                    args.min_iterations, args.max_iterations
                ))
                .into());
            }
            Quota::Budget {
                budget_ns: args.budget,
                min_count: args.min_iterations,
                max_count: args.max_iterations,
            }
        }
    };
    let mut loads = Vec::new();
    for &l in &args.load.0 {
        if !loads.contains(&l) {
            loads.push(l);
        }
    }
    Ok(SweepConfig {
        mechanisms,
        durations_ns,
        loads,
        timer_slacks_ns: args
            .timer_slack
            .as_ref()
            .map_or_else(Vec::new, |l| l.0.clone()),
        quota,
        warmup: args.warmup,
        rounds: args.rounds,
        json_samples: args.json_samples as usize,
        raw_cap: 100_000,
    })
}

/// Runs the sweep, prints its tables, writes the requested files.
pub fn run(args: &SweepArgs, quiet: bool) -> anyhow::Result<i32> {
    args.threads.validate()?;
    check_outputs(&[("--json", &args.output.json), ("--csv", &args.output.csv)])?;
    let infos = contenders::all();
    let config = config_with(args, &infos)?;
    let start = RunStart::now();
    let progress = Progress::new(
        "sweep",
        estimate_cells(&config, &infos) * config.rounds,
        quiet,
    );
    let mut notes = Vec::new();
    let max_load = config.loads.iter().copied().max().unwrap_or(0);
    let cpus = start.fingerprint.cpu_count;
    if max_load >= cpus {
        notes.push(format!(
            "load {max_load} busy threads on {cpus} CPUs: the measuring thread competes for a CPU"
        ));
    }
    let outcome = sweep::run(&config, &args.threads, &progress)?;
    progress.finish();
    print!("{}", sweep::render(&outcome.data));
    let data = outcome.data.clone();
    let result = start.finish(
        ExperimentData::Sweep(outcome.data),
        outcome.settings,
        outcome.complete,
        notes,
    );
    save(&result, args.output.json.as_deref(), || {
        match &args.output.csv {
            Some(p) => sweep::write_csv(p, &data),
            None => Ok(()),
        }
    })
}

/// Number of cells the sweep will measure (for the progress bar).
fn estimate_cells(config: &SweepConfig, infos: &[contenders::Info]) -> u64 {
    let per_axis = (config.loads.len() * config.timer_slacks_ns.len().max(1)) as u64;
    config
        .mechanisms
        .iter()
        .map(|m| {
            let info = infos.iter().find(|i| i.name == m);
            config
                .durations_ns
                .iter()
                .filter(|&&d| info.is_none_or(|i| i.accepts(d)))
                .count() as u64
        })
        .sum::<u64>()
        * per_axis
}
