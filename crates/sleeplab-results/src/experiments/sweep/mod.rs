//! `sleeplab sweep`: requested duration × mechanism × load (× timer slack) → how long
//! the wait really took. The rigorous successor of seed 000's TimerTest.
//!
//! Cells are interleaved: the run makes `rounds` passes over every cell, each pass
//! taking a share of the cell's samples, so a slow drift of the machine spreads over
//! all cells instead of biasing one. Within a pass, load levels are the outer loop (the
//! busy threads are started once per level), then timer slack, then mechanism and
//! duration.

use crate::{KeyPart, Metric, Point, ResultData, Sample};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab_account::{CellAccount, Explanation, TracedCells, Tracing};
use sleeplab_stats::{Est, Stat, Summary, UnitIntervals};

/// The experiment's name: on the command line, and the `experiment` tag of its result files.
pub const NAME: &str = "sweep";

/// How many samples a cell takes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Quota {
    /// Exactly this many samples per cell.
    Iterations {
        /// Samples per cell.
        count: u64,
    },
    /// Samples until their sum reaches the budget, within [min, max] samples (seed 003's
    /// "seconds of sleeping per cell", robust to sleeps far longer than asked).
    Budget {
        /// Time budget per cell, ns.
        budget_ns: u64,
        /// At least this many samples.
        min_count: u64,
        /// At most this many samples.
        max_count: u64,
    },
}

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SweepConfig {
    /// Mechanisms, in order.
    pub mechanisms: Vec<String>,
    /// Requested durations, ns.
    pub durations_ns: Vec<u64>,
    /// Numbers of competing busy threads.
    pub loads: Vec<usize>,
    /// Timer slack values to run under, ns; empty = leave the thread's slack alone.
    pub timer_slacks_ns: Vec<u64>,
    /// Samples per cell.
    pub quota: Quota,
    /// Calls per cell kept apart as "first calls" before the measured ones.
    pub warmup: u64,
    /// Interleaved passes over all cells.
    pub rounds: u64,
    /// Raw samples per cell kept in the JSON result (all kept ones go to CSV).
    pub json_samples: usize,
    /// Raw samples per cell kept in memory (for CSV and exact quantiles).
    pub raw_cap: usize,
    /// Cells measured only for some mechanisms, at their own sample count (the survey
    /// spends its samples where the questions are); empty = every cell by `quota`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub focus: Vec<Focus>,
    /// Whether to split each wake's lateness with the kernel's tracepoints (`--trace`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace: bool,
}

/// The cells at `requests_ns` × `loads` are measured only for `mechanisms`, `count`
/// samples each (instead of the quota). The first rule that covers a cell decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Focus {
    /// Requested durations the rule covers, ns.
    pub requests_ns: Vec<u64>,
    /// Load levels the rule covers.
    pub loads: Vec<usize>,
    /// The only mechanisms measured there (empty: none).
    pub mechanisms: Vec<String>,
    /// Samples per cell there.
    pub count: u64,
}

impl SweepConfig {
    /// `mechanisms` × `durations_ns` at `quota`, and otherwise the smallest sweep: no
    /// load, the thread's own slack, one round, no warm-up, no raw samples in the JSON
    /// (all kept in memory, up to 100 000 per cell). Change the rest with `..`.
    pub fn new(mechanisms: &[&str], durations_ns: &[u64], quota: Quota) -> Self {
        Self {
            mechanisms: mechanisms.iter().map(|s| s.to_string()).collect(),
            durations_ns: durations_ns.to_vec(),
            loads: vec![0],
            timer_slacks_ns: vec![],
            quota,
            warmup: 0,
            rounds: 1,
            json_samples: 0,
            raw_cap: 100_000,
            focus: vec![],
            trace: false,
        }
    }

    /// The quota of the cell (mechanism, request, load): the first [`Focus`] rule that
    /// covers it, else `quota`; `None` when a rule leaves the mechanism out.
    pub fn cell_quota(&self, mechanism: &str, requested_ns: u64, load: usize) -> Option<Quota> {
        match self
            .focus
            .iter()
            .find(|f| f.requests_ns.contains(&requested_ns) && f.loads.contains(&load))
        {
            None => Some(self.quota),
            Some(f) if f.mechanisms.iter().any(|m| m == mechanism) => {
                Some(Quota::Iterations { count: f.count })
            }
            Some(_) => None,
        }
    }

