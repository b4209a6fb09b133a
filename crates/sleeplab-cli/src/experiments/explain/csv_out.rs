//! `explain`'s per-wake rows as CSV (one row per wake, one column per component),
//! documented in `docs/RESULTS.md` and loadable with `pandas.read_csv` as is.

use super::ExplainData;
use crate::experiments::SCHEMA_VERSION;
use serde::Serialize;
use sleeplab_account::Component;
use sleeplab_stats::csv_bytes;

/// The columns, in order. Within one `schema_version` columns are only ever added.
pub const CSV_COLUMNS: [&str; 29] = [
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
    "idle_delivery_ns",
    "spin_gap_ns",
];

/// The components with a column among the first ones, in their order: every one but
/// [`Component::NO_GUEST_EVENT`]'s, whose columns came later (empty where their share
/// was not told): `host_ns`, their sum (the one column they had before they were told
/// apart), then `idle_delivery_ns` and `spin_gap_ns`.
fn early_components() -> impl Iterator<Item = Component> {
    Component::ALL
        .into_iter()
        .filter(|c| !Component::NO_GUEST_EVENT.contains(c))
}

/// One wake; the component columns follow [`early_components`], then `host_ns`,
/// `idle_delivery_ns` and `spin_gap_ns`.
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
    parts: [u64; Component::COUNT - 2],
    holder: &'a str,
    traced: bool,
    blocked: bool,
    partial: bool,
    schema_version: u32,
    tid: i32,
    start_ns: u64,
    round: u32,
    host_ns: Option<u64>,
    idle_delivery_ns: Option<u64>,
    spin_gap_ns: Option<u64>,
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
            host_ns: w
                .components
                .get(&Component::IdleDelivery)
                .zip(w.components.get(&Component::SpinGap))
                .map(|(a, b)| a + b),
            idle_delivery_ns: w.components.get(&Component::IdleDelivery).copied(),
            spin_gap_ns: w.components.get(&Component::SpinGap).copied(),
        })
    });
    csv_bytes(Some(&CSV_COLUMNS), rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The component columns are named after the components, in their order; those
    /// of the stretches with no guest event, added later, come last.
    #[test]
    fn component_columns_follow_the_components() {
        let names: Vec<String> = early_components()
            .map(|c| format!("{}_ns", c.name()))
            .collect();
        assert_eq!(&CSV_COLUMNS[8..8 + Component::COUNT - 2], names.as_slice());
        let late: Vec<String> = Component::NO_GUEST_EVENT
            .iter()
            .map(|c| format!("{}_ns", c.name()))
            .collect();
        assert_eq!(&CSV_COLUMNS[CSV_COLUMNS.len() - 3..][..1], ["host_ns"]);
        assert_eq!(&CSV_COLUMNS[CSV_COLUMNS.len() - 2..], late.as_slice());
    }
}
