//! The HTML report: one self-contained page (inline CSS and SVG, no scripts, nothing
//! fetched) that shows what a result says about the machine it was measured on.
//!
//! * `view` flattens a result (one experiment, or a survey of many) into what the
//!   sections draw from;
//! * `findings` turns the numbers into plain-language findings;
//! * `sections/` builds one section per kind of data (a section for an experiment the
//!   result does not hold is simply absent);
//! * `charts` draws the SVG charts with plotters, `output::table` the tables of numbers,
//!   `html` assembles the page, `output::escape` makes every string from a result safe;
//! * `compare` puts results side by side: one matched table, viewed as a pair (a/b
//!   ratios) or a fleet (one row per machine, the outliers);
//!
//! The sentences every renderer prints, with the claims they make, are
//! [`sleeplab_stats`], a crate below the experiments.

mod answer;
mod charts;
mod compare;
mod findings;
mod html;
mod sections;
#[cfg(test)]
use sleeplab_results::testdata;
#[cfg(test)]
mod verdicts;
mod view;

// The report writes through the one units, tables and escaping of `output`.
pub use sleeplab_stats::{escape, units};

// The crate's interface beside `render` and `write_index` below: the findings a
// terminal prints, the flattened view of a result, and the comparison of results.
pub use answer::{Answer, AnswerLine};
pub use compare::{Fleet, Matched, Pair, Rendered, Sides, View};
pub use findings::Finding;
pub use html::Page;
pub use sections::program::{ProgramPage, program_page};
pub use sleeplab_stats::wrap;
pub use view::{MainSweep, Results};

use html::{Badge, Tone};
use sleeplab_results::Wording;
use sleeplab_results::model::{ResultFile, SCHEMA_VERSION, SurveyData};
use sleeplab_stats::atomic_write;
use std::path::{Path, PathBuf};

/// The report of `result` as a complete HTML document; `hints` words what its sentences
/// ask the reader to run (the command layer's flags).
pub fn render(result: &ResultFile, hints: Wording) -> String {
    page(result, hints).render()
}

/// The report of `result` as a [`Page`] (`hints` as for [`render`]).
pub fn page(result: &ResultFile, hints: Wording) -> Page {
    let r = Results::of(result);
    let sections = sections::SECTIONS
        .iter()
        .flat_map(|draw| draw(&r, hints))
        .collect();
    Page {
        title: format!("sleeplab: waiting on {}", result.fingerprint.hostname),
        subtitle: subtitle(result),
        badges: badges(result),
        facts: facts(result),
        answer: answer::Answer::of(&r)
            .lines
            .into_iter()
            .map(|l| (l.label, l.sentence.text))
            .collect(),
        answer_figure: sections::sweep::hero(&r),
        findings: findings(&r, hints).into_iter().map(|f| f.text).collect(),
        sections,
        footer: footer(result),
    }
}

/// Every finding the results support: those across experiments, most useful first (the
/// page's registry, `sections::FINDINGS`), then what each experiment's data states of
/// itself (`ResultData::findings`) in the result's order; `hints` words what a
/// sentence asks the reader to run.
pub fn findings(r: &Results<'_>, hints: Wording) -> Vec<Finding> {
    let across = sections::FINDINGS.iter().filter_map(|state| state(r));
    let own = r.entries.iter().flat_map(|e| {
        e.result
            .data
            .as_data()
            .findings(hints)
            .into_iter()
            .map(|(id, s)| Finding::new(id, s))
    });
    across.chain(own).collect()
}

/// Writes `html` to `dir/index.html` (creating `dir`) and returns the file's path.
pub fn write_index(dir: &Path, html: &str) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create directory {}: {e}", dir.display()))?;
    let path = dir.join("index.html");
    atomic_write(&path, html.as_bytes())?;
    readable(&path);
    Ok(path)
}

/// Makes a written report file readable by others (0644): a report is meant to be
/// shared, and files written through a temporary file start out private.
pub fn readable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    // Best effort: a file system without permissions keeps what it has.
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644));
}

