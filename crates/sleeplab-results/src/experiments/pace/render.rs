//! `pace` in the terminal: one row per contender (and load level), then the
//! accuracy-versus-CPU frontier of each level.

use super::evidence::LATE_FRAME_NS;
use super::{PaceData, PaceResult, frontier_sentence, standings};
use crate::experiments::{Hint, Wording};
use sleeplab_account::Component;
use sleeplab_stats::{Cell, Table, fmt_ns, fmt_ns_f, fmt_pct};
use std::fmt::Write;

/// Renders the pace result as text (`hints` words the flag that traced it).
pub fn render(data: &PaceData, machine: sleeplab_account::Machine, hints: Wording) -> String {
    let c = &data.config;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{} Hz loop ({} per frame), {} frames per contender in blocks of {}, timer slack {}",
        c.rate_hz,
        fmt_ns(c.period_ns),
        c.frames,
        c.block,
        c.timer_slack_ns.map_or("as inherited".into(), fmt_ns)
    );
    let loaded = c.loads.iter().any(|&l| l > 0);
    let t = main_table(data).terminal();
    let _ = writeln!(
        out,
        "frame error = wake − deadline on an absolute schedule{}\n{t}",
        if loaded {
            "; load = competing busy threads"
        } else {
            ""
        }
    );
    match &data.tracing {
        // The kernel's account replaces the heuristics where it exists.
        Some(tracing) => {
            if let Some(t) = late_causes_table(data, machine) {
                let _ = writeln!(out, "{}\n{}", late_causes_intro(hints), t.terminal());
            }
            let rows: Vec<(Vec<String>, &sleeplab_account::Explanation)> = data
                .results
                .iter()
                .filter_map(|r| {
                    let x = r.explanation.as_ref()?;
                    Some((vec![r.strategy.clone(), r.load.to_string()], x))
                })
                .collect();
            out.push_str(&sleeplab_account::components_table(
                &["strategy", "load"],
                &rows,
                tracing,
                machine,
            ));
        }
        None => {
            let _ = writeln!(
                out,
                "{}\n{}",
                evidence_intro(),
                evidence_table(data, loaded).terminal()
            );
        }
    }
    for &load in &c.loads {
        let level: Vec<&PaceResult> = data.results.iter().filter(|r| r.load == load).collect();
        if !level.is_empty() {
            let _ = writeln!(out, "{}", frontier_sentence(load, &standings(&level)).text);
        }
    }
    if !data.repeat.is_empty() {
        let _ = writeln!(
            out,
            "\nThe tables and the frontier above are the first run's.\n{}",
            super::repeat::render(data.runs.len(), &data.repeat)
        );
    }
    out
}

/// The contenders' frame errors and CPU, one row per contender (and load level, where
/// any is loaded): the one table the terminal and the page both draw.
pub fn main_table(data: &PaceData) -> Table {
    let loaded = data.config.loads.iter().any(|&l| l > 0);
    let mut header = vec!["strategy"];
    if loaded {
        header.push("load");
    }
    header.extend([
        "n",
        "mean",
        "min",
        "p50",
        "p99",
        "p99 95 % interval over blocks",
        "p99.9",
        "max",
        "missed",
        "drift",
        "CPU",
        "spin",
        "csw v/i",
    ]);
    let mut t = Table::new(header).with_keys(if loaded { 2 } else { 1 });
    for r in &data.results {
        let e = &r.error;
        let mut row = vec![Cell::Text(r.strategy.clone())];
        if loaded {
            row.push(Cell::Num(r.load.to_string()));
        }
        row.extend([
            Cell::Num(e.count.to_string()),
            Cell::Num(fmt_ns_f(e.mean_ns)),
            Cell::Num(fmt_ns(e.min_ns)),
            Cell::Num(fmt_ns_f(e.median_ns)),
            Cell::Num(fmt_ns_f(e.p99_ns)),
            Cell::Num(p99_interval(r)),
            Cell::Num(fmt_ns_f(e.p999_ns)),
            Cell::Num(fmt_ns(e.max_ns)),
            if r.missed_frames > 0 {
                Cell::Warn(r.missed_frames.to_string())
            } else {
                Cell::Num("0".into())
            },
            Cell::Num(fmt_ns_f(r.actual_total_ns as f64 - r.ideal_total_ns as f64)),
            Cell::Num(cpu_with_interval(r)),
            Cell::Num(fmt_pct(r.spin_percent)),
            Cell::Num(format!(
                "{:.2}/{:.2}",
                r.voluntary_csw_per_frame, r.involuntary_csw_per_frame
            )),
        ]);
        t.row(row);
    }
    t
}

/// The p99's 95 % interval over the result's blocks as the terminal writes it
/// (`[12.11 µs–2.62 ms]`, `[≥ 40.00 µs]`, `[–]` with too few blocks), "–" without a p99
/// or without intervals over blocks (a result written before them).
pub fn p99_interval(r: &PaceResult) -> String {
    match (r.error.p99_ns, &r.units) {
        (Some(_), Some(u)) => sleeplab_stats::interval_text(u.p99_ci_ns, fmt_ns_f),
        _ => "–".into(),
    }
}

