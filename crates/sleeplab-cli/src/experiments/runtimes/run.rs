//! The runtimes engine: list every prepared probe, then run each selected method once
//! per setting (load × timer slack), one probe process per method.

use super::measure::{limits, measure};
use super::settings::check_mlock;
use super::{RuntimeResult, RuntimeStatus, RuntimesConfig, RuntimesData, UnavailableMethod};
use crate::error::UsageError;
use crate::experiments::{Hint, Wording};
use crate::interrupt::interrupted;
use crate::load::LoadThreads;
use crate::parse::Names;
use crate::probe::catalog::Preparation;
use crate::probe::child::ChildSettings;
use crate::probe::command::ProbeCommand;
use crate::probe::protocol::{self, ListOutput, MethodInfo, arg};
use crate::probe::runner::{self, Verdict};
use crate::settings::slack_levels;
use sleeplab_stats::{Progress, fmt_ns};
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
/// tests), reporting its listing and measuring phases to `progress`. Fails only on bad
/// input (`--methods` naming no listed method); every probe failure is recorded in the
/// data and the run goes on. With `measure_methods` false the probes are only listed.
/// The notes and the bad-input error word their hints in `hints`.
pub fn run(
    config: &RuntimesConfig,
    targets: Vec<Target>,
    measure_methods: bool,
    progress: &Progress,
    hints: Wording,
) -> anyhow::Result<RuntimesOutcome> {
    let mut results: Vec<RuntimeResult> = Vec::new();
    let mut listed: Vec<Listed> = Vec::new();
    let mut complete = true;
    progress.restart("list", targets.len() as u64);
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
                    progress.message(format!("{} {}", t.id, arg::LIST));
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

    if let Some(wanted) = &config.methods {
        check_methods(wanted, &listed, hints)?;
    }
    if measure_methods {
        let headers: Vec<(&str, &protocol::Header)> = listed
            .iter()
            .map(|l| (results[l.index].id.as_str(), &l.list.header))
            .collect();
        check_mlock(config.mlock, &headers)?;
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

    let slacks = slack_levels(&config.timer_slacks_ns);
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
    progress.restart("measure", jobs_per_level * levels);
    let mut tracing = sleeplab_account::Recordings::new(config.trace);
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
                    let recording = super::trace::begin(&tracing);
                    let mut res =
                        measure(config, &l.command, m, &l.list.header, slack, load, hints);
                    super::trace::end(&mut tracing, recording, &mut res);
                    if interrupted() {
                        complete = false;
                    }
                    r.methods.push(res);
                    progress.inc(1);
                }
            }
        }
    }
    Ok(RuntimesOutcome {
        data: RuntimesData {
            config: config.clone(),
            runtimes: results,
            tracing: tracing.status(),
        },
        complete,
    })
}

/// Fails with a usage error when a wanted method is listed by no runtime (what lists
/// them in `hints`' words).
fn check_methods(wanted: &[String], listed: &[Listed], hints: Wording) -> Result<(), UsageError> {
    if listed.is_empty() {
        return Ok(());
    }
    let known = Names::new(
        "method",
        listed
            .iter()
            .flat_map(|l| l.list.methods.iter().map(|m| m.method.as_str())),
    )
    .detail(": no selected runtime's probe lists it")
    .otherwise(format!("see `{}`", hints.word(Hint::ProbeMethods)));
    known.resolve(wanted)?;
    Ok(())
}

/// Runs the probe's `--list` and parses it.
fn list(
    config: &RuntimesConfig,
    command: &ProbeCommand,
    expected_runtime: Option<&str>,
) -> Result<ListOutput, String> {
    let out = runner::run(
        command,
        &[arg::LIST.to_string()],
        ChildSettings::default(),
        limits(config, Duration::ZERO),
    )
    .map_err(|e| e.to_string())?;
    match out.verdict() {
        Verdict::Ok => {}
        Verdict::Failed(w) | Verdict::BadArguments(w) | Verdict::Unavailable(w) => {
            return Err(format!("{} failed: {w}", arg::LIST));
        }
    }
    let l = protocol::parse_list(&out.stdout).map_err(|e| format!("{} output: {e}", arg::LIST))?;
    if let Some(rt) = expected_runtime {
        if l.header.runtime != rt {
            return Err(format!(
                "{} header says runtime {:?}, expected {rt:?}",
                arg::LIST,
                l.header.runtime
            ));
        }
    }
    Ok(l)
}
