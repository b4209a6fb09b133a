//! The runtimes engine: list every prepared probe, then run each selected method once
//! per setting (load × timer slack), one probe process per method.

use super::analyze::{Request, periodic_stats};
use super::{
    MethodResult, MethodStatus, OneshotCell, PeriodicCell, RuntimeResult, RuntimeStatus,
    RuntimesConfig, RuntimesData, UnavailableMethod,
};
use crate::error::UsageError;
use crate::interrupt::interrupted;
use crate::load::LoadThreads;
use crate::output::{Progress, fmt_ns};
use crate::probe::catalog::Preparation;
use crate::probe::child::ChildSettings;
use crate::probe::command::ProbeCommand;
use crate::probe::protocol::{self, Comment, ListOutput, Measurement, MethodInfo, Mode};
use crate::probe::runner::{self, Limits, Verdict};
use crate::stats::summarize;
use std::time::Duration;

/// A runtime to measure: its name, and how it was prepared.
#[derive(Debug, Clone)]
pub struct Target {
    /// Command-line name.
    pub id: String,
    /// Human title.
    pub title: String,
    /// The header `runtime` its probe must print (`None` = anything).
    pub protocol_runtime: Option<String>,
    /// Ready to launch, skipped or failed.
    pub preparation: Preparation,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RuntimesOutcome {
    /// The data (partial when interrupted).
    pub data: RuntimesData,
    /// False when interrupted.
    pub complete: bool,
}

/// A listed runtime: its command and its methods.
struct Listed {
    index: usize,
    command: ProbeCommand,
    list: ListOutput,
}

/// Runs the experiment over `targets` (already prepared by the catalog, or fakes in
/// tests). Fails only on bad input (`--methods` naming no listed method); every probe
/// failure is recorded in the data and the run goes on. With `measure_methods` false
/// the probes are only listed.
pub fn run(
    config: &RuntimesConfig,
    targets: Vec<Target>,
    measure_methods: bool,
    quiet: bool,
) -> anyhow::Result<RuntimesOutcome> {
    let mut results: Vec<RuntimeResult> = Vec::new();
    let mut listed: Vec<Listed> = Vec::new();
    let mut complete = true;
    let progress = Progress::new("list", targets.len() as u64, quiet);
    for t in targets {
        let mut r = RuntimeResult {
            id: t.id.clone(),
            title: t.title.clone(),
            status: RuntimeStatus::Measured,
            runtime: None,
            implementation: None,
            version: None,
            platform: None,
            clock: None,
            header_extra: Default::default(),
            command: vec![],
            prepared: None,
            methods: vec![],
            unavailable: vec![],
            listed: vec![],
        };
        match t.preparation {
            Preparation::Skipped { reason, install } => {
                r.status = RuntimeStatus::Skipped { reason, install };
            }
            Preparation::Failed { reason } => r.status = RuntimeStatus::Failed { reason },
            Preparation::Ready { command, note } => {
                r.command = command.words(&[]);
                r.prepared = Some(note);
                if interrupted() {
                    complete = false;
                    r.status = RuntimeStatus::Failed {
                        reason: "not listed: interrupted".into(),
                    };
                } else {
                    progress.message(format!("{} --list", t.id));
                    match list(config, &command, t.protocol_runtime.as_deref()) {
                        Ok(l) => {
                            let h = &l.header;
                            r.runtime = Some(h.runtime.clone());
                            r.implementation = Some(h.implementation.clone());
                            r.version = Some(h.runtime_version.clone());
                            r.platform = Some(h.platform.clone());
                            r.clock = Some(h.clock.clone());
                            r.header_extra = h.extra.clone();
                            r.listed = l.methods.clone();
                            listed.push(Listed {
                                index: results.len(),
                                command,
                                list: l,
                            });
                        }
                        Err(reason) => r.status = RuntimeStatus::Failed { reason },
                    }
                }
            }
        }
        results.push(r);
        progress.inc(1);
    }
    progress.finish();

    if let Some(wanted) = &config.methods {
        check_methods(wanted, &listed)?;
    }
    let selected = |m: &MethodInfo| {
        config
            .methods
            .as_ref()
            .is_none_or(|w| w.iter().any(|x| x == &m.method))
    };
    for l in &listed {
        for m in l
            .list
            .methods
            .iter()
            .filter(|m| !m.available && selected(m))
        {
            results[l.index].unavailable.push(UnavailableMethod {
                method: m.method.clone(),
                kind: m.kind,
                reason: m.reason.clone().unwrap_or_default(),
            });
        }
    }

    let slacks: Vec<Option<u64>> = if config.timer_slacks_ns.is_empty() {
        vec![None]
    } else {
        config.timer_slacks_ns.iter().map(|&s| Some(s)).collect()
    };
    if !measure_methods {
        listed.clear();
    }
    let jobs_per_level: u64 = listed
        .iter()
        .map(|l| {
            l.list
                .methods
                .iter()
                .filter(|m| m.available && selected(m))
                .count() as u64
        })
        .sum();
    let levels = (config.loads.len() * slacks.len()) as u64;
    let progress = Progress::new("measure", jobs_per_level * levels, quiet);
    'levels: for &load in &config.loads {
        let _load = LoadThreads::start(load);
        for &slack in &slacks {
            for l in &listed {
                for m in l.list.methods.iter().filter(|m| m.available && selected(m)) {
                    if interrupted() {
                        complete = false;
                        break 'levels;
                    }
                    let r = &mut results[l.index];
                    progress.message(format!(
                        "{} {} load {load}{}",
                        r.id,
                        m.method,
                        slack
                            .map(|s| format!(" slack {}", fmt_ns(s)))
                            .unwrap_or_default()
                    ));
                    let settings = ChildSettings {
                        timer_slack_ns: slack,
                        pin_cpu: config.pin_cpu,
                    };
                    let expected = Some(l.list.header.runtime.clone());
                    let res = measure(config, &l.command, m, expected, settings, load);
                    if interrupted() {
                        complete = false;
                    }
                    r.methods.push(res);
                    progress.inc(1);
                }
            }
        }
    }
    progress.finish();
    Ok(RuntimesOutcome {
        data: RuntimesData {
            config: config.clone(),
            runtimes: results,
        },
        complete,
    })
}

