//! What `sleeplab advise` measured and recommends, as its result keeps it: the case
//! ([`Need`]), every candidate as measured ([`Candidate`]), the recommendation
//! ([`Advice`]), the choice, a pure function of the candidates ([`choose`],
//! [`reason`]), and what the terminal and the report show of it ([`view()`]).

mod choice;
mod view;

pub use choice::{choose, reason, runner_up, runner_up_sentence};
pub use view::view;

use crate::experiments::tune::TuneData;
use crate::{Point, ResultData, Wording};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab_stats::{Ci, Sentence, UnitIntervals, View};

/// The experiment's name: on the command line, and the `experiment` tag of its result files.
pub const NAME: &str = "advise";

/// What the user needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Need {
    /// A periodic loop with this period.
    Period {
        /// Period, ns.
        period_ns: u64,
    },
    /// One-shot waits of this duration.
    Duration {
        /// Duration, ns.
        duration_ns: u64,
    },
}

/// One candidate's measured behaviour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Candidate {
    /// Strategy name (as in `sleeplab pace`).
    pub strategy: String,
    /// Timer slack it ran under, ns.
    pub timer_slack_ns: u64,
    /// Waits measured.
    pub waits: u64,
    /// Median lateness (woke − deadline), ns.
    pub p50_ns: f64,
    /// 95 % interval of the median lateness, ns (`stats::quantile_ci`).
    #[serde(default)]
    pub p50_ci_ns: Option<Ci>,
    /// 99th percentile lateness, ns; `null` below 100 waits (the quantile rule): such a
    /// candidate cannot be shown to meet a p99 tolerance.
    pub p99_ns: Option<f64>,
    /// 95 % interval of the p99 lateness, ns; a candidate meets the tolerance only
    /// where this lies below it (open above under 368 waits: never shown to meet).
    #[serde(default)]
    pub p99_ci_ns: Option<Ci>,
    /// Largest lateness, ns.
    pub max_ns: u64,
    /// CPU of one core, %.
    pub cpu_percent: f64,
    /// The 95 % intervals of its lateness statistics over its blocks (`stats::units`):
    /// what "meets" rests on (absent in results written before them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<UnitIntervals>,
    /// The 95 % interval of its CPU over its blocks, % of one core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ci_percent: Option<Ci>,
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Advice {
    /// Index into the candidates of the recommendation.
    pub chosen: usize,
    /// Whether the recommendation meets the tolerance: its p99's 95 % interval lies
    /// below it (false: no candidate was shown to; the best p99 is recommended instead).
    pub meets_tolerance: bool,
    /// The reasoning in one paragraph, with the numbers.
    pub reason: String,
    /// A Rust snippet using the sleeplab library (or std) for the recommendation.
    pub snippet: String,
    /// The best machine setting for the recommendation, from `data.tune` (`advise
    /// --tune`): what it did to its p99 and cost the machine, or that no setting lowered
    /// it; absent without a tune measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
}

/// The result of `advise`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AdviseData {
    /// The case.
    pub need: Need,
    /// Acceptable p99 lateness, ns.
    pub tolerance_ns: u64,
    /// Measurement time per candidate, ns.
    pub seconds_ns: u64,
    /// Every candidate, as measured.
    pub candidates: Vec<Candidate>,
    /// The recommendation.
    pub advice: Advice,
    /// The tune measurement of the recommendation (`advise --tune`): as is against each
    /// per-process setting that applies, at the case's wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tune: Option<TuneData>,
}

impl ResultData for AdviseData {
    fn experiment(&self) -> &'static str {
        NAME
    }

    /// None: the candidates are measured for one case only; `pace` and `cpu` results
    /// compare the same strategies across runs.
    fn points(&self) -> Vec<Point> {
        Vec::new()
    }

    fn view(&self, _hints: Wording) -> Option<View> {
        Some(view(self))
    }

    /// The choice, its reasoning recomputed from the candidates with every claim
    /// (the saved `reason` is its text as the run printed it); none where nothing was
    /// measured.
    fn findings(&self, hints: Wording) -> Vec<(&'static str, Sentence)> {
        if self.candidates.get(self.advice.chosen).is_none() {
            return Vec::new();
        }
        let s = reason(
            &self.candidates,
            self.tolerance_ns,
            self.advice.chosen,
            self.advice.meets_tolerance,
            hints,
        );
        vec![("advise-choice", s)]
    }
}
