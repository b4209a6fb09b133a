//! sleeplab's numbers and the words about them: statistics whose quantiles and intervals
//! follow the lab's rules, sentences whose claims are checked against their numbers, and
//! the units, tables, progress bars and files every output is written with.
//!
//! Its modules are private; this list is the crate's whole interface. Three layers, each
//! importing only those below it: `claim` (every printed sentence with the claims it
//! makes), `stats` (the recorder, summaries, quantiles and their intervals over units),
//! `output` (scaled units, tables, HTML escaping, CSV text, atomic writes).

mod claim;
mod output;
mod stats;

// Statistics.
pub use stats::quantile_ci::{ci_by_rank, ci_ranks, ci_sorted, ci_sorted_u64};
pub use stats::units::{design_effect, geometric_ci, paired_ci, quantile_ci, ratio_of_runs};
pub use stats::{
    CI_LEVEL, Ci, MIN_RUNS, MIN_UNITS, Recorder, RecorderConfig, Stat, Summary, Unit,
    UnitIntervals, ci_below, mean_ci, min_samples, one_two_five, quantile_sorted, rank_from_top,
    ratio_ci, recheck_quantiles, resolves, summarize, t_quantile, tail_quantile, tail_quantile_i64,
};

// Sentences and the claims they make.
pub use claim::{
    BLOCKED_CSW, BY_POINT_VALUE, Basis, Claim, Direction, Est, Extreme, INDISTINGUISHABLE,
    NEVER_BLOCKED, NO_UNITS, Order, RankBy, SMALL_SAMPLE, Sentence, Verb, WITHIN_RUN, and_list,
    basis_note, difference, direction, equivalent, extreme_index, indistinguishable, interval_text,
    median, median_est, n_clause, never_blocked_rule, order, order_by_point, ratio, rests_on_units,
    small_n, with_interval,
};

// Output: tables, progress, files.
pub use output::table::{Cell, Table};
pub use output::{
    DEFAULT_WIDTH, Progress, TermTable, View, ViewBlock, atomic_write, check_writable, csv_bytes,
    fit_lines, fmt_ns, fmt_ns_f, fmt_pct, new_table, not_measured, set_terminal_width,
    terminal_width, wrap,
};

/// A value as a table cell or a sentence writes it, its unit scaled: `ns` (durations),
/// `num`, `pct`, `ratio` (`×1.52`), `signed_ns` (`+12.9 µs`).
pub mod units {
    pub use crate::output::units::{ns, num, pct, ratio, signed_ns};
}

/// Text made safe for HTML: element content and attributes (`html`), ids and classes
/// (`ident`).
pub mod escape {
    pub use crate::output::escape::{html, ident};
}
