//! Runs the survey's stages one after the other.

use super::{Level, StageConfig, StagePlan, StageState, StageStatus, SurveyData};
use crate::experiments::{cpu, pace, runtimes, short, sweep, timers};
use crate::interrupt::interrupted;
use crate::model::{ExperimentData, RunSettings, RunStart, now_rfc3339};
use crate::output::Progress;
use crate::settings::ThreadArgs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

/// What a survey produced.
#[derive(Debug, Clone)]
pub struct SurveyOutcome {
    /// Stages and their results (sweep cells keep their raw samples in memory for CSV).
    pub data: SurveyData,
    /// False when interrupted or when a stage failed.
    pub complete: bool,
    /// True when the user interrupted the survey.
    pub interrupted: bool,
}

/// What one stage produced.
struct StageOutput {
    data: ExperimentData,
    settings: RunSettings,
    complete: bool,
    notes: Vec<String>,
}

/// Runs `stages` in order. `start` is the survey's start (its fingerprint and command
/// line are copied into every stage's result); `on_stage` is called before each stage
/// (with its index) and after it (with its status), for the terminal.
pub fn run(
    level: Level,
    stages: &[StagePlan],
    start: &RunStart,
    quiet: bool,
    on_stage: &mut dyn FnMut(usize, Option<&StageStatus>),
) -> SurveyOutcome {
    let mut data = SurveyData {
        level,
        stages: Vec::with_capacity(stages.len()),
        results: Vec::new(),
    };
    let mut was_interrupted = false;
    let mut failed = false;
    for (i, plan) in stages.iter().enumerate() {
        let mut status = StageStatus {
            name: plan.name.to_string(),
            experiment: plan.config.experiment().to_string(),
            title: plan.title.to_string(),
            state: StageState::NotRun,
            planned_ms: plan.budget_ms,
            elapsed_ms: 0,
            result: None,
        };
        if was_interrupted || interrupted() {
            was_interrupted = true;
            data.stages.push(status);
            continue;
        }
        on_stage(i, None);
        let stage_start = RunStart {
            started_at: now_rfc3339(),
            fingerprint: start.fingerprint.clone(),
            command_line: start.command_line.clone(),
        };
        let t0 = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| run_stage(plan, quiet)));
        status.elapsed_ms = t0.elapsed().as_millis() as u64;
        match outcome {
            Ok(Ok(out)) => {
                status.state = if out.complete {
                    StageState::Ok
                } else {
                    was_interrupted = true;
                    StageState::Interrupted
                };
                status.result = Some(data.results.len());
                data.results.push(stage_start.finish(
                    out.data,
                    out.settings,
                    out.complete,
                    out.notes,
                ));
            }
            Ok(Err(e)) => {
                failed = true;
                status.state = StageState::Failed {
                    error: one_line(&format!("{e:#}")),
                };
            }
            Err(panic) => {
                failed = true;
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "unknown panic".into());
                status.state = StageState::Failed {
                    error: one_line(&format!("panicked: {msg}")),
                };
            }
        }
        if interrupted() {
            was_interrupted = true;
        }
        on_stage(i, Some(&status));
        data.stages.push(status);
    }
    SurveyOutcome {
        data,
        complete: !was_interrupted && !failed,
        interrupted: was_interrupted,
    }
}

fn one_line(s: &str) -> String {
    s.lines().next().unwrap_or("error").trim().to_string()
}