/// Fails with a usage error when a wanted method is listed by no runtime.
fn check_methods(wanted: &[String], listed: &[Listed]) -> Result<(), UsageError> {
    if listed.is_empty() {
        return Ok(());
    }
    let known: Vec<&str> = listed
        .iter()
        .flat_map(|l| l.list.methods.iter().map(|m| m.method.as_str()))
        .collect();
    for w in wanted {
        if !known.contains(&w.as_str()) {
            let hint = crate::parse::closest(w, known.iter().copied())
                .map(|c| format!(" (did you mean {c}?)"))
                .unwrap_or_else(|| " (see `sleeplab runtimes --list`)".into());
            return Err(UsageError::new(format!(
                "unknown method {w:?}: no selected runtime's probe lists it{hint}"
            )));
        }
    }
    Ok(())
}

/// The limits of one probe run expected to take `expected`.
fn limits(config: &RuntimesConfig, expected: Duration) -> Limits {
    Limits {
        timeout: Duration::from_nanos(config.startup_timeout_ns)
            .saturating_add(expected.saturating_mul(3)),
        output_cap: usize::try_from(config.output_cap_bytes).unwrap_or(usize::MAX),
    }
}

/// Runs `--list` and parses it.
fn list(
    config: &RuntimesConfig,
    command: &ProbeCommand,
    expected_runtime: Option<&str>,
) -> Result<ListOutput, String> {
    let out = runner::run(
        command,
        &["--list".to_string()],
        ChildSettings::default(),
        limits(config, Duration::ZERO),
    )
    .map_err(|e| e.to_string())?;
    match out.verdict() {
        Verdict::Ok => {}
        Verdict::Failed(w) | Verdict::BadArguments(w) | Verdict::Unavailable(w) => {
            return Err(format!("--list failed: {w}"));
        }
    }
    let l = protocol::parse_list(&out.stdout).map_err(|e| format!("--list output: {e}"))?;
    if let Some(rt) = expected_runtime {
        if l.header.runtime != rt {
            return Err(format!(
                "--list header says runtime {:?}, expected {rt:?}",
                l.header.runtime
            ));
        }
    }
    Ok(l)
}

fn comment_texts(c: &[Comment]) -> Vec<String> {
    c.iter().map(|c| c.text.clone()).collect()
}

/// Runs one method and turns its output into a result (never fails: a failure is data).
fn measure(
    config: &RuntimesConfig,
    command: &ProbeCommand,
    m: &MethodInfo,
    expected_runtime: Option<String>,
    settings: ChildSettings,
    load: usize,
) -> MethodResult {
    let req = Request::new(config, &m.method, m.kind, expected_runtime);
    let mut res = MethodResult {
        method: m.method.clone(),
        kind: m.kind,
        description: m.description.clone(),
        load,
        timer_slack_ns: settings.timer_slack_ns,
        probe_timer_slack_ns: None,
        status: MethodStatus::Measured,
        cells: vec![],
        periodic: None,
        notes: vec![],
        wall_ns: 0,
    };
    let fail = |mut res: MethodResult, reason: String| {
        res.status = MethodStatus::Failed { reason };
        res
    };
    let out = match runner::run(
        command,
        &req.args(),
        settings,
        limits(config, req.expected()),
    ) {
        Ok(o) => o,
        Err(e) => return fail(res, e.to_string()),
    };
    res.wall_ns = u64::try_from(out.wall.as_nanos()).unwrap_or(u64::MAX);
    match out.verdict() {
        Verdict::Ok => {}
        Verdict::Unavailable(reason) => {
            res.status = MethodStatus::Unavailable { reason };
            return res;
        }
        Verdict::BadArguments(w) => {
            return fail(
                res,
                format!("the probe rejected {}: {w}", req.args().join(" ")),
            );
        }
        Verdict::Failed(w) => return fail(res, w),
    }
    let meas = match protocol::parse_measurement(&out.stdout) {
        Ok(m) => m,
        Err(e) => return fail(res, format!("output breaks the protocol: {e}")),
    };
    match req.check(&meas) {
        Ok(notes) => res.notes.extend(notes),
        Err(e) => return fail(res, e),
    }
    res.probe_timer_slack_ns = meas
        .header
        .extra
        .get("timerslack_ns")
        .and_then(|v| v.as_u64());
    if let (Some(set), Some(seen)) = (settings.timer_slack_ns, res.probe_timer_slack_ns) {
        if set != seen && set != 0 {
            res.notes.push(format!(
                "timer slack {set} ns was set for the probe, but it reports {seen} ns"
            ));
        }
    }
    let last = out.stderr_last_line();
    if !last.is_empty() {
        res.notes.push(format!("stderr: {last}"));
    }
    fill_cells(&mut res, meas, config.json_samples);
    res
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
