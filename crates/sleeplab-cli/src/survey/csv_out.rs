//! The survey's `samples.csv`: the raw samples of the stages whose experiment keeps them
//! (sweep, sweep-slack, pace; `docs/REPORT.md` names them) in one long-form table
//! (one row per call), loadable with `pandas.read_csv` as is.
//!
//! Experiments measure different things per call, so each row names its `metric`:
//! `elapsed` (how long a wait took, sweep), `lateness` (how late a wake-up was against
//! its deadline, pace). `value_ns` is that metric; `overshoot_ns` is always the amount
//! beyond what was asked (elapsed − requested, or the lateness itself).

use super::SurveyData;
use crate::experiments::SCHEMA_VERSION;
use serde::Serialize;
use sleeplab_stats::csv_bytes;

/// The columns, in order.
pub const CSV_COLUMNS: [&str; 14] = [
    "stage",
    "experiment",
    "series",
    "requested_ns",
    "load",
    "timer_slack_ns",
    "round",
    "index",
    "warmup",
    "metric",
    "value_ns",
    "overshoot_ns",
    "early",
    "schema_version",
];

#[derive(Serialize)]
struct Row<'a> {
    stage: &'a str,
    experiment: &'a str,
    series: &'a str,
    requested_ns: u64,
    load: usize,
    timer_slack_ns: u64,
    round: i64,
    index: u64,
    warmup: bool,
    metric: &'a str,
    value_ns: u64,
    overshoot_ns: i64,
    early: bool,
    schema_version: u32,
}

/// The CSV text of every kept sample of the survey: each stage's samples
/// ([`ResultData::samples`](crate::experiments::ResultData::samples)) with the stage's name (in-memory results keep every raw
/// sample; results loaded from JSON only the capped `samples_ns`).
pub fn samples_csv(data: &SurveyData) -> anyhow::Result<Vec<u8>> {
    let rows = data.results.iter().enumerate().flat_map(|(i, result)| {
        let stage = data.stage_of(i).map_or("", |s| s.name.as_str());
        let experiment = result.data.name();
        let slack = result.settings.timer_slack_ns;
        result.data.as_data().samples().map(move |s| Row {
            stage,
            experiment,
            series: s.series,
            requested_ns: s.requested_ns,
            load: s.load,
            timer_slack_ns: s.timer_slack_ns.unwrap_or(slack),
            round: s.round,
            index: s.index,
            warmup: s.warmup,
            metric: s.metric.name(),
            value_ns: s.value_ns,
            overshoot_ns: s.overshoot_ns(),
            early: s.early(),
            schema_version: SCHEMA_VERSION,
        })
    });
    csv_bytes(Some(&CSV_COLUMNS), rows)
}
