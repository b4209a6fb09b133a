//! The runtimes experiment in the terminal: seed 003's table per runtime (method ×
//! requested: samples, min, max, avg, median, σ, ideal vs actual total, early returns),
//! a periodic table, an overview of medians, what was skipped or failed and why, and the
//! early returns spelled out.

use super::settings::in_force_summary;
use super::trace::{TRACED_KEYS, traced_cells};
use super::{MethodResult, MethodStatus, ProbeQuota, RuntimeResult, RuntimeStatus, RuntimesData};
use sleeplab_account::components_table;
use sleeplab_stats::{fmt_ns, fmt_ns_f, new_table};
use std::fmt::Write;

/// A duration total that may exceed u64 (count × requested), formatted.
fn fmt_total(ns: u128) -> String {
    fmt_ns_f(ns as f64)
}

/// A requested duration, shown exactly: `fmt_ns` when its rounding loses nothing
/// (`1.500 ms`), whole nanoseconds otherwise (`1999999 ns`, not `2.000 ms`).
pub fn fmt_requested(ns: u64) -> String {
    let unit: u64 = match ns {
        0..1_000 => return fmt_ns(ns),
        1_000..1_000_000 => 1_000,
        1_000_000..1_000_000_000 => 1_000_000,
        _ => 1_000_000_000,
    };
    let whole = ns / unit;
    let decimals = if whole >= 100 {
        10
    } else if whole >= 10 {
        100
    } else {
        1_000
    };
    if ns % (unit / decimals) == 0 {
        fmt_ns(ns)
    } else {
        format!("{ns} ns")
    }
}

/// Whether results span more than one setting (load, timer slack).
fn multi_level(data: &RuntimesData) -> bool {
    data.config.loads.len() > 1 || data.config.timer_slacks_ns.len() > 1
}

/// The setting of a result, e.g. "load 1, slack 1 ns".
fn level(m: &MethodResult) -> String {
    let mut s = format!("load {}", m.load);
    if let Some(sl) = m.timer_slack_ns {
        let _ = write!(s, ", slack {}", fmt_ns(sl));
    }
    s
}

/// A runtime's heading: title, implementation, version, clock, platform.
fn heading(r: &RuntimeResult) -> String {
    let mut h = r.title.clone();
    if let (Some(imp), Some(ver)) = (&r.implementation, &r.version) {
        let _ = write!(h, " — {imp} {ver}");
    }
    if let Some(p) = &r.platform {
        let _ = write!(h, ", {p}");
    }
    if let Some(c) = &r.clock {
        let _ = write!(h, ", clock {c}");
    }
    h
}

/// How the one-shot cells were sized, and so what "ideal" and "actual" total mean.
pub fn quota_line(q: ProbeQuota) -> String {
    match q {
        ProbeQuota::Count { count } => format!(
            "{count} calls per request, fixed before measuring: ideal total = count × requested, actual total = what the calls took"
        ),
        ProbeQuota::PerRequest {
            count,
            max_ideal_ns,
        } => format!(
            "{count} calls per request (fewer where count × requested would exceed {}), fixed before measuring as in seed 003: ideal total = count × requested, actual total = what the calls took",
            fmt_ns(max_ideal_ns)
        ),
        ProbeQuota::Budget {
            budget_ns,
            max_count,
        } => format!(
            "calls until they took {} (at most {max_count}): the actual total is fixed by the budget and the count, so the ideal total, varies",
            fmt_ns(budget_ns)
        ),
    }
}