    /// The cells it measures, in reporting order (mechanism, request, load): each with
    /// its quota. Requests a mechanism cannot express are not among them.
    pub fn planned_cells(&self) -> Vec<(&str, u64, usize, Quota)> {
        let mut out = Vec::new();
        for m in &self.mechanisms {
            for &d in &self.durations_ns {
                if crate::skip_reason(m, d).is_some() {
                    continue;
                }
                for &load in &self.loads {
                    if let Some(q) = self.cell_quota(m, d, load) {
                        out.push((m.as_str(), d, load, q));
                    }
                }
            }
        }
        out
    }
}

/// One measured cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SweepCell {
    /// Mechanism name.
    pub mechanism: String,
    /// Requested duration, ns.
    pub requested_ns: u64,
    /// Competing busy threads.
    pub load: usize,
    /// Timer slack in force while measuring, ns.
    pub timer_slack_ns: u64,
    /// Statistics of the measured samples (warm-up excluded).
    pub summary: Summary,
    /// The warm-up calls, in order: seed 000 saw the first `Sleep(0)` calls take
    /// 100–200 ms. Not in the statistics.
    pub first_calls_ns: Vec<u64>,
    /// Thread CPU time per call (CLOCK_THREAD_CPUTIME_ID), ns.
    pub cpu_ns_per_call: f64,
    /// Voluntary context switches per call (getrusage RUSAGE_THREAD).
    pub voluntary_csw_per_call: f64,
    /// Involuntary context switches per call.
    pub involuntary_csw_per_call: f64,
    /// Histogram of all samples: `[bucket upper bound ns, count]`, log buckets.
    pub histogram: Vec<[u64; 2]>,
    /// Samples per round, in round order (so raw samples can be assigned to rounds).
    pub round_counts: Vec<u64>,
    /// The 95 % intervals of its statistics over its rounds (`stats::units`): what a
    /// verdict on this cell rests on (absent in results written before them, and where
    /// not every sample was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<UnitIntervals>,
    /// The first raw samples in measurement order (at most `json_samples`).
    pub samples_ns: Vec<u64>,
    /// All raw samples kept in memory (for CSV); not serialized.
    #[serde(skip)]
    #[schemars(skip)]
    pub all_samples_ns: Vec<u64>,
    /// Where its wakes' lateness went (`--trace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Explanation>,
}

impl SweepCell {
    /// Its kernel account, when the sweep was traced.
    pub fn account(&self) -> Option<CellAccount<'_>> {
        Some(CellAccount {
            mechanism: (&self.mechanism).into(),
            requested_ns: self.requested_ns,
            load: self.load,
            timer_slack_ns: self.timer_slack_ns,
            explanation: self.explanation.as_ref()?,
        })
    }
}

/// A cell that was not measured, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkippedCell {
    /// Mechanism name.
    pub mechanism: String,
    /// Requested duration, ns.
    pub requested_ns: u64,
    /// Why.
    pub reason: String,
}

/// The result of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SweepData {
    /// What was asked for.
    pub config: SweepConfig,
    /// Measured cells, ordered by mechanism, slack, load, duration.
    pub cells: Vec<SweepCell>,
    /// Cells not measured (a mechanism that cannot express a duration).
    pub skipped: Vec<SkippedCell>,
    /// Whether the kernel was traced (`--trace`; absent without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracing: Option<Tracing>,
}

impl SweepData {
    /// The cell for (mechanism, requested, load, slack), if measured.
    pub fn cell(
        &self,
        mechanism: &str,
        requested_ns: u64,
        load: usize,
        slack: u64,
    ) -> Option<&SweepCell> {
        self.cells.iter().find(|c| {
            c.mechanism == mechanism
                && c.requested_ns == requested_ns
                && c.load == load
                && c.timer_slack_ns == slack
        })
    }
}

impl ResultData for SweepData {
    fn experiment(&self) -> &'static str {
        NAME
    }

    fn traced(&self) -> Option<TracedCells<'_>> {
        Some(TracedCells {
            subject: "the sweep's waits",
            on_request: true,
            tracing: self.tracing.as_ref()?,
            cells: self.cells.iter().filter_map(SweepCell::account).collect(),
        })
    }

    /// Every measured cell, keyed by mechanism, request and load; the timer slack joins
    /// the key only when some cell was measured under several slacks (so `--timer-slack
    /// 50us` and `--timer-slack 1ns` runs compare cell by cell).
    fn points(&self) -> Vec<Point> {
        let multi_slack = self.cells.iter().any(|c| {
            self.cells.iter().any(|d| {
                d.mechanism == c.mechanism
                    && d.requested_ns == c.requested_ns
                    && d.load == c.load
                    && d.timer_slack_ns != c.timer_slack_ns
            })
        });
        self.cells
            .iter()
            .filter(|c| c.summary.count > 0)
            .map(|c| {
                let mut key = vec![
                    KeyPart::text(&c.mechanism),
                    KeyPart::Ns(c.requested_ns),
                    KeyPart::text(format!("load {}", c.load)),
                ];
                if multi_slack {
                    key.extend([KeyPart::text("slack"), KeyPart::Ns(c.timer_slack_ns)]);
                }
                Point::of_summary(key, &c.summary).with_units(c.units.as_ref())
            })
            .collect()
    }

    fn samples(&self) -> Box<dyn Iterator<Item = Sample<'_>> + '_> {
        Box::new(self.cells.iter().flat_map(SweepCell::samples))
    }
}

