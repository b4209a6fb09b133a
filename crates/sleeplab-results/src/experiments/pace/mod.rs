//! `sleeplab pace`: a fixed-rate loop (seed 002's 60 FPS game loop, figure 1 and the CPU
//! table) run by every precise-sleep contender, interleaved in blocks.
//!
//! Each frame waits until its deadline on an absolute schedule (`block start + k·period`),
//! so every contender targets the same instants; the error of a frame is how late it
//! woke (`woke − deadline`, never negative for these strategies). CPU is the measuring
//! thread's CPU time over the wall time of its blocks. With `--load`, each level's busy
//! threads run while the contenders take their turns at that level.

pub mod evidence;
mod frontier;
mod render;
pub mod repeat;

pub use evidence::{Evidence, LateFrame};
pub use frontier::{Standing, frontier_sentence, standings};
pub use render::{
    cpu_with_interval, evidence_intro, evidence_table, late_causes_intro, late_causes_table,
    main_table, p99_interval, render,
};
pub use repeat::{PaceRun, RepeatRange};

use crate::{KeyPart, Metric, Point, ResultData, Sample};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab_account::{Explanation, Tracing};
use sleeplab_stats::{Ci, Est, Stat, Summary, Unit, UnitIntervals};

/// The experiment's name: on the command line, and the `experiment` tag of its result files.
pub const NAME: &str = "pace";

/// The default contenders of `pace`: the references (a plain sleep, a pure spin), the
/// seed's hybrid, SDL's, the spin_sleep crate, and ours.
pub const DEFAULT_STRATEGIES: [&str; 6] = [
    "std-sleep",
    "spin",
    "seed-hybrid",
    "sdl-precise",
    "spin-sleep",
    "precise",
];

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaceConfig {
    /// Contenders (names or settings such as `seed-hybrid:x=2`), in order.
    pub strategies: Vec<String>,
    /// Competing busy threads, one level after another (absent: no load, as in results
    /// written before load levels existed; an unloaded run writes its JSON as before).
    #[serde(default = "no_load", skip_serializing_if = "is_no_load")]
    pub loads: Vec<usize>,
    /// Frames per second.
    pub rate_hz: f64,
    /// Frame period, ns (1e9 / rate, rounded).
    pub period_ns: u64,
    /// Frames per contender.
    pub frames: u64,
    /// Frames per interleaved block.
    pub block: u64,
    /// Busy work per frame before waiting, ns (0 = none, as in the seed).
    pub work_ns: u64,
    /// Timer slack all contenders run under, ns (None = left as it was).
    pub timer_slack_ns: Option<u64>,
    /// Raw errors kept per contender in the JSON.
    pub json_samples: usize,
    /// Runs of the whole interleaved comparison (`--repeat`; absent: 1).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeat: u64,
    /// Whether to split each frame's lateness with the kernel's tracepoints
    /// (`--trace`; the first run's frames).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace: bool,
}

fn one() -> u64 {
    1
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

fn no_load() -> Vec<usize> {
    vec![0]
}

fn is_no_load(loads: &[usize]) -> bool {
    loads == [0]
}

fn is_zero(load: &usize) -> bool {
    *load == 0
}

/// One contender's run at one load level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaceResult {
    /// Contender name or setting.
    pub strategy: String,
    /// Competing busy threads while it ran (absent: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub load: usize,
    /// Frame error (`woke − deadline`), ns.
    pub error: Summary,
    /// Frames that woke more than one period late (a whole frame lost).
    pub missed_frames: u64,
    /// Ideal length of the run (frames × period), ns.
    pub ideal_total_ns: u64,
    /// Actual length: the sum over blocks of (last wake − block start), ns.
    pub actual_total_ns: u64,
    /// CPU time of the measuring thread as % of one core over the contender's blocks
    /// (without the CPU of the per-frame evidence snapshots, which is measured and taken
    /// out).
    pub cpu_percent: f64,
    /// Time spent in the spin phase (as the strategy reports it) as % of wall time.
    pub spin_percent: f64,
    /// Voluntary context switches per frame.
    pub voluntary_csw_per_frame: f64,
    /// Involuntary context switches per frame.
    pub involuntary_csw_per_frame: f64,
    /// Why frames were late: preempted while spinning, woken late, context switches and
    /// run-queue waits per frame (absent in results written before it existed, and
    /// written only when frames were observed, so older results round-trip unchanged).
    #[serde(default, skip_serializing_if = "Evidence::is_empty")]
    pub evidence: Evidence,
    /// Histogram of errors: `[bucket upper bound ns, count]`.
    pub histogram: Vec<[u64; 2]>,
    /// The first frame errors, ns, in order.
    pub samples_ns: Vec<u64>,
    /// Every kept frame error (for CSV); not serialized.
    #[serde(skip)]
    #[schemars(skip)]
    pub all_samples_ns: Vec<u64>,
    /// Where its frames' lateness went (`--trace`), its late frames (more than
    /// [`evidence::LATE_FRAME_NS`]) counted by their biggest component.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Explanation>,
    /// The 95 % intervals of its lateness statistics over its blocks (`stats::units`):
    /// what the frontier's verdicts rest on (absent in results written before them, and
    /// where not every frame was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<UnitIntervals>,
    /// The 95 % interval of its CPU over its blocks, % of one core (absent below 8
    /// blocks and in results written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ci_percent: Option<Ci>,
}

