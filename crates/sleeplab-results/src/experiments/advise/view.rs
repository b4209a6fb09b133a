//! What `advise` shows of its data, once: the case and tolerance, every candidate as
//! measured (the chosen one marked), the reasoning, the setting worth changing and the
//! code to copy. The terminal prints this view and the report draws it as its section.

use super::{AdviseData, Need};
use sleeplab_stats::{Cell, Table, View, fmt_ns, fmt_ns_f, fmt_pct, interval_text};

/// The view of an `advise` result.
pub fn view(data: &AdviseData) -> View {
    let case = match &data.need {
        Need::Period { period_ns } => format!("a periodic loop every {}", fmt_ns(*period_ns)),
        Need::Duration { duration_ns } => format!("one-shot waits of {}", fmt_ns(*duration_ns)),
    };
    // The mark rides in the strategy's cell: the table stays a row per candidate, split
    // by columns where the terminal is narrow (a table with more columns than rows turns).
    let mut t = Table::new([
        "strategy",
        "slack",
        "waits",
        "p50",
        "p99",
        "p99 95 % interval",
        "max",
        "CPU",
        "CPU 95 % interval",
    ]);
    for (i, c) in data.candidates.iter().enumerate() {
        let mark = if i == data.advice.chosen {
            "→"
        } else if c.meets(data.tolerance_ns) {
            "✓"
        } else {
            ""
        };
        t.row(vec![
            Cell::Text(format!("{mark} {}", c.strategy).trim_start().to_string()),
            Cell::Num(fmt_ns(c.timer_slack_ns)),
            Cell::Num(c.waits.to_string()),
            Cell::Num(fmt_ns_f(c.p50_ns)),
            Cell::Num(fmt_ns_f(c.p99_ns)),
            c.p99()
                .map_or(Cell::Empty, |p| Cell::Num(interval_text(p.ci, fmt_ns_f))),
            Cell::Num(fmt_ns(c.max_ns)),
            Cell::Num(fmt_pct(c.cpu_percent)),
            Cell::Num(interval_text(c.cpu().ci, fmt_pct)),
        ]);
    }
    let mut v = View::new("advise", "Advice for this machine")
        .text(format!(
            "advice for {case}, tolerance p99 ≤ {} (→: the recommendation; ✓: the p99's 95 % interval over its blocks lies below it)",
            fmt_ns(data.tolerance_ns)
        ))
        .table(t)
        .text(data.advice.reason.clone());
    if let Some(s) = &data.advice.setting {
        v = v.text(s.clone());
    }
    v.code("in Rust", data.advice.snippet.clone())
}
