//! `pace` raw frame errors as long-form CSV.

use super::PaceData;
use crate::experiments::{ResultData, SCHEMA_VERSION};
use serde::Serialize;
use sleeplab_stats::csv_bytes;

#[derive(Serialize)]
struct Row<'a> {
    strategy: &'a str,
    load: usize,
    frame: u64,
    error_ns: u64,
    period_ns: u64,
    timer_slack_ns: Option<u64>,
    schema_version: u32,
}

/// One row per kept frame: strategy, load (busy threads), frame (0-based, in measurement
/// order, per strategy and load), error_ns
/// (woke − deadline), period_ns, timer_slack_ns, schema_version.
pub fn to_csv(data: &PaceData) -> anyhow::Result<Vec<u8>> {
    let rows = data.samples().map(|s| Row {
        strategy: s.series,
        load: s.load,
        frame: s.index,
        error_ns: s.value_ns,
        period_ns: s.requested_ns,
        timer_slack_ns: s.timer_slack_ns,
        schema_version: SCHEMA_VERSION,
    });
    csv_bytes(None, rows)
}
