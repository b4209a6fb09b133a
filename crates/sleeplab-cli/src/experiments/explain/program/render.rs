//! The summary of a program's waits: one line on the run, a row per call (how many
//! waits, how they ended, the lateness of those their timer ended), where that lateness
//! went, who held the CPU, the interrupts and the traps found; without the kernel's
//! account, what `/proc` told. The parts before and after the account are views
//! ([`summary`], [`after`]): the terminal prints them and the report page draws them.

use std::fmt::Write;

use sleeplab_account::{CallSummary, Explanation, Found, Machine, Tracing, Trap, components_table};
use sleeplab_stats::{Cell, Stat, Table, View, fit_lines, new_table, terminal_width, units::ns};

use super::output::Run;
use super::target::ThreadCounts;
use crate::experiments::{Hint, Wording};

/// The summary of a traced run: [`summary`], where the lateness went, then [`after`].
pub fn render(
    run: &Run,
    found: &Found,
    calls: &[CallSummary],
    traps: &[Trap],
    machine: Machine,
    hints: Wording,
) -> String {
    let mut out = summary(run, found, calls, hints).terminal();
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
    out.push_str(&after(calls, traps).terminal());
    fit(out.trim_start_matches('\n'))
}

/// What the run did not record of the machine's own work, and what the account then
/// cannot say, with the flag that changes it; `None` where everything was recorded.
fn recorded_note(run: &Run, hints: Wording) -> Option<String> {
    if !run.interrupts {
        return Some(format!(
            "The machine's interrupts and idle states were not recorded ({}, or this kernel lacks their tracepoints): no interrupt is named, and a timer's delivery is not split into the host's share.",
            hints.word(Hint::Light)
        ));
    }
    (!run.idle_states).then(|| format!(
        "The local timer's interrupt and the idle states were not recorded (the default, which spares each wake their tracepoints; {} records them): a timer's delivery to an idle CPU runs to its handler's clock read, the guest's polling and interrupt entry in it.",
        hints.word(Hint::IdleStates)
    ))
}

/// What comes before the account of the lateness, for the terminal and the page alike:
/// the run, the counts, a row per call, the waits whose ending is unknown.
pub fn summary(run: &Run, found: &Found, calls: &[CallSummary], hints: Wording) -> View {
    let mut v = View::new("program", "The waits, per call").text(format!(
        "{}\n{} waits with a timeout; {} calls waiting for an event only; {} whose entry or return was not recorded; {} events lost.",
        headline(run),
        found.waits.len(),
        found.untimed,
        found.unpaired,
        run.lost_events
    ));
    if let Some(note) = recorded_note(run, hints) {
        v = v.text(note);
    }
    if calls.is_empty() {
        return v.text("No wait with a timeout was recorded.");
    }
    let mut t = Table::new([
        "call", "waits", "timer", "woken", "signal", "no block", "early", "n", "p50", "p99", "max",
    ]);
    for c in calls {
        let q = |s: Stat| Cell::Num(c.lateness.get(s).map_or_else(|| "–".to_string(), ns));
        let n = |v: u64| Cell::Num(v.to_string());
        t.row(vec![
            Cell::Text(c.call.name().to_string()),
            n(c.waits),
            n(c.timer),
            n(c.woken),
            n(c.signal),
            n(c.never_blocked),
            n(c.early),
            n(c.lateness.count),
            q(Stat::Median),
            q(Stat::P99),
            q(Stat::Max),
        ]);
    }
    v = v
        .text("Lateness past the deadline of the waits their timer ended (n of them); waits woken or interrupted early are counted apart:")
        .table(t);
    let unrecorded: u64 = calls.iter().map(|c| c.unrecorded).sum();
    if unrecorded > 0 {
        v = v.text(format!(
            "{unrecorded} waits blocked with neither their timer's expiry nor a wakeup on record (lost events): how they ended is unknown, and they are in no column above but `waits`."
        ));
    }
    v
}

/// What comes after the account, for the terminal and the page alike: who held the CPU,
/// what the kernel ran on it, the traps.
pub fn after(calls: &[CallSummary], traps: &[Trap]) -> View {
    let mut v = View::new(
        "program-interferers",
        "Who and what got in the way, and the traps",
    );
    if let Some(text) = per_call(
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
    ) {
        v = v.text(text);
    }
    if let Some(text) = per_call(
        "What the kernel ran on their CPU between deadline and return (interrupts, softirqs; most time first):",
        calls,
        |c| {
            c.interrupts
                .iter()
                .take(3)
                .map(|i| format!("{} ({} in {})", i.name, ns(i.ns as f64), waits(i.waits)))
                .collect()
        },
    ) {
        v = v.text(text);
    }
    // Where each call's main holder was in the kernel as it left the CPU (`--stacks`).
    for c in calls {
        if let Some(h) = c.holders.iter().find(|h| !h.kernel_stack.is_empty()) {
            let frames: Vec<String> = h.kernel_stack.iter().map(|f| format!("  => {f}")).collect();
            v = v.code(
                format!(
                    "{}: the kernel stack of {}:{} as it left the CPU, in the wait it held longest",
                    c.call.name(),
                    h.comm,
                    h.pid
                ),
                frames.join("\n") + "\n",
            );
        }
    }
    if !traps.is_empty() {
        let lines: Vec<String> = traps
            .iter()
            .map(|t| format!("  • {}", t.sentence().text))
            .collect();
        v = v.text(format!("Traps:\n{}", lines.join("\n")));
    }
    v
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

/// `title`, then a line per call of the items `items` gives it (calls with none left
/// out); `None` where no call has any.
fn per_call(
    title: &str,
    calls: &[CallSummary],
    items: impl Fn(&CallSummary) -> Vec<String>,
) -> Option<String> {
    let lines: Vec<String> = calls
        .iter()
        .filter_map(|c| {
            let top = items(c);
            (!top.is_empty()).then(|| format!("  • {}: {}", c.call.name(), top.join(", ")))
        })
        .collect();
    (!lines.is_empty()).then(|| format!("{title}\n{}", lines.join("\n")))
}

/// `n` waits, the noun agreeing with the count.
fn waits(n: u64) -> String {
    format!("{n} wait{}", if n == 1 { "" } else { "s" })
}
