//! The simulation as CSV: one row per cell, loadable with `pandas.read_csv` as is.

use super::data::SimulateData;
use super::models::ModelSpec;
use crate::experiments::SCHEMA_VERSION;
use serde::Serialize;
use sleeplab_stats::csv_bytes;

/// The columns, in order. Within one `schema_version` columns are only ever added.
pub const CSV_COLUMNS: [&str; 20] = [
    "strategy",
    "requested_ns",
    "model",
    "model_kind",
    "period_ns",
    "preempt_prob",
    "sleeps",
    "warmup",
    "seed",
    "mean_rel_error",
    "p50_rel_error",
    "p99_rel_error",
    "max_rel_error",
    "mean_lateness_ns",
    "p99_lateness_ns",
    "max_lateness_ns",
    "cpu_percent",
    "native_sleeps_per_wait",
    "early",
    "schema_version",
];

#[derive(Serialize)]
struct Row<'a> {
    strategy: &'a str,
    requested_ns: u64,
    model: usize,
    model_kind: &'static str,
    period_ns: Option<u64>,
    preempt_prob: Option<f64>,
    sleeps: u64,
    warmup: u64,
    seed: u64,
    mean_rel_error: f64,
    p50_rel_error: f64,
    p99_rel_error: Option<f64>,
    max_rel_error: f64,
    mean_lateness_ns: f64,
    p99_lateness_ns: Option<f64>,
    max_lateness_ns: u64,
    cpu_percent: f64,
    native_sleeps_per_wait: f64,
    early: u64,
    schema_version: u32,
}

/// The CSV text (header included even without cells).
pub fn to_csv(data: &SimulateData) -> anyhow::Result<Vec<u8>> {
    let rows = data.cells.iter().map(|c| {
        let spec = data.config.models.get(c.model);
        let (kind, period, prob) = match spec {
            Some(ModelSpec::Scheduler(m)) => ("scheduler", Some(m.period_ns), Some(m.preempt_prob)),
            Some(ModelSpec::Replay(_)) => ("replay", None, None),
            None => ("", None, None),
        };
        Row {
            strategy: &c.strategy,
            requested_ns: c.requested_ns,
            model: c.model,
            model_kind: kind,
            period_ns: period,
            preempt_prob: prob,
            sleeps: c.sleeps,
            warmup: data.config.warmup,
            seed: data.config.seed,
            mean_rel_error: c.mean_rel_error,
            p50_rel_error: c.p50_rel_error,
            p99_rel_error: c.p99_rel_error,
            max_rel_error: c.max_rel_error,
            mean_lateness_ns: c.mean_lateness_ns,
            p99_lateness_ns: c.p99_lateness_ns,
            max_lateness_ns: c.max_lateness_ns,
            cpu_percent: c.cpu_percent,
            native_sleeps_per_wait: c.native_sleeps_per_wait,
            early: c.early,
            schema_version: SCHEMA_VERSION,
        }
    });
    csv_bytes(Some(&CSV_COLUMNS), rows)
}
