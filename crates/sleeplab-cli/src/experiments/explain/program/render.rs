//! The terminal summary of a program's waits: one line on the run, a row per call
//! (how many waits, how they ended, the lateness of those their timer ended), where that
//! lateness went, and the traps found; without the kernel's account, what `/proc` told.

use std::fmt::Write;

use sleeplab_account::{CallSummary, Explanation, Found, Machine, Tracing, Trap, components_table};
use sleeplab_stats::{Stat, fit_lines, new_table, terminal_width, units::ns};

use super::output::Run;
use super::target::ThreadCounts;

/// The summary of a traced run.
pub fn render(
    run: &Run,
    found: &Found,
    calls: &[CallSummary],
    traps: &[Trap],
    machine: Machine,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", headline(run));
    let _ = writeln!(
        out,
        "{} waits with a timeout; {} calls waiting for an event only; {} whose entry or return was not recorded; {} events lost.",
        found.waits.len(),
        found.untimed,
        found.unpaired,
        run.lost_events
    );
    if calls.is_empty() {
        let _ = writeln!(out, "No wait with a timeout was recorded.");
        return fit(&out);
    }
    let mut t = new_table([
        "call", "waits", "timer", "woken", "signal", "no block", "early", "n", "p50", "p99", "max",
    ]);
    t.set_keys(1);
    for c in calls {
        let q = |s: Stat| c.lateness.get(s).map_or_else(|| "–".to_string(), ns);
        t.add_row(vec![
            c.call.name().to_string(),
            c.waits.to_string(),
            c.timer.to_string(),
            c.woken.to_string(),
            c.signal.to_string(),
            c.never_blocked.to_string(),
            c.early.to_string(),
            c.lateness.count.to_string(),
            q(Stat::Median),
            q(Stat::P99),
            q(Stat::Max),
        ]);
    }
    let _ = writeln!(
        out,
        "\nLateness past the deadline of the waits their timer ended (n of them); waits woken or interrupted early are counted apart:"
    );
    let _ = writeln!(out, "{t}");
    let unrecorded: u64 = calls.iter().map(|c| c.unrecorded).sum();
    if unrecorded > 0 {
        let _ = writeln!(
            out,
            "{unrecorded} waits blocked with neither their timer's expiry nor a wakeup on record (lost events): how they ended is unknown, and they are in no column above but `waits`."
        );
    }
    let rows: Vec<(Vec<String>, &Explanation)> = calls
        .iter()
        .filter_map(|c| Some((vec![c.call.name().to_string()], c.explanation.as_ref()?)))
        .collect();
    if !rows.is_empty() {
        let _ = writeln!(out, "\nWhere that lateness went:");
        out.push_str(&components_table(
            &["call"],
            &rows,
            &Tracing::kernel(run.lost_events),
            machine,
        ));
    }
    per_call(
        &mut out,
        "Who held the CPU while they waited for it (run-queue time, most first):",
        calls,
        |c| {
            c.holders
                .iter()
                .take(3)
                .map(|h| {
                    let rq = ns(h.run_queue_ns as f64);
                    format!("{}:{} ({rq} in {})", h.comm, h.pid, waits(h.waits))
                })
                .collect()
        },
    );
    per_call(
        &mut out,
        "What the kernel ran on their CPU between deadline and return (interrupts, softirqs; most time first):",
        calls,
        |c| {
            c.interrupts
                .iter()
                .take(3)
                .map(|i| format!("{} ({} in {})", i.name, ns(i.ns as f64), waits(i.waits)))
                .collect()
        },
    );
    if !traps.is_empty() {
        let _ = writeln!(out, "\nTraps:");
        for trap in traps {
            let _ = writeln!(out, "  • {}", trap.sentence().text);
        }
    }
    fit(&out)
}

/// What `/proc` told of each thread, after the note that says why the kernel's
/// account is missing.
pub fn proc_only(note: &str, run: &Run, before: &[ThreadCounts], after: &[ThreadCounts]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", headline(run));
    let _ = writeln!(out, "{note}");
    let mut t = new_table([
        "thread",
        "tid",
        "blocked (voluntary)",
        "preempted (involuntary)",
        "waits in",
    ]);
    t.set_keys(2);
    for a in after {
        let b = before.iter().find(|b| b.tid == a.tid);
        let delta = |now: u64, then: Option<u64>| match then {
            Some(then) => now.saturating_sub(then).to_string(),
            None => format!("{now} (new)"),
        };
        t.add_row(vec![
            a.comm.clone(),
            a.tid.to_string(),
            delta(a.voluntary, b.map(|b| b.voluntary)),
            delta(a.involuntary, b.map(|b| b.involuntary)),
            if a.wchan.is_empty() || a.wchan == "0" {
                "running".to_string()
            } else {
                a.wchan.clone()
            },
        ]);
    }
    if after.is_empty() {
        let _ = writeln!(out, "The process had no thread left to read.");
    } else {
        let _ = writeln!(
            out,
            "Context switches over the run per thread, and where each waited in the kernel when last read:\n{t}"
        );
    }
    fit(&out)
}

/// One line on the run: what was followed, for how long, how it ended.
fn headline(run: &Run) -> String {
    let t = &run.target;
    let what = match &t.command {
        Some(argv) => format!("`{}` (pid {})", command_line(argv), t.pid),
        None => format!("{} (pid {})", t.comm, t.pid),
    };
    let mut line = format!("Followed {what} for {:.1} s", run.seconds);
    if let Some(s) = run.exited_after {
        let _ = write!(
            line,
            "; it exited after {s:.1} s, what it did until then is kept"
        );
    }
    if let Some(ended) = &run.ended {
        let _ = write!(line, "; the command {ended}");
    }
    if run.interrupted {
        line.push_str("; stopped by Ctrl-C, what was recorded is kept");
    }
    line.push('.');
    line
}

/// A command line on one line: its words joined, line breaks shown as `⏎`, cut to
/// 60 characters with `…`.
fn command_line(argv: &[String]) -> String {
    let line = argv.join(" ").replace('\n', "⏎");
    match line.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// The prose fitted to the terminal's width (tables keep their own).
fn fit(text: &str) -> String {
    fit_lines(text, terminal_width())
}

/// Under `title`, a line per call of the items `items` gives it (calls with none left
/// out); nothing at all where no call has any.
fn per_call(
    out: &mut String,
    title: &str,
    calls: &[CallSummary],
    items: impl Fn(&CallSummary) -> Vec<String>,
) {
    let lines: Vec<String> = calls
        .iter()
        .filter_map(|c| {
            let top = items(c);
            (!top.is_empty()).then(|| format!("  • {}: {}", c.call.name(), top.join(", ")))
        })
        .collect();
    if !lines.is_empty() {
        let _ = writeln!(out, "\n{title}");
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
    }
}

/// `n` waits, the noun agreeing with the count.
fn waits(n: u64) -> String {
    format!("{n} wait{}", if n == 1 { "" } else { "s" })
}
