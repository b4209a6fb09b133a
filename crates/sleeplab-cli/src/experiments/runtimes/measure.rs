//! One probe run of one method, turned into a result: the exit verdict, the protocol,
//! the checks against the request, the cells (a probe stopped midway keeps the cells it
//! finished), and what was in force for the probe while it measured.

use super::analyze::{Request, periodic_stats};
use super::settings::{ProbeSettings, in_force_notes};
use super::{
    BATCHES, CellTiming, MethodResult, MethodStatus, OneshotCell, PartialRun, PeriodicCell,
    RuntimesConfig,
};
use crate::experiments::Wording;
use crate::probe::command::ProbeCommand;
use crate::probe::observe;
use crate::probe::protocol::{
    self, Comment, Header, Measurement, MethodInfo, Mode, OPTION_TIMESTAMPS,
};
use crate::probe::runner::{self, Limits, RunOutput, Termination, Verdict};
use sleeplab_stats::{UnitIntervals, summarize};
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
/// its output into a result (never fails: a failure is data). A request whose cells
/// take different counts ([`ProbeQuota::PerRequest`](super::ProbeQuota)) runs the probe
/// once per group of cells, merged into one result; a failure or a stop ends it there,
/// keeping the cells measured before. `listed`: the header of the probe's `--list`, whose
/// runtime its measurement must name, and whose options say whether it takes
/// `--timestamps` (passed only then, when the config asks for timestamps). The notes
/// word their hints in `hints`.
pub(super) fn measure(
    config: &RuntimesConfig,
    command: &ProbeCommand,
    m: &MethodInfo,
    listed: &Header,
    slack: Option<u64>,
    load: usize,
    hints: Wording,
) -> MethodResult {
    let mut whole = Request::new(config, &m.method, m.kind, Some(listed.runtime.clone()));
    whole.timestamps &= listed.options().contains(&OPTION_TIMESTAMPS);
    let asked = whole.cells_ns.len() as u64;
    let mut merged: Option<MethodResult> = None;
    for req in whole.clone().split() {
        if let Some(acc) = merged.as_mut() {
            if crate::interrupt::interrupted() {
                acc.partial = Some(PartialRun {
                    reason: "interrupted (Ctrl-C)".into(),
                    cells_kept: 0,
                    cells_asked: 0,
                });
                break;
            }
        }
        let r = measure_one(config, command, m, &req, slack, load, hints);
        match merged.as_mut() {
            None => merged = Some(r),
            Some(acc) => merge(acc, r),
        }
        if merged
            .as_ref()
            .is_some_and(|a| a.status != MethodStatus::Measured || a.partial.is_some())
        {
            break;
        }
    }
    let mut res =
        merged.unwrap_or_else(|| measure_one(config, command, m, &whole, slack, load, hints));
    if let Some(p) = res.partial.as_mut() {
        p.cells_kept = res.cells.len() as u64;
        p.cells_asked = asked;
    }
    res
}

/// Adds a later probe run of the same method to `acc`: its cells, notes and wall time;
/// its failure or stop.
fn merge(acc: &mut MethodResult, r: MethodResult) {
    acc.cells.extend(r.cells);
    acc.timing.extend(r.timing);
    acc.notes.extend(r.notes);
    acc.wall_ns = acc.wall_ns.saturating_add(r.wall_ns);
    if acc.in_force.is_none() {
        acc.in_force = r.in_force;
    }
    if acc.probe_timer_slack_ns.is_none() {
        acc.probe_timer_slack_ns = r.probe_timer_slack_ns;
    }
    if r.status != MethodStatus::Measured {
        acc.status = r.status;
    }
    if r.partial.is_some() {
        acc.partial = r.partial;
    }
}

/// One probe run of `req` (its cells share a count); its notes word their hints in
/// `hints`.
fn measure_one(
    config: &RuntimesConfig,
    command: &ProbeCommand,
    m: &MethodInfo,
    req: &Request,
    slack: Option<u64>,
    load: usize,
    hints: Wording,
) -> MethodResult {
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
        Verdict::Failed(w) => match stopped_midway(&out, req, &w) {
            Some(kept) => Ok(kept),
            None => Err(w),
        },
    };
    let (mut meas, partial) = match parsed {
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
        hints,
    ));
    let last = out.stderr_last_line();
    if !last.is_empty() {
        res.notes.push(format!("stderr: {last}"));
    }
    if let Some(note) = meas.header.tid.and_then(|tid| foreign_thread(tid, &out)) {
        res.notes.push(note);
        meas.header.tid = None;
    }
    res.partial = partial;
    fill_cells(&mut res, meas, config.json_samples, Some(out.pid));
    res
}

