//! Terminal tables, and the line listing what was not measured.

use super::fmt_ns;
use comfy_table::{CellAlignment, ContentArrangement, LineStyle, Table, TableStyle};

/// Header underlined, no other rules: compact and easy to copy into a document.
const STYLE: TableStyle =
    TableStyle::new().header_separator(LineStyle::none().fill('─').junction('─'));

/// A plain table with a header row; every column but the first right-aligned.
pub fn new_table<I, S>(header: I) -> Table
where
    I: IntoIterator<Item = S>,
    S: Into<comfy_table::Cell>,
{
    let mut t = Table::new();
    t.load_style(STYLE)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    let n = t.column_count();
    for i in 1..n {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// The line listing the cells that were not measured, `(name, request ns, why)`:
/// `\nnot measured: poll @ 1 µs (why); …\n`, or nothing when there are none.
pub fn not_measured<'a>(cells: impl IntoIterator<Item = (&'a str, u64, &'a str)>) -> String {
    let items: Vec<String> = cells
        .into_iter()
        .map(|(name, ns, why)| format!("{name} @ {} ({why})", fmt_ns(ns)))
        .collect();
    if items.is_empty() {
        String::new()
    } else {
        format!("\nnot measured: {}\n", items.join("; "))
    }
}
