//! The sweep's raw samples as long-form CSV (one row per call), documented in
//! `docs/RESULTS.md` and loadable with `pandas.read_csv` as is.

use super::SweepData;
use crate::output::atomic_write;
use serde::Serialize;
use std::path::Path;

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

/// Writes every kept sample (warm-up calls first, with round −1 and `warmup` true).
pub fn write_csv(path: &Path, data: &SweepData) -> anyhow::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    // The header is written even when there are no rows, so pandas always gets columns.
    w.write_record(CSV_COLUMNS)?;
    for c in &data.cells {
        let row = |round: i64, index: u64, warmup: bool, elapsed: u64| Row {
            mechanism: &c.mechanism,
            requested_ns: c.requested_ns,
            load: c.load,
            timer_slack_ns: c.timer_slack_ns,
            round,
            index,
            warmup,
            elapsed_ns: elapsed,
            overshoot_ns: elapsed as i64 - c.requested_ns as i64,
            early: elapsed < c.requested_ns,
            schema_version: crate::model::SCHEMA_VERSION,
        };
        for (i, &e) in c.first_calls_ns.iter().enumerate() {
            w.serialize(row(-1, i as u64, true, e))?;
        }
        // Assign each kept raw sample to its round.
        let mut rounds = c
            .round_counts
            .iter()
            .enumerate()
            .flat_map(|(r, &n)| std::iter::repeat_n(r as i64, n as usize));
        for (i, &e) in c.all_samples_ns.iter().enumerate() {
            w.serialize(row(rounds.next().unwrap_or(-1), i as u64, false, e))?;
        }
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    atomic_write(path, &bytes)
}
