//! The periodic timers' table, one row per cell (and per thread under it with several):
//! the one table the terminal and the page both draw.

use super::{TickStats, TimersCell};
use sleeplab_stats::{Cell, Table, fmt_ns, fmt_ns_f, fmt_pct};
use std::fmt::Write;

/// The table of `cells`: a `period` column first where they hold several periods
/// (`with_period`), a row per cell labelled by its mechanism (its slack where it is not
/// the cells' most common one, "interrupted" where it did not finish), and a row per
/// thread under a cell of several.
pub fn cells_table(cells: &[&TimersCell], with_period: bool) -> Table {
    let mut header = Vec::new();
    if with_period {
        header.push("period");
    }
    header.extend([
        "mechanism",
        "count",
        "avg error",
        "σ",
        "mean late",
        "σ late",
        "p99 late",
        "max late",
        "missed",
        "early",
        "end late",
        "drift",
        "CPU",
        "csw v/i",
    ]);
    let mut t = Table::new(header).with_keys(if with_period { 2 } else { 1 });
    let usual_slack = most_common(cells.iter().map(|c| c.timer_slack_ns));
    for c in cells {
        let mut label = c.mechanism.clone();
        if c.timer_slack_ns != usual_slack {
            let _ = write!(label, " (slack {})", fmt_ns(c.timer_slack_ns));
        }
        if !c.complete {
            label.push_str(" (interrupted)");
        }
        let period = with_period.then(|| fmt_ns(c.period_ns));
        t.row(row(
            period.clone(),
            label,
            &c.merged,
            c.cpu_pct,
            (c.voluntary_csw, c.involuntary_csw),
        ));
        if c.threads.len() > 1 {
            for th in &c.threads {
                t.row(row(
                    period.clone(),
                    format!("  thread {}", th.thread),
                    &th.stats,
                    th.cpu_pct,
                    (th.voluntary_csw, th.involuntary_csw),
                ));
            }
        }
    }
    t
}

/// One row of [`cells_table`]: missed ticks and early wakes marked where there are any.
fn row(
    period: Option<String>,
    label: String,
    s: &TickStats,
    cpu_pct: f64,
    (vol, invol): (u64, u64),
) -> Vec<Cell> {
    let marked = |n: u64| {
        if n > 0 {
            Cell::Warn(n.to_string())
        } else {
            Cell::Num("0".into())
        }
    };
    let mut out: Vec<Cell> = period.map(Cell::Text).into_iter().collect();
    out.extend([
        Cell::Text(label),
        Cell::Num(format!("{}/{}", s.received, s.expected)),
        Cell::Num(fmt_pct(s.avg_error_pct)),
        Cell::Num(fmt_pct(s.error_stddev_pct)),
        Cell::Num(fmt_ns_f(s.mean_lateness_ns)),
        Cell::Num(fmt_ns_f(s.lateness_stddev_ns)),
        Cell::Num(fmt_ns_f(s.p99_lateness_ns)),
        Cell::Num(fmt_ns_f(s.max_lateness_ns as f64)),
        marked(s.missed),
        marked(s.early_wakes),
        Cell::Num(fmt_ns_f(s.end_lateness_ns as f64)),
        Cell::Num(fmt_ns_f(s.drift_ns as f64)),
        Cell::Num(fmt_pct(cpu_pct)),
        Cell::Num(format!("{vol}/{invol}")),
    ]);
    out
}

/// The most common value of `values` (the first seen on ties; 0 for none).
pub fn most_common(values: impl Iterator<Item = u64>) -> u64 {
    let v: Vec<u64> = values.collect();
    v.iter()
        .copied()
        .max_by_key(|x| {
            (
                v.iter().filter(|y| *y == x).count(),
                std::cmp::Reverse(v.iter().position(|y| y == x)),
            )
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_common_value_wins_and_ties_go_to_the_first_seen() {
        assert_eq!(most_common([50, 1, 50, 1, 7].into_iter()), 50);
        assert_eq!(most_common([50, 50, 1].into_iter()), 50);
        assert_eq!(most_common(std::iter::empty()), 0);
    }
}
