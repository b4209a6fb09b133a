//! Runs the survey's stages one after the other.

use super::{Level, StagePlan, StageState, StageStatus, SurveyData};
use crate::experiments::{Context, Stop, Wording};
use crate::model::RunStart;
use crate::settings::ThreadSettings;
use sleeplab_stats::Progress;
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

/// Runs `stages` in order. `start` is the survey's start (its fingerprint and command
/// line are copied into every stage's result, and its CPU count is every stage's);
/// `hints` words the stages' hints; `on_stage` is called before each stage (with its
/// index) and after it (with its status), for the terminal.
pub fn run(
    level: Level,
    stages: &[StagePlan],
    start: &RunStart,
    quiet: bool,
    hints: Wording,
    on_stage: &mut dyn FnMut(usize, Option<&StageStatus>),
) -> SurveyOutcome {
    let mut data = SurveyData {
        level,
        stages: Vec::with_capacity(stages.len()),
        results: Vec::new(),
    };
    let stop = Stop::on_interrupt();
    let mut was_interrupted = false;
    let mut failed = false;
    for (i, plan) in stages.iter().enumerate() {
        let mut status = StageStatus {
            name: plan.name.to_string(),
            experiment: plan.experiment().to_string(),
            title: plan.title.to_string(),
            state: StageState::NotRun,
            planned_ms: plan.budget_ms,
            elapsed_ms: 0,
            result: None,
        };
        if was_interrupted || stop.requested() {
            was_interrupted = true;
            data.stages.push(status);
            continue;
        }
        on_stage(i, None);
        if let Some(reason) = plan.skip_reason() {
            status.state = StageState::Skipped {
                reason: reason.to_string(),
            };
            on_stage(i, Some(&status));
            data.stages.push(status);
            continue;
        }
        let ctx = Context::new(
            Progress::new(plan.name, plan.steps(), quiet),
            ThreadSettings::default(),
            start.fingerprint.cpu_count,
            hints,
        )
        .with_stop(stop.clone());
        let stage_start = start.part();
        let t0 = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| plan.run(&ctx)));
        ctx.progress.finish();
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
        if ctx.stopped() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::sweep::{Quota, SweepConfig, SweepData};

    fn tiny_sweep(name: &'static str, mechanisms: &[&str]) -> StagePlan {
        let config = SweepConfig {
            json_samples: 2,
            ..SweepConfig::new(mechanisms, &[0, 1_000], Quota::Iterations { count: 3 })
        };
        StagePlan::new(name, "tiny", 1, config)
    }

    /// Runs `stages` quick and quiet; the outcome and each (stage, state label) the
    /// callback saw (`None` before a stage).
    fn run_quietly(stages: &[StagePlan]) -> (SurveyOutcome, Vec<(usize, Option<&'static str>)>) {
        let mut events = Vec::new();
        let out = run(
            Level::Quick,
            stages,
            &RunStart::now(),
            true,
            Wording::NAMES,
            &mut |i, s| events.push((i, s.map(|s| s.state.label()))),
        );
        (out, events)
    }

    #[test]
    fn a_failing_stage_is_recorded_and_the_others_go_on() {
        let stages = [
            tiny_sweep("first", &["no-such-mechanism"]),
            tiny_sweep("second", &["clock-nanosleep"]),
        ];
        let (out, events) = run_quietly(&stages);
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
        let s = <&SweepData>::try_from(&out.data.results[0].data).unwrap();
        assert_eq!(s.cells.len(), 2);
        assert!(s.cells.iter().all(|c| c.summary.count == 3));
    }

    #[test]
    fn a_skipped_stage_is_recorded_with_its_reason_and_the_next_one_runs() {
        let stages = [
            tiny_sweep("first", &["clock-nanosleep"]).skipped("no tracing here".into()),
            tiny_sweep("second", &["clock-nanosleep"]),
        ];
        assert_eq!(stages[0].budget_ms, 0);
        let (out, events) = run_quietly(&stages);
        assert!(out.complete && !out.interrupted);
        assert_eq!(
            out.data.stages[0].state,
            StageState::Skipped {
                reason: "no tracing here".into()
            }
        );
        assert_eq!(out.data.stages[0].result, None);
        assert_eq!(out.data.results.len(), 1);
        assert_eq!(out.data.stages[1].result, Some(0));
        assert_eq!(
            events,
            vec![(0, None), (0, Some("skipped")), (1, None), (1, Some("ok"))]
        );
    }
}
