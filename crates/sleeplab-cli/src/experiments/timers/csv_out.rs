//! Every scheduled tick as long-form CSV (one row per tick and thread), loadable with
//! `pandas.read_csv` as is.

use super::TimersData;
use crate::experiments::SCHEMA_VERSION;
use serde::Serialize;
use sleeplab_stats::csv_bytes;

/// The columns, in order. Within one `schema_version` columns are only ever added.
pub const CSV_COLUMNS: [&str; 10] = [
    "mechanism",
    "period_ns",
    "load",
    "timer_slack_ns",
    "thread",
    "tick",
    "lateness_ns",
    "wake",
    "missed",
    "schema_version",
];

#[derive(Serialize)]
struct Row<'a> {
    mechanism: &'a str,
    period_ns: u64,
    load: usize,
    timer_slack_ns: u64,
    thread: usize,
    tick: u64,
    lateness_ns: i64,
    wake: u32,
    missed: bool,
    schema_version: u32,
}

/// One row per scheduled tick: `tick` is k (due at t0 + k·period, from 1),
/// `lateness_ns` its delivery − due time, `wake` the index of the wake that delivered it,
/// `missed` whether that wake also stood for a later tick (an overrun).
pub fn to_csv(data: &TimersData) -> anyhow::Result<Vec<u8>> {
    let rows = data.cells.iter().flat_map(|c| {
        c.threads.iter().flat_map(move |t| {
            t.ticks.iter().enumerate().map(move |(k, r)| Row {
                mechanism: &c.mechanism,
                period_ns: c.period_ns,
                load: c.load,
                timer_slack_ns: t.timer_slack_ns,
                thread: t.thread,
                tick: k as u64 + 1,
                lateness_ns: r.lateness_ns,
                wake: r.wake,
                missed: r.missed,
                schema_version: SCHEMA_VERSION,
            })
        })
    });
    csv_bytes(Some(&CSV_COLUMNS), rows)
}