/// Runs one stage through its experiment's own `run` function, with a progress bar.
fn run_stage(plan: &StagePlan, quiet: bool) -> anyhow::Result<StageOutput> {
    let threads = ThreadArgs::default();
    match &plan.config {
        StageConfig::Sweep(config) => {
            let progress = Progress::new(plan.name, sweep_steps(config), quiet);
            let out = sweep::run(config, &threads, &progress);
            progress.finish();
            let out = out?;
            let mut notes = Vec::new();
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            let max = config.loads.iter().copied().max().unwrap_or(0);
            if max > 0 && max >= cpus {
                notes.push(format!(
                    "load {max} busy threads on {cpus} CPUs: the measuring thread competes for a CPU"
                ));
            }
            Ok(StageOutput {
                data: ExperimentData::Sweep(out.data),
                settings: out.settings,
                complete: out.complete,
                notes,
            })
        }
        StageConfig::Short(config) => {
            let progress = Progress::new(plan.name, short::planned_batches(config), quiet);
            let out = short::run(config, &threads, &progress);
            progress.finish();
            let out = out?;
            Ok(output(
                ExperimentData::Short(out.data),
                out.settings,
                out.complete,
            ))
        }
        StageConfig::Pace(config) => {
            let steps = config.frames * config.strategies.len() as u64;
            let progress = Progress::new(plan.name, steps, quiet);
            let out = pace::run(config, &threads, &progress);
            progress.finish();
            let out = out?;
            Ok(output(
                ExperimentData::Pace(out.data),
                out.settings,
                out.complete,
            ))
        }
        StageConfig::Cpu(config) => {
            let steps = (config.strategies.len() * config.intervals_ns.len()) as u64;
            let progress = Progress::new(plan.name, steps, quiet);
            let out = cpu::run(config, &threads, &progress);
            progress.finish();
            let (data, settings, complete) = out?;
            Ok(output(ExperimentData::Cpu(data), settings, complete))
        }
        StageConfig::Timers(config) => {
            let progress = Progress::new(plan.name, timers::cell_count(config), quiet);
            let out = timers::run(config, &threads, &progress);
            progress.finish();
            let out = out?;
            Ok(output(
                ExperimentData::Timers(out.data),
                out.settings,
                out.complete,
            ))
        }
        StageConfig::Simulate(args) => {
            use clap::Parser;
            /// `sleeplab simulate`'s arguments, parsed on their own.
            #[derive(Parser)]
            struct Sim {
                #[command(flatten)]
                args: crate::commands::simulate::SimulateArgs,
            }
            let parsed = Sim::try_parse_from(
                std::iter::once("simulate".to_string()).chain(args.iter().cloned()),
            )
            .map_err(|e| {
                anyhow::anyhow!(
                    "{}",
                    e.to_string().lines().next().unwrap_or("bad arguments")
                )
            })?;
            let (config, models, notes) = crate::commands::simulate::config(&parsed.args)?;
            let cells = crate::sim::grid::cell_indices(&config).len() as u64;
            let progress = Progress::new(plan.name, cells, quiet);
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            let out = crate::sim::run(&config, &models, &progress, threads);
            progress.finish();
            let out = out?;
            Ok(StageOutput {
                data: ExperimentData::Simulate(out.data),
                settings: RunSettings::default(),
                complete: out.complete,
                notes,
            })
        }
        StageConfig::Runtimes(config) => {
            use crate::probe::catalog::{Catalog, RuntimeId};
            let catalog = Catalog::locate().map_err(|e| anyhow::anyhow!("{e}"))?;
            let ids: Vec<RuntimeId> = config
                .runtimes
                .iter()
                .filter_map(|n| RuntimeId::parse(n))
                .collect();
            let targets = crate::commands::runtimes::prepare(&catalog, &ids, quiet);
            let out = runtimes::run(config, targets, true, quiet)?;
            let settings = RunSettings {
                timer_slack_ns: sleeplab::system::timer_slack_ns(),
                ..RunSettings::default()
            };
            Ok(output(
                ExperimentData::Runtimes(out.data),
                settings,
                out.complete,
            ))
        }
    }
}

/// A stage's output from an experiment's (data, settings, complete).
fn output(data: ExperimentData, settings: RunSettings, complete: bool) -> StageOutput {
    StageOutput {
        data,
        settings,
        complete,
        notes: Vec::new(),
    }
}

/// Progress steps of a sweep: one per measured cell and round.
fn sweep_steps(config: &sweep::SweepConfig) -> u64 {
    let infos = crate::contenders::all();
    let per_mech: u64 = config
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
        .sum();
    per_mech
        * config.loads.len() as u64
        * config.timer_slacks_ns.len().max(1) as u64
        * config.rounds
}

/// Keeps the stage result type private but lets tests build statuses.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::sweep::{Quota, SweepConfig};

    fn tiny_sweep(name: &'static str, mechanisms: &[&str]) -> StagePlan {
        StagePlan {
            name,
            title: "tiny",
            budget_ms: 100,
            config: StageConfig::Sweep(SweepConfig {
                mechanisms: mechanisms.iter().map(|s| s.to_string()).collect(),
                durations_ns: vec![0, 1_000],
                loads: vec![0],
                timer_slacks_ns: vec![],
                quota: Quota::Iterations { count: 3 },
                warmup: 0,
                rounds: 1,
                json_samples: 2,
                raw_cap: 100,
            }),
        }
    }

    #[test]
    fn a_failing_stage_is_recorded_and_the_others_go_on() {
        let stages = [
            tiny_sweep("first", &["no-such-mechanism"]),
            tiny_sweep("second", &["clock-nanosleep"]),
        ];
        let mut events = Vec::new();
        let out = run(
            Level::Quick,
            &stages,
            &RunStart::now(),
            true,
            &mut |i, s| events.push((i, s.map(|s| s.state.label()))),
        );
        assert!(!out.complete);
        assert!(!out.interrupted);
        assert_eq!(out.data.stages.len(), 2);
        assert!(matches!(
            &out.data.stages[0].state,
            StageState::Failed { error } if error.contains("no-such-mechanism")
        ));
        assert_eq!(out.data.stages[0].result, None);
        assert_eq!(out.data.stages[1].state, StageState::Ok);
        assert_eq!(out.data.stages[1].result, Some(0));
        assert_eq!(out.data.results.len(), 1);
        assert_eq!(out.data.results[0].data.name(), "sweep");
        assert!(out.data.stage_result("second").is_some());
        assert_eq!(
            events,
            vec![(0, None), (0, Some("failed")), (1, None), (1, Some("ok"))]
        );
        // The sweep had 2 requests × 1 mechanism × 3 samples.
        let ExperimentData::Sweep(s) = &out.data.results[0].data else {
            panic!("not a sweep");
        };
        assert_eq!(s.cells.len(), 2);
        assert!(s.cells.iter().all(|c| c.summary.count == 3));
    }
}
