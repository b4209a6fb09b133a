//! Everything that leaves the process: scaled units (terminal and prose styles), tables
//! (terminal and HTML), views drawn by both, text wrapped to the terminal, HTML
//! escaping, progress bars, CSV text, and files written whole or not at all.

mod atomic;
mod csv_text;
pub mod escape;
mod progress;
pub mod table;
mod term_table;
pub mod units;
mod view;
mod wrap;

pub use atomic::{atomic_write, check_writable};
pub use csv_text::csv_bytes;
pub use progress::Progress;
pub use table::{new_table, not_measured};
pub use term_table::{DEFAULT_WIDTH, TermTable, set_terminal_width, terminal_width};
pub use units::{fmt_ns, fmt_ns_f, fmt_pct};
pub use view::{View, ViewBlock};
pub use wrap::{fit_lines, wrap};