impl PaceResult {
    /// A result of `n` frames all `late` ns late at `cpu` % (tests), in blocks of 10
    /// frames, each block at `cpu` %: its intervals over blocks are the points (from 8
    /// blocks on).
    #[cfg(any(test, feature = "test-support"))]
    #[doc(hidden)]
    pub fn uniform(name: &str, load: usize, n: u64, late: u64, cpu: f64) -> Self {
        let mut rec = sleeplab_stats::Recorder::new(0, sleeplab_stats::RecorderConfig::default());
        for _ in 0..n {
            rec.record(late);
        }
        let counts: Vec<u64> = (0..n.div_ceil(10)).map(|b| 10.min(n - 10 * b)).collect();
        let units = UnitIntervals::of_counted(Unit::Block, rec.raw(), &counts);
        let k = counts.len();
        let cpu_ci = sleeplab_stats::ratio_ci(&vec![cpu; k], &vec![100.0; k]);
        Self {
            strategy: name.into(),
            load,
            error: rec.summary(),
            missed_frames: 0,
            ideal_total_ns: 0,
            actual_total_ns: 0,
            cpu_percent: cpu,
            spin_percent: 0.0,
            voluntary_csw_per_frame: 0.0,
            involuntary_csw_per_frame: 0.0,
            evidence: Evidence::new(),
            histogram: vec![],
            samples_ns: vec![],
            all_samples_ns: vec![],
            explanation: None,
            units,
            cpu_ci_percent: cpu_ci.map(|c| c.map(|v| 100.0 * v)),
        }
    }

    /// `stat` of its lateness with its interval over blocks where the result holds one
    /// (else its pooled interval, which decides nothing); `None` where the frames cannot
    /// resolve the statistic.
    pub fn est(&self, stat: Stat) -> Option<Est> {
        Est::of(&self.error, self.units.as_ref(), stat)
    }

    /// Its CPU, % of one core, with its interval over blocks where the result holds one
    /// (else a point value).
    pub fn cpu(&self) -> Est {
        match &self.units {
            Some(u) => Est::units(self.cpu_percent, self.cpu_ci_percent, Unit::Block, u.units),
            None => Est::point(self.cpu_percent),
        }
    }

    /// The contender's name, with its load level when there was one (`precise @ load 2`).
    pub fn label(&self) -> String {
        if self.load > 0 {
            format!("{} @ load {}", self.strategy, self.load)
        } else {
            self.strategy.clone()
        }
    }
}

/// The result of `pace`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaceData {
    /// What was run.
    pub config: PaceConfig,
    /// One entry per load level and contender, levels in config order, contenders in
    /// config order within a level: the first run's (with `--repeat`, the others are
    /// summarized in `runs`).
    pub results: Vec<PaceResult>,
    /// With `--repeat N` (N > 1): every run's p99, CPU and frontier verdict per
    /// contender and level, the first run included (absent for one run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<PaceRun>,
    /// With `--repeat N`: per contender and level, the range of its p99 and CPU across
    /// the runs and how often each verdict held.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeat: Vec<RepeatRange>,
    /// Whether the kernel was traced (`--trace`; absent without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracing: Option<Tracing>,
}

impl ResultData for PaceData {
    fn experiment(&self) -> &'static str {
        NAME
    }

    /// Each contender's frame lateness at the rate (and the load, when there was one, so
    /// keys of unloaded runs stay as they were).
    fn points(&self) -> Vec<Point> {
        self.results
            .iter()
            .filter(|r| r.error.count > 0)
            .map(|r| {
                let mut key = vec![
                    KeyPart::text(format!("{} at", r.strategy)),
                    KeyPart::Number(self.config.rate_hz),
                    KeyPart::text("Hz (lateness)"),
                ];
                if r.load > 0 {
                    key.push(KeyPart::text(format!("load {}", r.load)));
                }
                Point::of_summary(key, &r.error).with_units(r.units.as_ref())
            })
            .collect()
    }

    /// Every kept frame's lateness (a loaded result keeps only the first `samples_ns`).
    fn samples(&self) -> Box<dyn Iterator<Item = Sample<'_>> + '_> {
        Box::new(self.results.iter().flat_map(move |r| {
            let kept = if r.all_samples_ns.is_empty() {
                &r.samples_ns
            } else {
                &r.all_samples_ns
            };
            kept.iter().enumerate().map(move |(k, &v)| Sample {
                series: &r.strategy,
                requested_ns: self.config.period_ns,
                load: r.load,
                timer_slack_ns: self.config.timer_slack_ns,
                round: 0,
                index: k as u64,
                warmup: false,
                metric: Metric::Lateness,
                value_ns: v,
            })
        }))
    }
}