impl SweepCell {
    /// `stat` of its samples with its interval over rounds where the cell holds one (else
    /// its pooled interval, which decides nothing); `None` where the sample cannot resolve
    /// the statistic.
    pub fn est(&self, stat: Stat) -> Option<Est> {
        Est::of(&self.summary, self.units.as_ref(), stat)
    }

    /// Its kept samples: the warm-up calls (round −1), then the measured ones, each
    /// assigned to its round (a loaded result keeps only the first `samples_ns`).
    pub fn samples(&self) -> impl Iterator<Item = Sample<'_>> + '_ {
        let sample = move |round: i64, index: usize, warmup: bool, value_ns: u64| Sample {
            series: &self.mechanism,
            requested_ns: self.requested_ns,
            load: self.load,
            timer_slack_ns: Some(self.timer_slack_ns),
            round,
            index: index as u64,
            warmup,
            metric: Metric::Elapsed,
            value_ns,
        };
        let kept = if self.all_samples_ns.is_empty() {
            &self.samples_ns
        } else {
            &self.all_samples_ns
        };
        let rounds = self
            .round_counts
            .iter()
            .enumerate()
            .flat_map(|(r, &n)| std::iter::repeat_n(r as i64, n as usize))
            .chain(std::iter::repeat(-1));
        let warmup = self.first_calls_ns.iter().enumerate();
        warmup.map(move |(k, &v)| sample(-1, k, true, v)).chain(
            rounds
                .zip(kept.iter().enumerate())
                .map(move |(r, (k, &v))| sample(r, k, false, v)),
        )
    }
}

/// Seed 000's 14 TimerTest requests in ns: 0, then 13 values geometrically spaced from
/// 1 ms to 1000 ms (1000^(k/12) ms, k = 0..=12, rounded to whole ms as `Sleep` takes
/// milliseconds): 0, 1, 2, 3, 6, 10, 18, 32, 56, 100, 178, 316, 562, 1000 ms.
pub fn timertest_durations() -> Vec<u64> {
    let mut v = vec![0u64];
    for k in 0..=12 {
        let ms = 1000f64.powf(k as f64 / 12.0).round() as u64;
        v.push(ms * 1_000_000);
    }
    v
}

/// The default durations: 0, 1 µs, 10 µs, 100 µs, 1 ms, 10 ms, 100 ms.
pub const DEFAULT_DURATIONS_NS: [u64; 7] = [
    0,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

impl SweepCell {
    /// The headings of [`SweepCell::quantiles`]: the columns the terminal's tables and
    /// the report's share.
    pub const QUANTILE_COLUMNS: [&'static str; 7] =
        ["n", "min", "p50", "p90", "p99", "p99.9", "max"];

    /// Its calls and their spread as a table writes them: the count, then the min, p50,
    /// p90, p99, p99.9 and max (ns) each by `fmt` (`None`: a quantile the sample cannot
    /// resolve).
    pub fn quantiles(&self, fmt: impl Fn(Option<f64>) -> String) -> [String; 7] {
        let s = &self.summary;
        [
            s.count.to_string(),
            fmt(Some(s.min_ns as f64)),
            fmt(Some(s.median_ns)),
            fmt(s.p90_ns),
            fmt(s.p99_ns),
            fmt(s.p999_ns),
            fmt(Some(s.max_ns as f64)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timertest_has_fourteen_geometric_values() {
        let v = timertest_durations();
        assert_eq!(v.len(), 14);
        assert_eq!(v[0], 0);
        assert_eq!(v[1], 1_000_000);
        assert_eq!(*v.last().unwrap(), 1_000_000_000);
        assert!(v.windows(2).all(|w| w[0] < w[1]), "{v:?}");
        assert_eq!(v[4], 6_000_000);
    }
}
