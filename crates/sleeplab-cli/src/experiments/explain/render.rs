//! The terminal rendering of `explain`: where the time went, per cell (its largest
//! parts; with `--wide`, the median and, in parentheses, the p99 of each component,
//! then a sentence per cell).

use super::ExplainData;
use sleeplab_account::{CELL_KEYS, CellAccount, cell_key, components_table, why_late};
use std::fmt::Write;

/// The table and the findings.
pub fn render(
    data: &ExplainData,
    machine: sleeplab_account::Machine,
    hints: crate::experiments::Wording,
) -> String {
    let rows: Vec<(Vec<String>, &sleeplab_account::Explanation)> = data
        .cells
        .iter()
        .map(|c| {
            (
                cell_key(&c.mechanism, c.requested_ns, c.load, c.timer_slack_ns),
                &c.explanation,
            )
        })
        .collect();
    let mut out = components_table(&CELL_KEYS, &rows, &data.tracing, machine);
    let cells: Vec<CellAccount<'_>> = data.cells.iter().map(CellAccount::from).collect();
    let findings = why_late(&cells, machine);
    if findings.is_empty() {
        return out;
    }
    if sleeplab_stats::terminal_width().is_some() {
        let _ = writeln!(
            out,
            "Each component's median and p99, and each cell in a sentence: {}",
            hints.word(crate::experiments::Hint::Wide)
        );
    } else {
        let _ = writeln!(out, "\nWhy it was late:");
        for f in findings {
            let _ = writeln!(out, "  • {}", f.text);
        }
    }
    out
}
