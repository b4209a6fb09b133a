//! What readers of a saved result ask of an experiment's data, whatever the experiment
//! ([`ResultData`]): the points `compare` matches ([`Point`]), the raw samples of a
//! survey's CSV ([`Sample`]), the cells whose wakes were traced, and what it shows of
//! itself where no renderer draws it by hand (its [`View`] and its own findings).

use crate::Wording;
use sleeplab_account::TracedCells;
use sleeplab_stats::{Ci, Recorder, Sentence, Summary, UnitIntervals, View, units::ns, units::num};

/// What the readers of a saved result (`compare`, the survey's `samples.csv`, the
/// report) ask of an experiment's data, whatever the experiment.
pub trait ResultData {
    /// The experiment's name (the CLI's `Experiment::NAME`).
    fn experiment(&self) -> &'static str;

    /// The measurements `compare` matches between two results. Every experiment says
    /// what it has (an experiment with nothing comparable returns none, and says why).
    fn points(&self) -> Vec<Point>;

    /// Every kept per-call sample, for the survey's long-form `samples.csv`. None by
    /// default: most experiments keep summaries, or rows of their own (batches, ticks).
    fn samples(&self) -> Box<dyn Iterator<Item = Sample<'_>> + '_> {
        Box::new(std::iter::empty())
    }

    /// The cells whose kernel account the run traced, each with its account, the way
    /// [`points`](Self::points) gives its measurements: what the report's explain
    /// section, the `why-late` findings and the sentences read. `None` by default: a
    /// run not traced, or an experiment that does not trace into cells.
    fn traced(&self) -> Option<TracedCells<'_>> {
        None
    }

    /// What the experiment shows of its data, built once: the terminal prints it (the
    /// CLI's default render) and the report draws it as a section of its own; `hints`
    /// words what a sentence asks its reader to run. `None` by default: the experiments
    /// whose terminal output and report sections are drawn by hand.
    fn view(&self, _hints: Wording) -> Option<View> {
        None
    }

    /// The findings its data supports on its own, each a stable id (`advise-choice`)
    /// and its sentence with the claims that sentence makes: the report states them after
    /// the findings that read several experiments. None by default.
    fn findings(&self, _hints: Wording) -> Vec<(&'static str, Sentence)> {
        Vec::new()
    }
}

/// A recorder's histogram as result files keep it: `[bucket upper bound ns, count]`.
pub fn histogram(rec: &Recorder) -> Vec<[u64; 2]> {
    rec.histogram_buckets()
        .into_iter()
        .map(|(upper, count)| [upper, count])
        .collect()
}

/// One part of a [`Point`]'s key: words, or a number the reader formats in its units.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyPart {
    /// Words, as they are.
    Text(String),
    /// A duration, ns.
    Ns(u64),
    /// A plain number.
    Number(f64),
}

impl KeyPart {
    /// Words.
    pub fn text(s: impl Into<String>) -> Self {
        KeyPart::Text(s.into())
    }

    /// A key as text: its parts joined by spaces, numbers in the terminal's units.
    pub fn join(parts: &[KeyPart]) -> String {
        let words: Vec<String> = parts
            .iter()
            .map(|p| match p {
                KeyPart::Text(t) => t.clone(),
                KeyPart::Ns(v) => ns(*v as f64),
                KeyPart::Number(v) => num(*v),
            })
            .collect();
        words.join(" ")
    }
}

/// One comparable measurement: what it is, its median and its 99th percentile.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// What was measured, e.g. `nanosleep`, 1 µs, `load 0` (joined with spaces).
    pub key: Vec<KeyPart>,
    /// The sample size both statistics rest on (calls, frames, ticks; repetitions for
    /// `short`).
    pub n: u64,
    /// Median, ns.
    pub median_ns: f64,
    /// 95 % interval of the median, ns (`None` where the sample cannot bound it).
    pub median_ci_ns: Option<Ci>,
    /// 99th percentile, ns (`None` where the experiment has none, or where n cannot
    /// resolve it: fewer than 100).
    pub p99_ns: Option<f64>,
    /// 95 % interval of the 99th percentile, ns.
    pub p99_ci_ns: Option<Ci>,
    /// The intervals over the run's units (rounds, blocks) where the result holds them:
    /// what a comparison's verdict rests on (`None`: pooled intervals only, which decide
    /// nothing).
    pub units: Option<UnitIntervals>,
}

impl Point {
    /// The point of `key` read from a cell's summary: its count, median and p99 with
    /// their intervals (no intervals over units: [`Point::with_units`]).
    pub fn of_summary(key: Vec<KeyPart>, s: &Summary) -> Self {
        Self {
            key,
            n: s.count,
            median_ns: s.median_ns,
            median_ci_ns: s.median_ci_ns,
            p99_ns: s.p99_ns,
            p99_ci_ns: s.p99_ci_ns,
            units: None,
        }
    }

    /// The same point with its intervals over units.
    pub fn with_units(self, units: Option<&UnitIntervals>) -> Self {
        Self {
            units: units.cloned(),
            ..self
        }
    }
}

/// What a sample's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// How long a wait took (its overshoot is elapsed − requested).
    Elapsed,
    /// How late a wake-up was against its deadline (its own overshoot).
    Lateness,
}

impl Metric {
    /// The name in CSV files.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Elapsed => "elapsed",
            Metric::Lateness => "lateness",
        }
    }
}

/// One kept per-call sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample<'a> {
    /// The mechanism or strategy.
    pub series: &'a str,
    /// The requested duration (or period), ns.
    pub requested_ns: u64,
    /// Competing busy threads.
    pub load: usize,
    /// Timer slack in force, ns; `None` = the run's (its settings).
    pub timer_slack_ns: Option<u64>,
    /// Interleaved round (−1 for warm-up calls or when unknown).
    pub round: i64,
    /// Position within its series (warm-up calls and measured calls count apart).
    pub index: u64,
    /// A warm-up call, not in the statistics.
    pub warmup: bool,
    /// What the value is.
    pub metric: Metric,
    /// The value, ns.
    pub value_ns: u64,
}

impl Sample<'_> {
    /// How far beyond what was asked, ns: elapsed − requested, or the lateness itself.
    pub fn overshoot_ns(&self) -> i64 {
        match self.metric {
            Metric::Elapsed => self.value_ns as i64 - self.requested_ns as i64,
            Metric::Lateness => self.value_ns as i64,
        }
    }

    /// Whether it returned before the requested time (never for lateness).
    pub fn early(&self) -> bool {
        self.metric == Metric::Elapsed && self.value_ns < self.requested_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overshoot_and_early_follow_the_metric() {
        let s = Sample {
            series: "x",
            requested_ns: 1_000,
            load: 0,
            timer_slack_ns: None,
            round: 0,
            index: 0,
            warmup: false,
            metric: Metric::Elapsed,
            value_ns: 900,
        };
        assert_eq!((s.overshoot_ns(), s.early()), (-100, true));
        let late = Sample {
            metric: Metric::Lateness,
            ..s
        };
        assert_eq!((late.overshoot_ns(), late.early()), (900, false));
    }
}