/// Renders the measured data as text.
pub fn render(data: &RuntimesData, machine: sleeplab_account::Machine) -> String {
    let mut out = String::new();
    let multi = multi_level(data);
    let any_oneshot = data
        .runtimes
        .iter()
        .flat_map(|r| r.methods.iter())
        .any(|m| !m.cells.is_empty());
    if any_oneshot {
        let _ = writeln!(out, "one-shot cells: {}", quota_line(data.config.quota));
    }
    for r in &data.runtimes {
        if r.status != RuntimeStatus::Measured || r.methods.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{}", heading(r));
        let oneshot: Vec<&MethodResult> =
            r.methods.iter().filter(|m| !m.cells.is_empty()).collect();
        if !oneshot.is_empty() {
            let mut header = vec!["method"];
            if multi {
                header.push("setting");
            }
            header.extend([
                "requested",
                "samples",
                "min",
                "max",
                "avg",
                "median",
                "σ",
                "ideal total",
                "actual total",
                "early",
            ]);
            let mut t = new_table(header);
            for m in &oneshot {
                for (i, c) in m.cells.iter().enumerate() {
                    let s = &c.summary;
                    let mut row = vec![if i == 0 {
                        m.method.clone()
                    } else {
                        String::new()
                    }];
                    if multi {
                        row.push(if i == 0 { level(m) } else { String::new() });
                    }
                    row.extend([
                        fmt_requested(c.requested_ns),
                        s.count.to_string(),
                        fmt_ns(s.min_ns),
                        fmt_ns(s.max_ns),
                        fmt_ns_f(s.mean_ns),
                        fmt_ns_f(s.median_ns),
                        fmt_ns_f(s.stddev_ns),
                        fmt_total(c.ideal_total_ns()),
                        fmt_ns(s.total_ns),
                        if s.early_count > 0 {
                            format!("{} !", s.early_count)
                        } else {
                            "0".into()
                        },
                    ]);
                    t.add_row(row);
                }
            }
            let _ = writeln!(out, "{t}");
        }
        let periodic: Vec<&MethodResult> =
            r.methods.iter().filter(|m| m.periodic.is_some()).collect();
        if !periodic.is_empty() {
            let mut header = vec!["periodic method"];
            if multi {
                header.push("setting");
            }
            header.extend([
                "period",
                "ticks",
                "interval avg",
                "interval σ",
                "ideal total",
                "actual total",
                "late median",
                "late p99",
                "late max",
                "last tick late",
                "early ticks",
            ]);
            let mut t = new_table(header);
            for m in &periodic {
                let Some(p) = &m.periodic else { continue };
                let mut row = vec![m.method.clone()];
                if multi {
                    row.push(level(m));
                }
                row.extend([
                    fmt_requested(p.period_ns),
                    p.ticks.to_string(),
                    fmt_ns_f(p.interval.mean_ns),
                    fmt_ns_f(p.interval.stddev_ns),
                    fmt_total(u128::from(p.ticks) * u128::from(p.period_ns)),
                    fmt_ns(p.interval.total_ns),
                    fmt_ns_f(p.lateness.median_ns),
                    fmt_ns_f(p.lateness.p99_ns),
                    fmt_ns_f(p.lateness.max_ns as f64),
                    fmt_ns_f(p.lateness.last_ns as f64),
                    if p.lateness.early_count > 0 {
                        format!("{} !", p.lateness.early_count)
                    } else {
                        "0".into()
                    },
                ]);
                t.add_row(row);
            }
            let _ = writeln!(out, "{t}");
        }
        for m in &r.methods {
            match &m.status {
                MethodStatus::Measured => {
                    if let Some(p) = &m.partial {
                        let _ = writeln!(
                            out,
                            "  {}: PARTIAL: {} of {} cells kept (stopped: {})",
                            m.method, p.cells_kept, p.cells_asked, p.reason
                        );
                    }
                }
                MethodStatus::Unavailable { reason } => {
                    let _ = writeln!(out, "  {}: unavailable: {reason}", m.method);
                }
                MethodStatus::Failed { reason } => {
                    let _ = writeln!(out, "  {}: FAILED: {reason}", m.method);
                }
            }
        }
        for u in &r.unavailable {
            let _ = writeln!(out, "  {}: unavailable here: {}", u.method, u.reason);
        }
        for line in in_force_lines(r, multi) {
            let _ = writeln!(out, "  {line}");
        }
        let notes = notes(r);
        if !notes.is_empty() {
            let _ = writeln!(out, "  notes:");
            for n in notes {
                let _ = writeln!(out, "    {n}");
            }
        }
    }
    out.push_str(&overview(data));
    out.push_str(&not_measured(data));
    let early = early_returns(data);
    if !early.is_empty() {
        let _ = writeln!(
            out,
            "\nearly returns (shorter than requested; never hidden):"
        );
        for e in early {
            let _ = writeln!(out, "  {e}");
        }
    }
    if let Some(tracing) = &data.tracing {
        out.push('\n');
        out.push_str(&components_table(
            &TRACED_KEYS,
            &traced_cells(data),
            tracing,
            machine,
        ));
    }
    out
}

/// What was in force for the runtime's probes (read back from `/proc`): one line when
/// every run of it had the same, else one per method run.
fn in_force_lines(r: &RuntimeResult, multi: bool) -> Vec<String> {
    let seen: Vec<(&MethodResult, String)> = r
        .methods
        .iter()
        .filter_map(|m| Some((m, in_force_summary(m.in_force.as_ref()?)?)))
        .collect();
    let Some((_, first)) = seen.first() else {
        return vec![];
    };
    if seen.iter().all(|(_, s)| s == first) {
        return vec![format!("in force for the probe: {first}")];
    }
    seen.iter()
        .map(|(m, s)| {
            let at = if multi {
                format!(" ({})", level(m))
            } else {
                String::new()
            };
            format!("in force for {}{at}: {s}", m.method)
        })
        .collect()
}

/// The probe's comments and the harness's notes of a runtime, deduplicated, each
/// prefixed by its method.
fn notes(r: &RuntimeResult) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: String| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for m in &r.methods {
        let cell_notes = m
            .cells
            .iter()
            .flat_map(|c| c.notes.iter())
            .chain(m.periodic.iter().flat_map(|p| p.notes.iter()));
        for n in cell_notes.chain(m.notes.iter()) {
            push(format!("{}: {n}", m.method));
        }
    }
    out
}