/// When a run happened: `2025-01-31 14:05 UTC, 87 s`.
fn when(result: &ResultFile) -> String {
    let start = match result.started_at.get(..16) {
        Some(s) if result.started_at.ends_with('Z') => format!("{} UTC", s.replace('T', " ")),
        _ => result.started_at.clone(),
    };
    let took = humantime::parse_rfc3339(&result.started_at)
        .ok()
        .zip(humantime::parse_rfc3339(&result.finished_at).ok())
        .and_then(|(a, b)| b.duration_since(a).ok());
    match took {
        Some(d) => format!("{start}, {} s", d.as_secs()),
        None => start,
    }
}

fn subtitle(result: &ResultFile) -> String {
    let what = match <&SurveyData>::try_from(&result.data) {
        Ok(s) => format!(
            "How long waiting really takes on this machine: a {} survey of {} stages",
            s.level.name(),
            s.stages.len()
        ),
        Err(_) => format!(
            "How long waiting really takes on this machine: `sleeplab {}`",
            result.data.name()
        ),
    };
    format!("{what} ({}).", when(result))
}

fn badges(result: &ResultFile) -> Vec<Badge> {
    let mut b = vec![if result.complete {
        Badge {
            text: "complete".into(),
            tone: Tone::Good,
        }
    } else {
        Badge {
            text: "incomplete: interrupted or a stage failed".into(),
            tone: Tone::Bad,
        }
    }];
    b.push(Badge {
        text: format!("{} {}", result.tool.name, result.tool.version),
        tone: Tone::Neutral,
    });
    b
}

/// The machine fingerprint and the run's settings, as (label, value) pairs.
pub fn facts(result: &ResultFile) -> Vec<(String, String)> {
    let f = &result.fingerprint;
    let s = &result.settings;
    let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "unknown".into());
    let mut v: Vec<(String, String)> = vec![
        ("host".into(), f.hostname.clone()),
        (
            "kernel".into(),
            format!("{} {} ({})", f.os, f.kernel_release, f.arch),
        ),
        ("CPU".into(), format!("{} × {}", f.cpu_count, f.cpu_model)),
        (
            "virtualization".into(),
            f.virtualization
                .clone()
                .unwrap_or_else(|| "none detected".into()),
        ),
        ("clocksource".into(), opt(&f.clocksource)),
        ("preemption".into(), opt(&f.preemption)),
        (
            "timer tick".into(),
            match (f.config_hz, &f.nohz) {
                (Some(hz), Some(n)) => format!("{hz} Hz, tickless {n}"),
                (Some(hz), None) => format!("{hz} Hz"),
                (None, Some(n)) => format!("tickless {n}"),
                (None, None) => "unknown".into(),
            },
        ),
        ("cpufreq governor".into(), opt(&f.cpufreq_governor)),
        ("timer slack".into(), units::ns(s.timer_slack_ns as f64)),
        (
            "scheduling".into(),
            if s.priority != 0 {
                format!("{} priority {}", s.policy, s.priority)
            } else {
                s.policy.to_string()
            },
        ),
        (
            "pinned".into(),
            s.pin_cpu.map_or("no".into(), |c| format!("CPU {c}")),
        ),
        (
            "memory locked".into(),
            if s.mlock { "yes" } else { "no" }.into(),
        ),
    ];
    v.push(("kernel build".into(), f.kernel_version.clone()));
    v
}

fn footer(result: &ResultFile) -> Vec<String> {
    vec![
        format!(
            "Measured by {} {} (result schema {}, this reader: {SCHEMA_VERSION}) with: {}",
            result.tool.name,
            result.tool.version,
            result.schema_version,
            result.command_line.join(" ")
        ),
        "Every number is from this run on this machine. Re-render with `sleeplab report results.json -o DIR`; compare two runs with `sleeplab compare a.json b.json`.".into(),
        "Times are wall-clock (CLOCK_MONOTONIC) from before the call to after it; percentiles are of all calls after warm-up; early wake-ups are counted, never hidden.".into(),
    ]
}
