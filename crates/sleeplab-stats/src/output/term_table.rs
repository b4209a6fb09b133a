//! A terminal table that fits the terminal's width: drawn whole where it fits (or with
//! `--wide`), else split into groups of columns, each led by the table's key columns, as
//! a wide data frame is printed. A number is never broken across lines.

use comfy_table::ColumnConstraint;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU16, Ordering};

/// The width tables fit, in columns; 0: no limit (`--wide`). Set once by the command
/// line before anything is drawn: a process draws for one terminal. (comfy-table's own
/// wrapping would split numbers across lines, so a table too wide is split by columns
/// here, or draws a compact form of itself.)
static WIDTH: AtomicU16 = AtomicU16::new(DEFAULT_WIDTH);

/// The width tables fit by default: an 80–100 column terminal's.
pub const DEFAULT_WIDTH: u16 = 100;

/// Sets the width tables fit (`None`: each at its full width, as `--wide` asks).
pub fn set_terminal_width(width: Option<u16>) {
    WIDTH.store(width.unwrap_or(0), Ordering::Relaxed);
}

/// The width tables fit (`None`: their full width, as `--wide` asks).
pub fn terminal_width() -> Option<u16> {
    match WIDTH.load(Ordering::Relaxed) {
        0 => None,
        w => Some(w),
    }
}

/// A comfy-table table (reached through `Deref`) that fits [`terminal_width`] when
/// displayed.
#[derive(Debug)]
pub struct TermTable {
    table: comfy_table::Table,
    keys: usize,
}

impl TermTable {
    /// Wraps `table`; its first column names a row (see [`TermTable::set_keys`]).
    pub fn new(table: comfy_table::Table) -> Self {
        Self { table, keys: 1 }
    }

    /// How many leading columns name a row: each group of a split table repeats them.
    pub fn set_keys(&mut self, keys: usize) -> &mut Self {
        self.keys = keys.max(1);
        self
    }

    /// The table fitting `width` columns (`None`: whole).
    pub fn render_at(&self, width: Option<u16>) -> String {
        let whole = self.table.to_string();
        let Some(width) = width.map(usize::from) else {
            return whole;
        };
        let n = self.table.column_iter().count();
        if widest(&whole) <= width || n < 2 {
            return whole;
        }
        let keys = self.keys.min(n - 1);
        // A group is the table with every other column hidden: its alignments,
        // constraints and arrangement stay the caller's.
        let draw = |cols: &[usize]| -> String {
            let mut t = self.table.clone();
            for i in (0..n).filter(|i| !cols.contains(i)) {
                if let Some(c) = t.column_mut(i) {
                    c.set_constraint(ColumnConstraint::Hidden);
                }
            }
            t.to_string()
        };
        // Greedy: each group takes the next columns while it fits (at least one each).
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut current: Vec<usize> = (0..keys).collect();
        for i in keys..n {
            let mut wider = current.clone();
            wider.push(i);
            if current.len() > keys && widest(&draw(&wider)) > width {
                groups.push(std::mem::replace(
                    &mut current,
                    (0..keys).chain([i]).collect(),
                ));
            } else {
                current = wider;
            }
        }
        groups.push(current);
        groups
            .iter()
            .map(|g| draw(g))
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

/// The longest line of `text`, in characters.
fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

impl Deref for TermTable {
    type Target = comfy_table::Table;
    fn deref(&self) -> &Self::Target {
        &self.table
    }
}

impl DerefMut for TermTable {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.table
    }
}

impl fmt::Display for TermTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_at(terminal_width()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::new_table;

    fn wide_table() -> TermTable {
        let header: Vec<String> = (0..12).map(|i| format!("column {i}")).collect();
        let mut t = new_table(header);
        for r in 0..3 {
            let row: Vec<String> = (0..12)
                .map(|i| {
                    if i == 0 {
                        format!("row {r}")
                    } else {
                        format!("v{i}-{r} {i}.000 µs (99.00 µs)")
                    }
                })
                .collect();
            t.add_row(row);
        }
        t
    }

    /// A table wider than the width is split into groups of columns that each fit, each
    /// led by the key column; every cell is drawn once, whole; with no width it stays one.
    #[test]
    fn a_wide_table_splits_into_groups_that_fit_and_keep_every_cell_whole() {
        let t = wide_table();
        let whole = t.render_at(None);
        assert!(widest(&whole) > 200, "{whole}");
        for width in [60u16, 80, 100] {
            let fitted = t.render_at(Some(width));
            assert!(widest(&fitted) <= usize::from(width), "{width}:\n{fitted}");
            for r in 0..3 {
                for i in 1..12 {
                    let cell = format!("v{i}-{r} {i}.000 µs (99.00 µs)");
                    assert_eq!(fitted.matches(&cell).count(), 1, "{cell}:\n{fitted}");
                }
                // The key column leads every group.
                let groups = fitted.split("\n\n").count();
                assert!(groups >= 2);
                assert_eq!(fitted.matches(&format!("row {r}")).count(), groups);
            }
        }
    }

    /// Two key columns lead each group; a table that fits is drawn as it is.
    #[test]
    fn key_columns_lead_each_group_and_a_fitting_table_is_untouched() {
        let mut t = wide_table();
        t.set_keys(2);
        let fitted = t.render_at(Some(100));
        for group in fitted.split("\n\n") {
            let header = group.lines().next().unwrap();
            assert!(
                header.contains("column 0") && header.contains("column 1"),
                "{group}"
            );
        }
        let mut small = new_table(["a", "b"]);
        small.add_row(["x", "1"]);
        assert_eq!(small.render_at(Some(100)), small.render_at(None));
    }
}