/// One line per cell with early returns, e.g. "JRuby sleep @ 100 µs: 9412 of 10000".
pub fn early_returns(data: &RuntimesData) -> Vec<String> {
    let multi = multi_level(data);
    let mut out = Vec::new();
    for r in &data.runtimes {
        for m in &r.methods {
            let setting = if multi {
                format!(" ({})", level(m))
            } else {
                String::new()
            };
            for c in &m.cells {
                if c.summary.early_count > 0 {
                    out.push(format!(
                        "{} {} @ {}{setting}: {} of {} (shortest {})",
                        r.title,
                        m.method,
                        fmt_requested(c.requested_ns),
                        c.summary.early_count,
                        c.summary.count,
                        fmt_ns(c.summary.min_ns)
                    ));
                }
            }
            if let Some(p) = &m.periodic {
                if p.lateness.early_count > 0 {
                    out.push(format!(
                        "{} {} every {}{setting}: {} of {} ticks before their due time (earliest {} early)",
                        r.title,
                        m.method,
                        fmt_requested(p.period_ns),
                        p.lateness.early_count,
                        p.ticks,
                        fmt_ns_f(-(p.lateness.min_ns as f64))
                    ));
                }
            }
        }
    }
    out
}

/// Median elapsed of every one-shot method (rows) per request (columns).
fn overview(data: &RuntimesData) -> String {
    let mut durations: Vec<u64> = data
        .runtimes
        .iter()
        .flat_map(|r| r.methods.iter())
        .flat_map(|m| m.cells.iter().map(|c| c.requested_ns))
        .collect();
    durations.sort_unstable_by(|a, b| b.cmp(a));
    durations.dedup();
    if durations.is_empty() {
        return String::new();
    }
    let multi = multi_level(data);
    let mut header = vec!["median elapsed".to_string()];
    header.extend(durations.iter().map(|&d| fmt_requested(d)));
    let mut t = new_table(header);
    for r in &data.runtimes {
        for m in r.methods.iter().filter(|m| !m.cells.is_empty()) {
            let mut name = format!("{} {}", r.id, m.method);
            if multi {
                let _ = write!(name, " ({})", level(m));
            }
            let mut row = vec![name];
            row.extend(durations.iter().map(|&d| {
                m.cells
                    .iter()
                    .find(|c| c.requested_ns == d)
                    .map_or(String::new(), |c| {
                        let mark = if c.summary.early_count > 0 { " !" } else { "" };
                        format!("{}{mark}", fmt_ns_f(c.summary.median_ns))
                    })
            }));
            t.add_row(row);
        }
    }
    format!("\noverview: median elapsed per request (! = some calls returned early)\n{t}\n")
}

/// Runtimes skipped or failed, and why.
fn not_measured(data: &RuntimesData) -> String {
    let mut out = String::new();
    for r in &data.runtimes {
        match &r.status {
            RuntimeStatus::Measured => {}
            RuntimeStatus::Skipped { reason, install } => {
                let _ = writeln!(out, "  {}: skipped: {reason} (install: {install})", r.id);
            }
            RuntimeStatus::Failed { reason } => {
                let _ = writeln!(out, "  {}: FAILED: {reason}", r.id);
            }
        }
    }
    if out.is_empty() {
        out
    } else {
        format!("\nnot measured:\n{out}")
    }
}

/// Renders a listing (`--list`): each runtime, its status and its methods.
pub fn render_listing(data: &RuntimesData) -> String {
    let mut out = String::new();
    for r in &data.runtimes {
        match &r.status {
            RuntimeStatus::Measured => {
                let _ = writeln!(out, "\n{}", heading(r));
                if let Some(p) = &r.prepared {
                    let _ = writeln!(out, "  {} ({p})", r.command.join(" "));
                }
                let mut t = new_table(["method", "kind", "available", "what it calls"]);
                if let Some(c) = t.column_mut(2) {
                    c.set_cell_alignment(comfy_table::CellAlignment::Left);
                }
                for m in &r.listed {
                    t.add_row(vec![
                        m.method.clone(),
                        m.kind.to_string(),
                        if m.available {
                            "yes".into()
                        } else {
                            format!("no: {}", m.reason.as_deref().unwrap_or(""))
                        },
                        m.description.clone(),
                    ]);
                }
                let _ = writeln!(out, "{t}");
            }
            RuntimeStatus::Skipped { reason, install } => {
                let _ = writeln!(out, "\n{}: skipped: {reason} (install: {install})", r.title);
            }
            RuntimeStatus::Failed { reason } => {
                let _ = writeln!(out, "\n{}: FAILED: {reason}", r.title);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::fmt_requested;

    #[test]
    fn requests_are_shown_exactly() {
        assert_eq!(fmt_requested(0), "0 ns");
        assert_eq!(fmt_requested(999), "999 ns");
        assert_eq!(fmt_requested(10_000), "10.00 µs");
        assert_eq!(fmt_requested(1_500_000), "1.500 ms");
        assert_eq!(fmt_requested(100_000_000), "100.0 ms");
        assert_eq!(fmt_requested(1_999_999), "1999999 ns");
        assert_eq!(fmt_requested(100_050_000), "100050000 ns");
        assert_eq!(fmt_requested(1_234), "1.234 µs");
        assert_eq!(fmt_requested(12_345), "12345 ns");
        assert_eq!(fmt_requested(2_000_000_000), "2.000 s");
    }
}
