//! Every scheduled tick as long-form CSV (one row per tick and thread), loadable with
//! `pandas.read_csv` as is.

use super::TimersData;
use crate::output::atomic_write;
use serde::Serialize;
use std::path::Path;

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

/// Writes one row per scheduled tick: `tick` is k (due at t0 + k·period, from 1),
/// `lateness_ns` its delivery − due time, `wake` the index of the wake that delivered it,
/// `missed` whether that wake also stood for a later tick (an overrun).
pub fn write_csv(path: &Path, data: &TimersData) -> anyhow::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.write_record(CSV_COLUMNS)?;
    for c in &data.cells {
        for t in &c.threads {
            for (k, r) in t.ticks.iter().enumerate() {
                w.serialize(Row {
                    mechanism: &c.mechanism,
                    period_ns: c.period_ns,
                    load: c.load,
                    timer_slack_ns: t.timer_slack_ns,
                    thread: t.thread,
                    tick: k as u64 + 1,
                    lateness_ns: r.lateness_ns,
                    wake: r.wake,
                    missed: r.missed,
                    schema_version: crate::model::SCHEMA_VERSION,
                })?;
            }
        }
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    atomic_write(path, &bytes)
}