/// Why the thread `tid` a probe named as its measuring thread is not one of its own,
/// if it is provably not: it was not among the probe's threads when its header came
/// out and it is now a thread of another process. (A probe done before its threads
/// were read, or whose measuring thread has ended since, cannot be checked: its `tid`
/// is kept.) A wrong thread would point a kernel trace at another process.
fn foreign_thread(tid: u32, out: &RunOutput) -> Option<String> {
    if out.threads.as_ref().is_some_and(|t| t.contains(&tid)) {
        return None;
    }
    let owner = observe::process_of_thread(tid).filter(|&p| p != out.pid)?;
    Some(format!(
        "the probe named thread {tid} as its measuring thread, but that is a thread of process {owner}, not of the probe (process {}); the thread id is dropped",
        out.pid
    ))
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
/// measurement, one summarised cell per requested duration otherwise, each with its
/// timing (process `pid`, the header's measuring thread, the calls' starts); the probe's
/// comments become notes.
pub(super) fn fill_cells(
    res: &mut MethodResult,
    meas: Measurement,
    json_samples: usize,
    pid: Option<u32>,
) {
    res.notes.extend(comment_texts(&meas.trailing_comments));
    let tid = meas.header.tid;
    let timing = |c: &mut protocol::Cell| CellTiming {
        pid,
        tid,
        warmup_starts_ns: c.warmup_starts_ns.take(),
        starts_ns: c.starts_ns.take(),
        t0_ns: c.t0_ns,
    };
    if meas.mode == Mode::Periodic {
        if let Some(mut c) = meas.cells.into_iter().next() {
            res.timing = vec![timing(&mut c)];
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
                explanation: None,
            });
        }
    } else {
        (res.timing, res.cells) = meas
            .cells
            .into_iter()
            .map(|mut c| {
                let t = timing(&mut c);
                let cell = OneshotCell {
                    requested_ns: c.value_ns,
                    summary: summarize(&c.samples, c.value_ns),
                    samples_ns: c.samples[..c.samples.len().min(json_samples)].to_vec(),
                    notes: comment_texts(&c.comments),
                    warmup_ns: c.warmup,
                    units: Some(UnitIntervals::of_batches(&c.samples, BATCHES)),
                    all_samples_ns: c.samples,
                    explanation: None,
                };
                (t, cell)
            })
            .unzip();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::protocol::{Kind, parse_measurement};

    fn parsed(body: &str, header_extra: &str, mode: &str) -> Measurement {
        let text = format!(
            "{{\"protocol\":\"sleeplab-probe/1\",\"runtime\":\"c\",\"implementation\":\"gcc\",\"runtime_version\":\"12\",\"clock\":\"m\",\"platform\":\"linux\",\"method\":\"m\",\"mode\":\"{mode}\"{header_extra}}}\n{body}end\n"
        );
        parse_measurement(text.as_bytes()).unwrap()
    }

    /// Each cell keeps its calls' starts and who measured it, beside the cell, across
    /// the probe runs a request is split into.
    #[test]
    fn timing_stays_parallel_to_the_cells_across_merged_runs() {
        let stamps = r#","tid":41,"timestamps":true"#;
        let mut a = MethodResult::new("m", Kind::Oneshot, "", 0, None);
        let first = parsed(
            "cell 100\nw 3 900\ns 5 1000\ns 6 1010\ndone 100 2\n",
            stamps,
            "oneshot",
        );
        fill_cells(&mut a, first, 1, Some(40));
        let mut b = MethodResult::new("m", Kind::Oneshot, "", 0, None);
        let second = parsed("cell 7\ns 8\ndone 7 1\n", r#","tid":51"#, "oneshot");
        fill_cells(&mut b, second, 1, Some(50));
        merge(&mut a, b);
        assert_eq!(a.cells.len(), 2);
        assert_eq!(a.cells[0].samples_ns, [5], "the JSON cap still holds");
        assert_eq!(a.cells[0].all_samples_ns, [5, 6]);
        assert_eq!(
            a.timing,
            [
                CellTiming {
                    pid: Some(40),
                    tid: Some(41),
                    warmup_starts_ns: Some(vec![900]),
                    starts_ns: Some(vec![1000, 1010]),
                    t0_ns: None,
                },
                CellTiming {
                    pid: Some(50),
                    tid: Some(51),
                    ..CellTiming::default()
                },
            ]
        );
        let mut p = MethodResult::new("t", Kind::Periodic, "", 0, None);
        let ticks = parsed(
            "cell 10\nt0 5000\nw 11\nt 20\ndone 10 1\n",
            r#","timestamps":true"#,
            "periodic",
        );
        fill_cells(&mut p, ticks, 10, None);
        assert_eq!(p.periodic.as_ref().map(|c| c.ticks), Some(1));
        assert_eq!(
            p.timing,
            [CellTiming {
                t0_ns: Some(5000),
                ..CellTiming::default()
            }]
        );
    }
}
