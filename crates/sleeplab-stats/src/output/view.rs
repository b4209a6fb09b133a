//! One view of a result, built once and drawn by both renderers: the terminal
//! ([`View::terminal`]) and the HTML report (each block as the page's own). An
//! experiment that describes its output as a [`View`] needs no renderer of its own.

use super::table::Table;

/// What an experiment shows of its data: a title and blocks in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct View {
    /// The anchor of the report's section (made safe where it is drawn).
    pub id: String,
    /// The report section's title (the terminal opens with the first block instead).
    pub title: String,
    /// The blocks, in order.
    pub blocks: Vec<ViewBlock>,
}

/// One block of a [`View`].
#[derive(Debug, Clone, PartialEq)]
pub enum ViewBlock {
    /// A paragraph of plain text.
    Text(String),
    /// A table of numbers.
    Table(Table),
    /// Code to copy, under a line that says what it is ("in Rust").
    Code {
        /// The line above the code.
        label: String,
        /// The code, as it should be copied.
        code: String,
    },
}

impl View {
    /// An empty view titled `title`, anchored at `id`.
    pub fn new(id: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    /// The view with a paragraph added.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.blocks.push(ViewBlock::Text(text.into()));
        self
    }

    /// The view with a table added.
    pub fn table(mut self, table: Table) -> Self {
        self.blocks.push(ViewBlock::Table(table));
        self
    }

    /// The view with code added under `label`; nothing where `code` is empty.
    pub fn code(mut self, label: impl Into<String>, code: impl Into<String>) -> Self {
        let code = code.into();
        if !code.is_empty() {
            self.blocks.push(ViewBlock::Code {
                label: label.into(),
                code,
            });
        }
        self
    }

    /// The view as the terminal prints it: a blank line, then each block followed by a
    /// blank line (a table by its rows' own end, code as written).
    pub fn terminal(&self) -> String {
        let mut out = String::from("\n");
        for b in &self.blocks {
            match b {
                ViewBlock::Text(t) => {
                    out.push_str(t);
                    out.push_str("\n\n");
                }
                ViewBlock::Table(t) => {
                    out.push_str(&t.terminal());
                    out.push('\n');
                }
                ViewBlock::Code { label, code } => {
                    out.push_str(label);
                    out.push_str(":\n\n");
                    out.push_str(code);
                    if !code.ends_with('\n') {
                        out.push('\n');
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::table::Cell;

    #[test]
    fn terminal_draws_every_block_in_order() {
        let mut t = Table::new(["name", "p99"]);
        t.row(vec![Cell::Text("a".into()), Cell::Num("1 µs".into())]);
        let v = View::new("x", "X")
            .text("first")
            .table(t)
            .text("second")
            .code("in Rust", "let a = 1;")
            .code("in C", "");
        let s = v.terminal();
        let at = |needle: &str| s.find(needle).unwrap_or_else(|| panic!("{needle} in {s}"));
        assert!(s.starts_with("\nfirst\n\n"));
        assert!(at("first") < at("1 µs") && at("1 µs") < at("second"));
        assert!(s.ends_with("in Rust:\n\nlet a = 1;\n"), "{s}");
        assert!(!s.contains("in C"), "empty code is left out: {s}");
        assert_eq!(v.blocks.len(), 4);
    }
}
