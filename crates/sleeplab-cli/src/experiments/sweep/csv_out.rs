//! The sweep's raw samples as long-form CSV (one row per call), documented in
//! `docs/RESULTS.md` and loadable with `pandas.read_csv` as is.

use super::SweepData;
use crate::experiments::{ResultData, SCHEMA_VERSION};
use serde::Serialize;
use sleeplab_stats::csv_bytes;

/// The columns, in order. Within one `schema_version` columns are only ever added.
pub const CSV_COLUMNS: [&str; 11] = [
    "mechanism",
    "requested_ns",
    "load",
    "timer_slack_ns",
    "round",
    "index",
    "warmup",
    "elapsed_ns",
    "overshoot_ns",
    "early",
    "schema_version",
];

#[derive(Serialize)]
struct Row<'a> {
    mechanism: &'a str,
    requested_ns: u64,
    load: usize,
    timer_slack_ns: u64,
    round: i64,
    index: u64,
    warmup: bool,
    elapsed_ns: u64,
    overshoot_ns: i64,
    early: bool,
    schema_version: u32,
}

/// Every kept sample (warm-up calls first, with round −1 and `warmup` true), header
/// first even when there are none.
pub fn to_csv(data: &SweepData) -> anyhow::Result<Vec<u8>> {
    let rows = data.samples().map(|s| Row {
        mechanism: s.series,
        requested_ns: s.requested_ns,
        load: s.load,
        timer_slack_ns: s.timer_slack_ns.unwrap_or_default(),
        round: s.round,
        index: s.index,
        warmup: s.warmup,
        elapsed_ns: s.value_ns,
        overshoot_ns: s.overshoot_ns(),
        early: s.early(),
        schema_version: SCHEMA_VERSION,
    });
    csv_bytes(Some(&CSV_COLUMNS), rows)
}
