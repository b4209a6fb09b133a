//! The terminal rendering of `explain`: where the time went, per cell (the median and,
//! in parentheses, the p99 of each component), then a sentence per cell.

use super::ExplainData;
use crate::output::{fmt_ns, fmt_ns_f, new_table};
use crate::report::findings::why_late_of;
use crate::trace::Component;
use std::fmt::Write;

/// The components shown: those with time in any cell, in the order a wake passes them.
fn shown(data: &ExplainData) -> Vec<Component> {
    Component::ALL
        .into_iter()
        .filter(|&c| {
            data.cells.iter().any(|cell| {
                cell.explanation
                    .component(c)
                    .is_some_and(|s| s.mean_ns > 0.0)
            })
        })
        .collect()
}

/// The table and the findings.
pub fn render(data: &ExplainData) -> String {
    let mut out = String::new();
    let tracing = &data.tracing;
    let _ = writeln!(
        out,
        "Where the time went: each component's median (p99) over the wakes of a cell; {}",
        if tracing.kernel {
            "from the kernel's tracepoints"
        } else {
            "a partial account from /proc (no kernel trace)"
        }
    );
    let comps = shown(data);
    let mut header: Vec<String> = [
        "mechanism",
        "requested",
        "load",
        "slack",
        "n",
        "late p50",
        "late p99",
    ]
    .map(String::from)
    .to_vec();
    header.extend(comps.iter().map(|c| c.short().to_string()));
    let mut t = new_table(header);
    for c in &data.cells {
        let x = &c.explanation;
        let mut row = vec![
            c.mechanism.clone(),
            fmt_ns(c.requested_ns),
            c.load.to_string(),
            fmt_ns(c.timer_slack_ns),
            x.wakes.to_string(),
            fmt_ns_f(x.lateness.median_ns),
            fmt_ns_f(x.lateness.p99_ns),
        ];
        for &k in &comps {
            row.push(match x.component(k) {
                Some(s) => format!("{} ({})", fmt_ns_f(s.median_ns), fmt_ns_f(s.p99_ns)),
                None => "–".into(),
            });
        }
        t.add_row(row);
    }
    let _ = writeln!(out, "{t}");
    let legend: Vec<String> = comps
        .iter()
        .map(|c| format!("{} = {}", c.short(), c.label()))
        .collect();
    let _ = writeln!(out, "{}", legend.join(", "));
    let untraced: u64 = data.cells.iter().map(|c| c.explanation.untraced).sum();
    let wakes: u64 = data.cells.iter().map(|c| c.explanation.wakes).sum();
    if tracing.kernel {
        let _ = writeln!(
            out,
            "{wakes} wakes traced; {untraced} partly unexplained (an event of their way not recorded); \
             {} events lost by the kernel's buffers.",
            tracing.lost_events
        );
    }
    if let Some(note) = &tracing.note {
        let _ = writeln!(out, "note: {note}");
    }
    let findings = why_late_of(data);
    if !findings.is_empty() {
        let _ = writeln!(out, "\nWhy it was late:");
        for f in findings {
            let _ = writeln!(out, "  • {}", f.text);
        }
    }
    out
}
