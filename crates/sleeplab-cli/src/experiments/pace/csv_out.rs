//! `pace` raw frame errors as long-form CSV.

use super::PaceData;
use crate::output::atomic_write;
use serde::Serialize;
use std::path::Path;

#[derive(Serialize)]
struct Row<'a> {
    strategy: &'a str,
    frame: u64,
    error_ns: u64,
    period_ns: u64,
    timer_slack_ns: Option<u64>,
    schema_version: u32,
}

/// Writes one row per kept frame: strategy, frame (0-based, in measurement order),
/// error_ns (woke − deadline), period_ns, timer_slack_ns, schema_version.
pub fn write_csv(path: &Path, data: &PaceData) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in &data.results {
        for (i, &e) in r.all_samples_ns.iter().enumerate() {
            w.serialize(Row {
                strategy: &r.strategy,
                frame: i as u64,
                error_ns: e,
                period_ns: data.config.period_ns,
                timer_slack_ns: data.config.timer_slack_ns,
                schema_version: crate::model::SCHEMA_VERSION,
            })?;
        }
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    atomic_write(path, &bytes)
}
