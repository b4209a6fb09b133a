//! The terminal rendering of `explain`: where the time went, per cell (the median and,
//! in parentheses, the p99 of each component), then a sentence per cell.

use super::ExplainData;
use crate::report::findings::why_late_of;
use crate::trace::render::{CELL_KEYS, cell_key, components_table};
use std::fmt::Write;

/// The table and the findings.
pub fn render(data: &ExplainData) -> String {
    let rows: Vec<(Vec<String>, &crate::trace::Explanation)> = data
        .cells
        .iter()
        .map(|c| {
            (
                cell_key(&c.mechanism, c.requested_ns, c.load, c.timer_slack_ns),
                &c.explanation,
            )
        })
        .collect();
    let mut out = components_table(&CELL_KEYS, &rows, &data.tracing);
    let findings = why_late_of(data);
    if !findings.is_empty() {
        let _ = writeln!(out, "\nWhy it was late:");
        for f in findings {
            let _ = writeln!(out, "  • {}", f.text);
        }
    }
    out
}
