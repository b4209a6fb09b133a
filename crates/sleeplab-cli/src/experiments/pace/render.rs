//! `pace` in the terminal: one row per contender (and load level), then the
//! accuracy-versus-CPU frontier of each level.

use super::evidence::LATE_FRAME_NS;
use super::{PaceData, PaceResult, frontier_sentence, standings};
use crate::output::{fmt_ns, fmt_ns_f, fmt_pct, new_table};
use std::fmt::Write;

/// Renders the pace result as text.
pub fn render(data: &PaceData) -> String {
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
        "p99 95 % interval",
        "p99.9",
        "max",
        "missed",
        "drift",
        "CPU",
        "spin",
        "csw v/i",
    ]);
    let mut t = new_table(header);
    for r in &data.results {
        let e = &r.error;
        let mut row = vec![r.strategy.clone()];
        if loaded {
            row.push(r.load.to_string());
        }
        row.extend([
            e.count.to_string(),
            fmt_ns_f(e.mean_ns),
            fmt_ns(e.min_ns),
            fmt_ns_f(e.median_ns),
            fmt_ns_f(e.p99_ns),
            p99_interval(e),
            fmt_ns_f(e.p999_ns),
            fmt_ns(e.max_ns),
            r.missed_frames.to_string(),
            fmt_ns_f(r.actual_total_ns as f64 - r.ideal_total_ns as f64),
            fmt_pct(r.cpu_percent),
            fmt_pct(r.spin_percent),
            format!(
                "{:.2}/{:.2}",
                r.voluntary_csw_per_frame, r.involuntary_csw_per_frame
            ),
        ]);
        t.add_row(row);
    }
    let _ = writeln!(
        out,
        "frame error = wake − deadline on an absolute schedule{}\n{t}",
        if loaded {
            "; load = competing busy threads"
        } else {
            ""
        }
    );
    let _ = writeln!(out, "{}", evidence_table(data, loaded));
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

/// The p99's 95 % interval as the terminal writes it (`[12.11 µs–2.62 ms]`, `[≥ 40.00 µs]`),
/// "–" without a p99.
pub fn p99_interval(e: &crate::stats::Summary) -> String {
    if e.p99_ns.is_some() {
        crate::report::claim::interval_text(e.p99_ci_ns, fmt_ns_f)
    } else {
        "–".into()
    }
}

/// Why frames were late: one row per contender (and load level).
fn evidence_table(data: &PaceData, loaded: bool) -> String {
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
        "max spin gap",
    ]);
    let mut t = new_table(header);
    for r in &data.results {
        let e = &r.evidence;
        let mut row = vec![r.strategy.clone()];
        if loaded {
            row.push(r.load.to_string());
        }
        row.extend([
            e.frames.to_string(),
            fmt_ns_f(r.error.p99_ns),
            e.late_frames.to_string(),
            e.late_started_late.to_string(),
            e.late_preempted_while_spinning.to_string(),
            e.late_woken_late.to_string(),
            e.late_other.to_string(),
            e.late_involuntary_switched.to_string(),
            e.late_runqueue_wait.map_or("–".into(), |n| n.to_string()),
            e.preempted_while_spinning.to_string(),
            e.woken_late.to_string(),
            fmt_ns(e.max_spin_gap_ns),
        ]);
        t.add_row(row);
    }
    format!(
        "why frames were late (frames more than {} late, counted once each: started late = the wait began after its deadline; else preempted while spinning = a gap of ≥ {} between clock reads of the spin; else woken late = the native sleep ended after the deadline; else other; inv csw = with an involuntary context switch; run queue = waited runnable for ≥ half the lateness; all: = every frame)\n{t}",
        fmt_ns(LATE_FRAME_NS),
        fmt_ns(sleeplab::precise::SleepReport::PREEMPT_GAP_NS)
    )
}
