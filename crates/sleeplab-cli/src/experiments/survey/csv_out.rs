//! The survey's `samples.csv`: every raw sample of every stage in one long-form table
//! (one row per call), loadable with `pandas.read_csv` as is.
//!
//! Experiments measure different things per call, so each row names its `metric`:
//! `elapsed` (how long a wait took, sweep), `lateness` (how late a wake-up was against
//! its deadline, pace). `value_ns` is that metric; `overshoot_ns` is always the amount
//! beyond what was asked (elapsed − requested, or the lateness itself).

use super::SurveyData;
use crate::model::{ExperimentData, SCHEMA_VERSION};
use serde::Serialize;

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

/// The CSV text of every kept sample of the survey (in-memory results; results loaded
/// from JSON only carry the capped `samples_ns`, which are used instead).
pub fn samples_csv(data: &SurveyData) -> anyhow::Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.write_record(CSV_COLUMNS)?;
    for (i, result) in data.results.iter().enumerate() {
        let stage = data.stage_of(i).map_or("", |s| s.name.as_str());
        let experiment = result.data.name();
        match &result.data {
            ExperimentData::Sweep(sweep) => {
                for c in &sweep.cells {
                    let row = |round: i64, index: u64, warmup: bool, v: u64| Row {
                        stage,
                        experiment,
                        series: &c.mechanism,
                        requested_ns: c.requested_ns,
                        load: c.load,
                        timer_slack_ns: c.timer_slack_ns,
                        round,
                        index,
                        warmup,
                        metric: "elapsed",
                        value_ns: v,
                        overshoot_ns: v as i64 - c.requested_ns as i64,
                        early: v < c.requested_ns,
                        schema_version: SCHEMA_VERSION,
                    };
                    for (k, &v) in c.first_calls_ns.iter().enumerate() {
                        w.serialize(row(-1, k as u64, true, v))?;
                    }
                    let samples = if c.all_samples_ns.is_empty() {
                        &c.samples_ns
                    } else {
                        &c.all_samples_ns
                    };
                    let mut rounds = c
                        .round_counts
                        .iter()
                        .enumerate()
                        .flat_map(|(r, &n)| std::iter::repeat_n(r as i64, n as usize));
                    for (k, &v) in samples.iter().enumerate() {
                        w.serialize(row(rounds.next().unwrap_or(-1), k as u64, false, v))?;
                    }
                }
            }
            ExperimentData::Pace(pace) => {
                let slack = pace
                    .config
                    .timer_slack_ns
                    .unwrap_or(result.settings.timer_slack_ns);
                for r in &pace.results {
                    let samples = if r.all_samples_ns.is_empty() {
                        &r.samples_ns
                    } else {
                        &r.all_samples_ns
                    };
                    for (k, &v) in samples.iter().enumerate() {
                        w.serialize(Row {
                            stage,
                            experiment,
                            series: &r.strategy,
                            requested_ns: pace.config.period_ns,
                            load: 0,
                            timer_slack_ns: slack,
                            round: 0,
                            index: k as u64,
                            warmup: false,
                            metric: "lateness",
                            value_ns: v,
                            overshoot_ns: v as i64,
                            early: false,
                            schema_version: SCHEMA_VERSION,
                        })?;
                    }
                }
            }
            // Summaries only: no per-call samples to write.
            _ => {}
        }
    }
    w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))
}
