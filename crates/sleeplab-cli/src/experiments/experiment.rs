//! The shape every experiment shares: a plain config in, a result value out
//! ([`Experiment`]), and what readers of a saved result ask of its data
//! ([`ResultData`]: the points `compare` matches, the raw samples of a survey's CSV).

use super::{Context, Wording};
use crate::settings::RunSettings;
use sleeplab_account::TracedCells;
use sleeplab_stats::{Ci, Recorder, Summary, UnitIntervals, units::ns, units::num};

/// What one run of an experiment produced.
#[derive(Debug, Clone)]
pub struct Outcome<D> {
    /// The data (partial when interrupted).
    pub data: D,
    /// The settings of the measuring thread(s), as they were in force.
    pub settings: RunSettings,
    /// False when interrupted.
    pub complete: bool,
    /// Plain-language notes about the run (e.g. more busy threads than CPUs).
    pub notes: Vec<String>,
}

impl<D> Outcome<D> {
    /// An outcome without notes.
    pub fn new(data: D, settings: RunSettings, complete: bool) -> Self {
        Self {
            data,
            settings,
            complete,
            notes: Vec::new(),
        }
    }

    /// The outcome as the run under `ctx` ends: a stop requested at any point of the run
    /// makes it incomplete, whatever the experiment's own checks between waits saw (a
    /// stop while a probe is being listed kills it without passing one). The tail and the
    /// survey settle every outcome through here.
    pub fn settled(mut self, ctx: &Context) -> Self {
        self.complete &= !ctx.stopped();
        self
    }

    /// The run of an experiment with one measuring thread among `loads` busy threads:
    /// placed for the kernel's trace where `traced` ([`Context::placed_for_trace`]),
    /// `measure` on a thread named `name` ([`Context::on_measuring_thread`]), and the
    /// notes of its placement and of a load that fills the CPUs added.
    pub fn measure_placed(
        ctx: &Context,
        name: &str,
        traced: bool,
        loads: &[usize],
        measure: impl FnOnce(&Context) -> anyhow::Result<Self> + Send,
    ) -> anyhow::Result<Self>
    where
        D: Send,
    {
        let (ctx, placed) = &ctx.placed_for_trace(traced);
        let mut out = ctx.on_measuring_thread(name, || measure(ctx))?;
        out.notes.extend(placed.clone());
        out.notes.extend(super::load_note(
            loads,
            ctx.cpus,
            "the measuring thread competes for a CPU",
        ));
        Ok(out)
    }

    /// The same outcome around other data.
    pub fn map<T>(self, f: impl FnOnce(D) -> T) -> Outcome<T> {
        Outcome {
            data: f(self.data),
            settings: self.settings,
            complete: self.complete,
            notes: self.notes,
        }
    }
}

/// An experiment: a function from a plain config to a result value. Printing and saving
/// are separate: a command's tail (`commands::tail`) or a survey stage runs it, then
/// renders, wraps the data in the result envelope and saves it.
///
/// Implemented by each experiment's config type (`SweepConfig`, …): a plain value, with
/// no command-line types, built by the command from its flags or by the survey's plan.
/// The config says what to run; the implementation, how.
pub trait Experiment: Send + Sync + 'static {
    /// The name on the command line and the `experiment` tag of its result files.
    const NAME: &'static str;
    /// What a run measures; saved in the result file.
    type Data: ResultData + Send + 'static;

    /// Whether its terminal output ends with the host noise line (the experiments whose
    /// verdicts the host's noise can sway: pace, advise).
    const HOST_NOISE_LINE: bool = false;

    /// How many progress steps a run reports.
    fn steps(&self) -> u64;

    /// Runs the experiment: measures, reporting progress and watching the stop flag of
    /// `ctx`. Errors that are the user's to fix are `crate::error::UsageError`s (or
    /// `crate::settings::SettingError`s); they name values, never command-line flags.
    fn run(&self, ctx: &Context) -> anyhow::Result<Outcome<Self::Data>>;

    /// The terminal tables; a component's words follow `machine`, the result's
    /// (`sleeplab_account::Machine`: the host on a virtual machine, the hardware on bare metal), a
    /// hint's follow `hints` (the command layer's flags).
    fn render(data: &Self::Data, machine: sleeplab_account::Machine, hints: Wording) -> String;

    /// The CSV of the raw data (`--csv`); `None` (the default) when the experiment
    /// writes none.
    fn csv(_data: &Self::Data) -> Option<anyhow::Result<Vec<u8>>> {
        None
    }
}

/// What the readers of a saved result (`compare`, the survey's `samples.csv`, the
/// report) ask of an experiment's data, whatever the experiment.
pub trait ResultData {
    /// The experiment's name ([`Experiment::NAME`]).
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
    use crate::experiments::Stop;

    /// A stop requested during the run makes the outcome incomplete even when the
    /// experiment's own checks missed it; without one, the experiment's word stands.
    #[test]
    fn a_stop_during_the_run_settles_the_outcome_as_incomplete() {
        let ctx = |stopped: bool| Context::hidden().with_stop(Stop::when(move || stopped));
        let out = |complete| Outcome::new((), RunSettings::default(), complete);
        assert!(!out(true).settled(&ctx(true)).complete);
        assert!(out(true).settled(&ctx(false)).complete);
        assert!(!out(false).settled(&ctx(false)).complete);
    }

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
