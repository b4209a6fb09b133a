//! Terminal tables.

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