/// The CPU with its 95 % interval over the result's blocks (`1.40 % [1.2–1.6 %]`).
pub fn cpu_with_interval(r: &PaceResult) -> String {
    sleeplab_stats::with_interval(&r.cpu(), fmt_pct)
}

/// The components a run's late frames were counted by (those that made any frame
/// late), in the order a wake passes them.
fn late_causes(data: &PaceData) -> Vec<Component> {
    Component::ALL
        .into_iter()
        .filter(|&c| {
            data.results.iter().any(|r| {
                r.explanation
                    .as_ref()
                    .and_then(|x| x.late.as_ref())
                    .is_some_and(|l| l.by_cause.iter().any(|k| k.component == c))
            })
        })
        .collect()
}

/// Why frames were late, from the kernel's account (`--trace`): per contender and load
/// level, its late frames counted once each by their biggest component, and the task
/// that held the CPU longest in their run-queue time. The terminal and the report draw
/// this one table; `None` without the account.
pub fn late_causes_table(data: &PaceData, machine: sleeplab_account::Machine) -> Option<Table> {
    data.tracing.as_ref()?;
    let causes = late_causes(data);
    let mut header: Vec<String> = ["strategy", "load", "frames (n)", "late"]
        .map(String::from)
        .to_vec();
    header.extend(causes.iter().map(|c| c.label(machine).to_string()));
    header.push("held by".into());
    let mut t = Table::new(header);
    for r in &data.results {
        let Some(late) = r.explanation.as_ref().and_then(|x| x.late.as_ref()) else {
            continue;
        };
        let count = |n: u64| Cell::Num(n.to_string());
        let mut row = vec![
            Cell::Text(r.strategy.clone()),
            count(r.load as u64),
            count(r.error.count),
            count(late.wakes),
        ];
        for &c in &causes {
            row.push(count(
                late.by_cause
                    .iter()
                    .find(|k| k.component == c)
                    .map_or(0, |k| k.wakes),
            ));
        }
        row.push(
            late.holders
                .first()
                .map_or(Cell::Empty, |h| Cell::Text(h.comm.clone())),
        );
        t.row(row);
    }
    Some(t)
}

/// The words above [`late_causes_table`] (`hints` words the flag that traced the run).
pub fn late_causes_intro(hints: Wording) -> String {
    format!(
        "Why frames were late, from the kernel's own timestamps (`{}`): each frame more than {} late counted once, by the component that took most of its lateness (timer slack, timer interrupt, idle wakeup, run queue, kernel exit, return path, spin, unexplained); held by: the task that held the CPU longest while late frames waited on a run queue.",
        hints.word(Hint::Trace),
        sleeplab_stats::units::ns(LATE_FRAME_NS as f64)
    )
}

/// What the heuristic account of late frames counts, said once for the terminal and the
/// page: the cause each late frame is booked to, in the order they are tried.
pub fn evidence_intro() -> String {
    format!(
        "Why frames were late: a frame more than {} late is counted once, by the first cause \
         that holds: started late (the wait began after its deadline: an earlier frame \
         overran), preempted while spinning (a gap of at least {} between two clock reads of \
         its spin: it lost its CPU), woken late (its native sleep ended after the deadline), \
         else other. inv csw: late frames with an involuntary context switch; run queue: late \
         frames that spent at least half their lateness runnable but not running. The \
         columns marked all: count every frame.",
        fmt_ns(LATE_FRAME_NS),
        fmt_ns(sleeplab::precise::SleepReport::PREEMPT_GAP_NS)
    )
}

/// Why frames were late, one row per contender (and load level, `loaded`): the one table
/// the terminal and the page both draw.
pub fn evidence_table(data: &PaceData, loaded: bool) -> Table {
    let mut header = vec!["strategy"];
    if loaded {
        header.push("load");
    }
    header.extend([
        "n",
        "p99",
        "late",
        "started late",
        "preempted spinning",
        "woken late",
        "other",
        "inv csw",
        "run queue",
        "all: preempted spinning",
        "all: woken late",
        "all: inv csw",
        "longest spin gap",
    ]);
    let mut t = Table::new(header).with_keys(if loaded { 2 } else { 1 });
    let count = |n: u64| Cell::Num(n.to_string());
    for r in &data.results {
        let e = &r.evidence;
        let mut row = vec![Cell::Text(r.strategy.clone())];
        if loaded {
            row.push(Cell::Num(r.load.to_string()));
        }
        row.extend([
            count(e.frames),
            Cell::Num(fmt_ns_f(r.error.p99_ns)),
            count(e.late_frames),
            count(e.late_started_late),
            count(e.late_preempted_while_spinning),
            count(e.late_woken_late),
            count(e.late_other),
            count(e.late_involuntary_switched),
            e.late_runqueue_wait.map_or(Cell::Empty, count),
            count(e.preempted_while_spinning),
            count(e.woken_late),
            count(e.involuntary_switched),
            Cell::Num(fmt_ns(e.max_spin_gap_ns)),
        ]);
        t.row(row);
    }
    t
}
