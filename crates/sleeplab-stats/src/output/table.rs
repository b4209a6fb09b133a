//! Tables in two renderings: [`new_table`] builds a terminal table (comfy-table, header
//! underlined, numbers right-aligned); [`Table`] of [`Cell`]s is an HTML table, escaped
//! cell by cell, whose [`Table::terminal`] draws the same rows in the terminal style.

use super::term_table::{TermTable, terminal_width};
use super::{escape, fmt_ns};
use comfy_table::{CellAlignment, ContentArrangement, LineStyle, TableStyle};
use std::fmt::Write;

/// Header underlined, no other rules: compact and easy to copy into a document.
const STYLE: TableStyle =
    TableStyle::new().header_separator(LineStyle::none().fill('─').junction('─'));

/// A plain table with a header row; every column but the first right-aligned. Displayed,
/// it fits the terminal's width ([`TermTable`]).
pub fn new_table<I, S>(header: I) -> TermTable
where
    I: IntoIterator<Item = S>,
    S: Into<comfy_table::Cell>,
{
    let mut t = comfy_table::Table::new();
    t.load_style(STYLE)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    let n = t.column_count();
    for i in 1..n {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    TermTable::new(t)
}

/// One table cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Text, left-aligned (names).
    Text(String),
    /// A number, right-aligned.
    Num(String),
    /// A number with a smaller second line (e.g. median, then p99).
    NumSub(String, String),
    /// A number that deserves attention (early wakeups, a regression).
    Warn(String),
    /// A number that is good news (an improvement).
    Good(String),
    /// Nothing measured.
    Empty,
}

/// A table with a header row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    /// Column titles.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<Cell>>,
    /// How many leading columns name a row (0 or 1: the first): a terminal too narrow
    /// for the table repeats them in each part it splits the table into.
    pub keys: usize,
}

impl Table {
    /// A table with these column titles.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Self {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            keys: 1,
        }
    }

    /// The same table with its first `keys` columns naming a row ([`Table::keys`]).
    pub fn with_keys(mut self, keys: usize) -> Self {
        self.keys = keys;
        self
    }

    /// Adds a row.
    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    /// The table for the terminal: the same rows through [`new_table`] (a cell's second
    /// line in parentheses, an empty cell as "–"). A table wider than the terminal with
    /// fewer rows than columns (a fleet: a few machines, a column per point) is drawn
    /// turned, a row per column, so that it grows down instead of splitting into many
    /// narrow parts.
    pub fn terminal(&self) -> String {
        let text = |c: &Cell| match c {
            Cell::Text(x) | Cell::Num(x) | Cell::Warn(x) | Cell::Good(x) => x.clone(),
            Cell::NumSub(a, b) => format!("{a} ({b})"),
            Cell::Empty => "–".to_string(),
        };
        let mut t = new_table(self.header.iter().cloned());
        t.set_keys(self.keys);
        for row in &self.rows {
            t.add_row(row.iter().map(text));
        }
        let Some(width) = terminal_width() else {
            return t.to_string();
        };
        // Drawn whole where it fits, split by columns where it is long; turned (below)
        // where it is short and wide.
        let whole = t.render_at(None);
        let fits = whole
            .lines()
            .all(|l| l.chars().count() <= usize::from(width));
        if fits {
            return whole;
        }
        if self.header.len() <= self.rows.len() + 1 {
            return t.render_at(Some(width));
        }
        // Turned: the first column's cells become the header.
        let mut header = vec![self.header.first().cloned().unwrap_or_default()];
        header.extend(
            self.rows
                .iter()
                .map(|r| r.first().map(text).unwrap_or_default()),
        );
        let mut turned = new_table(header);
        for (i, name) in self.header.iter().enumerate().skip(1) {
            let mut row = vec![name.clone()];
            row.extend(
                self.rows
                    .iter()
                    .map(|r| r.get(i).map(text).unwrap_or_default()),
            );
            turned.add_row(row);
        }
        turned.to_string()
    }

    /// The table as HTML (in a scrolling wrapper so wide tables never widen the page).
    pub fn html(&self) -> String {
        let mut s = String::from("<div class=\"table-wrap\"><table>\n<thead><tr>");
        for (i, h) in self.header.iter().enumerate() {
            // A column of text is left-aligned, a column of numbers right-aligned.
            let text = i == 0
                || self
                    .rows
                    .first()
                    .and_then(|r| r.get(i))
                    .is_some_and(|c| matches!(c, Cell::Text(_)));
            let class = if text { "" } else { " class=\"num\"" };
            let _ = write!(s, "<th{class}>{}</th>", escape::html(h));
        }
        s.push_str("</tr></thead>\n<tbody>\n");
        for row in &self.rows {
            s.push_str("<tr>");
            for c in row {
                match c {
                    Cell::Text(t) => {
                        let _ = write!(s, "<td>{}</td>", escape::html(t));
                    }
                    Cell::Num(t) => {
                        let _ = write!(s, "<td class=\"num\">{}</td>", escape::html(t));
                    }
                    Cell::NumSub(a, b) => {
                        let _ = write!(
                            s,
                            "<td class=\"num\">{}<small>{}</small></td>",
                            escape::html(a),
                            escape::html(b)
                        );
                    }
                    Cell::Warn(t) => {
                        let _ = write!(s, "<td class=\"num warn\">{}</td>", escape::html(t));
                    }
                    Cell::Good(t) => {
                        let _ = write!(s, "<td class=\"num good\">{}</td>", escape::html(t));
                    }
                    Cell::Empty => s.push_str("<td class=\"num empty\">–</td>"),
                }
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</tbody></table></div>\n");
        s
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_escaped() {
        let mut t = Table::new(["<h>", "n"]);
        t.row(vec![
            Cell::Text("<script>".into()),
            Cell::NumSub("1 & 2".into(), "\"".into()),
        ]);
        let h = t.html();
        assert!(h.contains("&lt;h&gt;"));
        assert!(h.contains("&lt;script&gt;"));
        assert!(h.contains("1 &amp; 2<small>&quot;</small>"));
        assert!(!h.contains("<script"));
        let text = t.terminal();
        assert!(
            text.contains("<script>") && text.contains("1 & 2 (\")"),
            "{text}"
        );
    }

    /// A short table too wide for the terminal is drawn turned: its first column heads
    /// the columns, each other column is a row; every cell is still there once.
    #[test]
    fn a_short_wide_table_is_turned() {
        let header: Vec<String> = std::iter::once("file".to_string())
            .chain((0..30).map(|i| format!("point {i}")))
            .collect();
        let mut t = Table::new(header);
        for m in ["alpha", "beta"] {
            let mut row = vec![Cell::Text(m.into())];
            row.extend((0..30).map(|i| Cell::Num(format!("{m}-{i} µs"))));
            t.row(row);
        }
        let text = t.terminal();
        let head = text.lines().next().unwrap();
        assert!(head.contains("alpha") && head.contains("beta"), "{text}");
        for m in ["alpha", "beta"] {
            for i in 0..30 {
                assert_eq!(text.matches(&format!("{m}-{i} µs")).count(), 1, "{text}");
            }
        }
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    }
}
