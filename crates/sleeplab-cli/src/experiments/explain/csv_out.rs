//! `explain`'s per-wake rows as CSV (one row per wake, one column per component),
//! documented in `docs/RESULTS.md` and loadable with `pandas.read_csv` as is.

use super::ExplainData;
use crate::experiments::SCHEMA_VERSION;
use crate::output::csv_bytes;
use crate::trace::Component;
use serde::Serialize;

/// The columns, in order. Within one `schema_version` columns are only ever added.
pub const CSV_COLUMNS: [&str; 27] = [
    "mechanism",
    "requested_ns",
    "load",
    "timer_slack_ns",
    "index",
    "deadline_ns",
    "end_ns",
    "lateness_ns",
    "overrun_ns",
    "entry_ns",
    "slack_ns",
    "timer_irq_ns",
    "idle_wakeup_ns",
    "run_queue_ns",
    "kernel_exit_ns",
    "return_ns",
    "spin_ns",
    "unexplained_ns",
    "holder",
    "traced",
    "blocked",
    "partial",
    "schema_version",
    "tid",
    "start_ns",
    "round",
    "host_ns",
];

/// The components with a column among the first ones, in their order: every one but
/// [`Component::Host`], whose column came later (`host_ns`, last; empty where its
/// share was not told).
fn early_components() -> impl Iterator<Item = Component> {
    Component::ALL.into_iter().filter(|&c| c != Component::Host)
}

/// One wake; the component columns follow [`early_components`], then `host_ns`.
#[derive(Serialize)]
struct Row<'a> {
    mechanism: &'a str,
    requested_ns: u64,
    load: usize,
    timer_slack_ns: u64,
    index: usize,
    deadline_ns: u64,
    end_ns: u64,
    lateness_ns: i64,
    parts: [u64; Component::COUNT - 1],
    holder: &'a str,
    traced: bool,
    blocked: bool,
    partial: bool,
    schema_version: u32,
    tid: i32,
    start_ns: u64,
    round: u32,
    host_ns: Option<u64>,
}

/// Every wake of every cell, header first even when there are none.
pub fn to_csv(data: &ExplainData) -> anyhow::Result<Vec<u8>> {
    let rows = data.cells.iter().flat_map(|c| {
        c.all_wakes.iter().enumerate().map(move |(index, w)| Row {
            mechanism: &c.mechanism,
            requested_ns: c.requested_ns,
            load: c.load,
            timer_slack_ns: c.timer_slack_ns,
            index,
            deadline_ns: w.deadline_ns,
            end_ns: w.end_ns,
            lateness_ns: w.lateness_ns,
            parts: {
                let mut early = early_components();
                std::array::from_fn(|_| {
                    early
                        .next()
                        .and_then(|k| w.components.get(&k).copied())
                        .unwrap_or(0)
                })
            },
            holder: w.holder.as_deref().unwrap_or(""),
            traced: w.traced,
            blocked: w.blocked,
            partial: c.explanation.partial,
            schema_version: SCHEMA_VERSION,
            tid: w.tid,
            start_ns: w.start_ns,
            round: w.round,
            host_ns: w.components.get(&Component::Host).copied(),
        })
    });
    csv_bytes(Some(&CSV_COLUMNS), rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The component columns are named after the components, in their order; the
    /// host's, added later, comes last.
    #[test]
    fn component_columns_follow_the_components() {
        let names: Vec<String> = early_components()
            .map(|c| format!("{}_ns", c.name()))
            .collect();
        assert_eq!(&CSV_COLUMNS[8..8 + Component::COUNT - 1], names.as_slice());
        assert_eq!(CSV_COLUMNS.last(), Some(&"host_ns"));
    }
}
