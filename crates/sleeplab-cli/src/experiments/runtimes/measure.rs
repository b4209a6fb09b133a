//! One probe run of one method, turned into a result: the exit verdict, the protocol,
//! the checks against the request, the cells (a probe stopped midway keeps the cells it
//! finished), and what was in force for the probe while it measured.

use super::analyze::{Request, periodic_stats};
use super::settings::in_force_notes;
use super::{MethodResult, MethodStatus, OneshotCell, PartialRun, PeriodicCell, RuntimesConfig};
use crate::probe::command::ProbeCommand;
use crate::probe::protocol::{self, Comment, Measurement, MethodInfo, Mode};
use crate::probe::runner::{self, Limits, RunOutput, Termination, Verdict};
use crate::stats::summarize;
use std::time::Duration;

/// The limits of one probe run expected to take `expected`.
pub(super) fn limits(config: &RuntimesConfig, expected: Duration) -> Limits {
    Limits {
        timeout: Duration::from_nanos(config.startup_timeout_ns)
            .saturating_add(expected.saturating_mul(3)),
        output_cap: usize::try_from(config.output_cap_bytes).unwrap_or(usize::MAX),
    }
}

fn comment_texts(c: &[Comment]) -> Vec<String> {
    c.iter().map(|c| c.text.clone()).collect()
}

/// Runs one method at timer slack `slack` (`None` = inherited) under `load` and turns
/// its output into a result (never fails: a failure is data).
pub(super) fn measure(
    config: &RuntimesConfig,
    command: &ProbeCommand,
    m: &MethodInfo,
    expected_runtime: Option<String>,
    slack: Option<u64>,
    load: usize,
) -> MethodResult {
    let req = Request::new(config, &m.method, m.kind, expected_runtime);
    let mut res = MethodResult::new(m.method.clone(), m.kind, m.description.clone(), load, slack);
    let fail = |mut res: MethodResult, reason: String| {
        res.status = MethodStatus::Failed { reason };
        res
    };
    let out = match runner::run(
        command,
        &req.args(),
        config.child_settings(slack),
        limits(config, req.expected()),
    ) {
        Ok(o) => o,
        Err(e) => return fail(res, e.to_string()),
    };
    res.wall_ns = u64::try_from(out.wall.as_nanos()).unwrap_or(u64::MAX);
    res.in_force = out.in_force.clone();
    let parsed = match out.verdict() {
        Verdict::Ok => protocol::parse_measurement(&out.stdout)
            .map(|m| (m, None))
            .map_err(|e| format!("output breaks the protocol: {e}")),
        Verdict::Unavailable(reason) => {
            res.status = MethodStatus::Unavailable { reason };
            return res;
        }
        Verdict::BadArguments(w) => {
            Err(format!("the probe rejected {}: {w}", req.args().join(" ")))
        }
        Verdict::Failed(w) => match stopped_midway(&out, &req, &w) {
            Some(kept) => Ok(kept),
            None => Err(w),
        },
    };
    let (meas, partial) = match parsed {
        Ok(p) => p,
        Err(reason) => return fail(res, reason),
    };
    match req.check(&meas, partial.is_none()) {
        Ok(notes) => res.notes.extend(notes),
        Err(e) => return fail(res, e),
    }
    res.probe_timer_slack_ns = meas
        .header
        .extra
        .get("timerslack_ns")
        .and_then(|v| v.as_u64());
    res.notes.extend(in_force_notes(
        config,
        slack,
        res.probe_timer_slack_ns,
        res.in_force.as_ref(),
    ));
    let last = out.stderr_last_line();
    if !last.is_empty() {
        res.notes.push(format!("stderr: {last}"));
    }
    res.partial = partial;
    fill_cells(&mut res, meas, config.json_samples);
    res
}

/// The cells a probe stopped midway (Ctrl-C, a timeout) had finished, with the reason
/// it stopped (`why`): `None` when it was not stopped, or finished no cell, or what it
/// printed breaks the protocol. A probe killed after its output was complete is whole.
fn stopped_midway(
    out: &RunOutput,
    req: &Request,
    why: &str,
) -> Option<(Measurement, Option<PartialRun>)> {
    if !matches!(
        out.termination,
        Termination::TimedOut | Termination::Interrupted
    ) {
        return None;
    }
    let s = protocol::parse_stopped(&out.stdout).ok()?;
    if s.measurement.cells.is_empty() {
        return None;
    }
    if s.ended {
        return Some((s.measurement, None));
    }
    let partial = PartialRun {
        reason: why.to_string(),
        cells_kept: s.measurement.cells.len() as u64,
        cells_asked: req.cells_ns.len() as u64,
    };
    Some((s.measurement, Some(partial)))
}

/// Moves a parsed measurement's cells into `res`: periodic statistics for a periodic
/// measurement, one summarised cell per requested duration otherwise; the probe's
/// comments become notes.
pub(super) fn fill_cells(res: &mut MethodResult, meas: Measurement, json_samples: usize) {
    res.notes.extend(comment_texts(&meas.trailing_comments));
    if meas.mode == Mode::Periodic {
        if let Some(c) = meas.cells.into_iter().next() {
            let s = periodic_stats(c.value_ns, &c.warmup, &c.samples);
            res.periodic = Some(PeriodicCell {
                period_ns: c.value_ns,
                ticks: c.samples.len() as u64,
                interval: s.interval,
                lateness: s.lateness,
                arrivals_ns: c.samples[..c.samples.len().min(json_samples)].to_vec(),
                notes: comment_texts(&c.comments),
                warmup_ns: c.warmup,
                all_arrivals_ns: c.samples,
            });
        }
    } else {
        res.cells = meas
            .cells
            .into_iter()
            .map(|c| OneshotCell {
                requested_ns: c.value_ns,
                summary: summarize(&c.samples, c.value_ns),
                samples_ns: c.samples[..c.samples.len().min(json_samples)].to_vec(),
                notes: comment_texts(&c.comments),
                warmup_ns: c.warmup,
                all_samples_ns: c.samples,
            })
            .collect();
    }
}
