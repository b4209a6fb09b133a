//! `pace` raw frame errors as long-form CSV.

use super::PaceData;
use crate::experiments::{ResultData, SCHEMA_VERSION};
use crate::output::csv_bytes;
use serde::Serialize;

#[derive(Serialize)]
struct Row<'a> {
    strategy: &'a str,
    frame: u64,
    error_ns: u64,
    period_ns: u64,
    timer_slack_ns: Option<u64>,
    schema_version: u32,
}

/// One row per kept frame: strategy, frame (0-based, in measurement order), error_ns
/// (woke − deadline), period_ns, timer_slack_ns, schema_version.
pub fn to_csv(data: &PaceData) -> anyhow::Result<Vec<u8>> {
    let rows = data.samples().map(|s| Row {
        strategy: s.series,
        frame: s.index,
        error_ns: s.value_ns,
        period_ns: s.requested_ns,
        timer_slack_ns: s.timer_slack_ns,
        schema_version: SCHEMA_VERSION,
    });
    csv_bytes(None, rows)
}
