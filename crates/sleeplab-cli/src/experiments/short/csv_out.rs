//! `short`'s batches as long-form CSV: one row per batch, loadable with
//! `pandas.read_csv` as is (documented in `docs/SHORT.md`).

use super::{ShortCell, ShortData};
use crate::experiments::SCHEMA_VERSION;
use serde::Serialize;
use sleeplab_stats::csv_bytes;

/// The columns, in order. Within one `schema_version` columns are only ever added.
///
/// `batch` is the number of calls in the batch; `elapsed_ns`, `cpu_ns`, `vol_csw` and
/// `invol_csw` are totals over the batch; `per_call_ns` = `elapsed_ns / batch` and
/// `floor_ns` (the paired empty loop per call, 0 for the floor's own rows) are per call.
pub const CSV_COLUMNS: [&str; 12] = [
    "mechanism",
    "requested_ns",
    "timer_slack_ns",
    "repetition",
    "batch",
    "elapsed_ns",
    "per_call_ns",
    "floor_ns",
    "cpu_ns",
    "vol_csw",
    "invol_csw",
    "schema_version",
];

#[derive(Serialize)]
struct Row<'a> {
    mechanism: &'a str,
    requested_ns: u64,
    timer_slack_ns: u64,
    repetition: u64,
    batch: u64,
    elapsed_ns: u64,
    per_call_ns: f64,
    floor_ns: f64,
    cpu_ns: u64,
    vol_csw: u64,
    invol_csw: u64,
    schema_version: u32,
}

/// The CSV text of every batch (mechanism cells, then the references), header first
/// even when there are none.
pub fn to_csv(data: &ShortData) -> anyhow::Result<Vec<u8>> {
    let cells: Vec<&ShortCell> = data.cells.iter().chain(&data.references).collect();
    let rows = cells.into_iter().flat_map(|c| {
        c.batches.iter().map(move |b| Row {
            mechanism: &c.mechanism,
            requested_ns: c.requested_ns,
            timer_slack_ns: c.timer_slack_ns,
            repetition: b.repetition,
            batch: b.calls,
            elapsed_ns: b.elapsed_ns,
            per_call_ns: b.per_call_ns(),
            floor_ns: b.floor_per_call_ns(),
            cpu_ns: b.cpu_ns,
            vol_csw: b.voluntary_csw,
            invol_csw: b.involuntary_csw,
            schema_version: SCHEMA_VERSION,
        })
    });
    csv_bytes(Some(&CSV_COLUMNS), rows)
}
