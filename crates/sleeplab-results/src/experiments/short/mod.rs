//! `sleeplab short`: what a zero and a minimal sleep really cost, for every wait
//! mechanism (seed 001, "How long do short sleeps actually take?").
//!
//! The method is the seed's, made explicit:
//!
//! * **Batches.** Each measurement is a batch of calls timed as a whole (clock read,
//!   N calls, clock read) and divided by N. N is `--batch` (3000, as in the seed), shrunk
//!   for expensive calls so that one batch takes about `--batch-time` (see
//!   [`batch_size`]); the size is fixed per cell before the first repetition, from a
//!   calibration run that doubles as warm-up.
//! * **Ground truth.** The same loop with an empty body that the compiler cannot remove
//!   (`std::hint::black_box`) is the measurement floor. Every batch is paired with an
//!   empty batch of the same length run just before it; figures are shown raw and with
//!   the median of the cell's paired floors subtracted ("net"; the median, so one tiny
//!   empty loop hit by a host stall cannot make a cost negative). A floor cell at the
//!   full batch length is also measured on its own (the seed's "604 ± 44 ns per 3000"),
//!   and so is one trivial system call (`getppid`), the yardstick for "did it enter the
//!   kernel at all?".
//! * **Repetitions.** At least 20, interleaved: repetition-major, and within a
//!   repetition every timer slack block, then every cell in an order shuffled by a seeded
//!   RNG. The mean per call gets a 99.9 % confidence interval by Student's t over the
//!   per-repetition per-call means (df = repetitions − 1); min and median are of the same
//!   per-repetition means.
//! * **Costs.** CPU time and voluntary/involuntary context switches of the measuring
//!   thread around each batch (`getrusage(RUSAGE_THREAD)`), per call.

pub mod findings;

pub use findings::{Finding, Outcome, findings};

use crate::experiments::sweep::SkippedCell;
use crate::experiments::{KeyPart, Point, ResultData};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab::wait::Mechanism;
use sleeplab_stats::{Ci, Unit, UnitIntervals, ci_sorted, mean_ci};

/// The experiment's name: on the command line, and the `experiment` tag of its result files.
pub const NAME: &str = "short";

/// Calls per batch by default: the seed's 3000.
pub const DEFAULT_BATCH: u64 = 3000;
/// Default time cap of one batch: 20 ms, so that the defaults finish in well under 30 s.
pub const DEFAULT_BATCH_TIME_NS: u64 = 20_000_000;
/// Fewest calls in a batch shrunk by the time cap.
pub const MIN_BATCH: u64 = 10;
/// Default repetitions: the seed's "at least 20".
pub const DEFAULT_REPETITIONS: u64 = 20;
/// Confidence level of every interval.
pub const CONFIDENCE: f64 = 0.999;
/// Name of the floor (ground-truth) reference cell.
pub const FLOOR: &str = "floor";
/// Name of the trivial-system-call reference cell.
pub const SYSCALL: &str = "getppid";

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShortConfig {
    /// Mechanisms, in order (each at 0 and at its smallest unit, where it accepts them).
    pub mechanisms: Vec<String>,
    /// Timer slack values to run under, ns; empty = leave the thread's slack alone.
    pub timer_slacks_ns: Vec<u64>,
    /// Calls per batch at most (the seed: 3000).
    pub batch: u64,
    /// Time cap of one batch, ns (0 = none: every batch has `batch` calls).
    pub batch_time_ns: u64,
    /// Fewest calls in a batch shrunk by the time cap.
    pub min_batch: u64,
    /// Interleaved repetitions of every cell.
    pub repetitions: u64,
    /// Seed of the RNG that shuffles the cell order in each repetition.
    pub seed: u64,
    /// Confidence level of the intervals (0.999).
    pub confidence: f64,
}

/// One batch: `calls` calls timed as a whole, with its paired empty loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BatchRecord {
    /// Repetition (0-based).
    pub repetition: u64,
    /// Position in the repetition's (shuffled) order within its slack block.
    pub position: u64,
    /// Calls in the batch.
    pub calls: u64,
    /// Elapsed time of the whole batch (clock read, calls, clock read), ns.
    pub elapsed_ns: u64,
    /// Elapsed time of the empty loop of the same length run just before, ns (0 for
    /// the floor cell itself).
    pub floor_elapsed_ns: u64,
    /// Thread CPU time during the batch, ns.
    pub cpu_ns: u64,
    /// Voluntary context switches during the batch (the thread blocked).
    pub voluntary_csw: u64,
    /// Involuntary context switches during the batch (it was preempted, or yielded).
    pub involuntary_csw: u64,
}

impl BatchRecord {
    /// Elapsed per call, ns.
    pub fn per_call_ns(&self) -> f64 {
        self.elapsed_ns as f64 / self.calls.max(1) as f64
    }

    /// The paired floor per call, ns.
    pub fn floor_per_call_ns(&self) -> f64 {
        self.floor_elapsed_ns as f64 / self.calls.max(1) as f64
    }
}

/// Statistics of per-repetition per-call values (ns).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct RepStats {
    /// Number of repetitions.
    pub n: u64,
    /// Mean, ns.
    pub mean_ns: f64,
    /// Sample standard deviation (n − 1), ns.
    pub stddev_ns: f64,
    /// Half-width of the confidence interval of the mean, t(conf, n−1)·sd/√n, ns
    /// (`None` for fewer than 2 repetitions).
    pub ci_half_width_ns: Option<f64>,
    /// Lower end of the interval, ns.
    pub ci_low_ns: Option<f64>,
    /// Upper end of the interval, ns.
    pub ci_high_ns: Option<f64>,
    /// Smallest value, ns.
    pub min_ns: f64,
    /// Median (mean of the two middle values for an even count), ns.
    pub median_ns: f64,
    /// 95 % interval of the median, ns (`stats::quantile_ci`; `null` under 6
    /// repetitions).
    #[serde(default)]
    pub median_ci_ns: Option<Ci>,
    /// Largest value, ns.
    pub max_ns: f64,
}

impl RepStats {
    /// Statistics of `values` with a `confidence` interval of the mean (Student t).
    pub fn of(values: &[f64], confidence: f64) -> Self {
        use statrs::statistics::{Data, Median, Statistics};
        if values.is_empty() {
            return Self::default();
        }
        let n = values.len() as u64;
        let mean = Statistics::mean(values);
        let sd = if n > 1 {
            Statistics::std_dev(values)
        } else {
            0.0
        };
        let ci = mean_ci(mean, sd, n, confidence);
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        Self {
            n,
            mean_ns: mean,
            stddev_ns: sd,
            ci_half_width_ns: ci.map(|(lo, hi)| (hi - lo) / 2.0),
            ci_low_ns: ci.map(|c| c.0),
            ci_high_ns: ci.map(|c| c.1),
            min_ns: Statistics::min(values),
            median_ns: Data::new(values.to_vec()).median(),
            median_ci_ns: ci_sorted(&sorted, 0.5, |v| v),
            max_ns: Statistics::max(values),
        }
    }

    /// The interval (the mean itself when there is none).
    pub fn interval(&self) -> (f64, f64) {
        (
            self.ci_low_ns.unwrap_or(self.mean_ns),
            self.ci_high_ns.unwrap_or(self.mean_ns),
        )
    }

    /// Whether the two intervals overlap.
    pub fn overlaps(&self, other: &RepStats) -> bool {
        let (a_lo, a_hi) = self.interval();
        let (b_lo, b_hi) = other.interval();
        a_lo <= b_hi && b_lo <= a_hi
    }
}

/// One measured cell: a mechanism at a requested duration under one timer slack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShortCell {
    /// Mechanism name (or [`FLOOR`] / [`SYSCALL`] for the reference cells).
    pub mechanism: String,
    /// Requested duration, ns (0, or the mechanism's smallest unit).
    pub requested_ns: u64,
    /// Timer slack in force while measuring, ns.
    pub timer_slack_ns: u64,
    /// Calls per batch (fixed for the cell).
    pub batch: u64,
    /// Cost of one call in the calibration that chose `batch` (the cheaper of two
    /// back-to-back batches of about 2 ms), ns.
    pub calibration_ns_per_call: f64,
    /// Per call minus the cell's floor (the median of its paired empty loops), over
    /// repetitions: the headline figure.
    pub net: RepStats,
    /// Per call, raw, over repetitions.
    pub raw: RepStats,
    /// The paired empty loop per call, over repetitions; its median is subtracted.
    pub floor: RepStats,
    /// Thread CPU time per call, ns.
    pub cpu_ns_per_call: f64,
    /// Voluntary context switches per call.
    pub voluntary_csw_per_call: f64,
    /// Involuntary context switches per call.
    pub involuntary_csw_per_call: f64,
    /// Every batch, in measurement order.
    pub batches: Vec<BatchRecord>,
}

impl ShortCell {
    /// Builds a cell's statistics from its batches (a pure function of them).
    pub fn from_batches(
        mechanism: &str,
        requested_ns: u64,
        timer_slack_ns: u64,
        batch: u64,
        calibration_ns_per_call: f64,
        batches: Vec<BatchRecord>,
        confidence: f64,
    ) -> Self {
        let raw: Vec<f64> = batches.iter().map(BatchRecord::per_call_ns).collect();
        let floor: Vec<f64> = batches.iter().map(BatchRecord::floor_per_call_ns).collect();
        let floor = RepStats::of(&floor, confidence);
        // The median of the paired floors: one tiny empty loop hit by a stall must not
        // make a repetition's net cost negative.
        let floor_ns = if floor.n > 0 { floor.median_ns } else { 0.0 };
        let net: Vec<f64> = raw.iter().map(|r| r - floor_ns).collect();
        let calls = batches.iter().map(|b| b.calls).sum::<u64>().max(1) as f64;
        let per_call =
            |f: fn(&BatchRecord) -> u64| batches.iter().map(f).sum::<u64>() as f64 / calls;
        Self {
            mechanism: mechanism.to_string(),
            requested_ns,
            timer_slack_ns,
            batch,
            calibration_ns_per_call,
            net: RepStats::of(&net, confidence),
            raw: RepStats::of(&raw, confidence),
            floor,
            cpu_ns_per_call: per_call(|b| b.cpu_ns),
            voluntary_csw_per_call: per_call(|b| b.voluntary_csw),
            involuntary_csw_per_call: per_call(|b| b.involuntary_csw),
            batches,
        }
    }
}

/// The result of `sleeplab short`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShortData {
    /// What was asked for.
    pub config: ShortConfig,
    /// Measured cells, ordered by slack, then mechanism, then requested duration.
    pub cells: Vec<ShortCell>,
    /// The reference cells per slack: the empty loop at the full batch length
    /// ([`FLOOR`], its net equals its raw) and one trivial system call ([`SYSCALL`]).
    pub references: Vec<ShortCell>,
    /// Cells not measured (e.g. timerfd at 0: a zero timer is a disarmed timer).
    pub skipped: Vec<SkippedCell>,
    /// Seed 001's four Linux findings, checked against these numbers, per slack.
    pub findings: Vec<Finding>,
}

impl ShortData {
    /// The cell for (mechanism, requested, slack), if measured.
    pub fn cell(&self, mechanism: &str, requested_ns: u64, slack: u64) -> Option<&ShortCell> {
        self.cells.iter().find(|c| {
            c.mechanism == mechanism && c.requested_ns == requested_ns && c.timer_slack_ns == slack
        })
    }

    /// The reference cell `name` ([`FLOOR`] or [`SYSCALL`]) under `slack`.
    pub fn reference(&self, name: &str, slack: u64) -> Option<&ShortCell> {
        self.references
            .iter()
            .find(|c| c.mechanism == name && c.timer_slack_ns == slack)
    }

    /// The timer slacks measured, in measurement order.
    pub fn slacks(&self) -> Vec<u64> {
        let mut v: Vec<u64> = Vec::new();
        for c in self.cells.iter().chain(&self.references) {
            if !v.contains(&c.timer_slack_ns) {
                v.push(c.timer_slack_ns);
            }
        }
        v
    }
}

impl ResultData for ShortData {
    fn experiment(&self) -> &'static str {
        NAME
    }

    /// Each cell's net cost per call: the median over repetitions (a mean per batch has
    /// no p99).
    fn points(&self) -> Vec<Point> {
        self.cells
            .iter()
            .map(|c| Point {
                key: vec![
                    KeyPart::text(&c.mechanism),
                    KeyPart::Ns(c.requested_ns),
                    KeyPart::text("slack"),
                    KeyPart::Ns(c.timer_slack_ns),
                    KeyPart::text("(net cost)"),
                ],
                n: c.net.n,
                median_ns: c.net.median_ns,
                median_ci_ns: c.net.median_ci_ns,
                p99_ns: None,
                p99_ci_ns: None,
                // The median over repetitions (each a batch's mean) is a statistic over
                // units already: its interval is their order statistics.
                units: Some(UnitIntervals {
                    unit: Unit::Block,
                    units: c.net.n,
                    median_ci_ns: c.net.median_ci_ns,
                    p90_ci_ns: None,
                    p99_ci_ns: None,
                    p999_ci_ns: None,
                    mean_ci_ns: None,
                }),
            })
            .collect()
    }
}

/// The smallest non-zero request a mechanism can express: its API's unit (1 ns, 1 µs
/// for `select`, 1 ms for `poll`/`epoll`), at least its minimum.
pub fn minimal_ns(m: &Mechanism) -> u64 {
    m.unit_ns.max(m.min_ns).max(1)
}

/// The requests measured for a mechanism: 0 and [`minimal_ns`], where it accepts them,
/// and the ones skipped with the reason.
pub fn requests(m: &Mechanism) -> (Vec<u64>, Vec<SkippedCell>) {
    let mut measured = Vec::new();
    let mut skipped = Vec::new();
    for ns in [0, minimal_ns(m)] {
        match crate::skip_reason(m.name, ns) {
            None => measured.push(ns),
            Some(reason) => skipped.push(SkippedCell {
                mechanism: m.name.to_string(),
                requested_ns: ns,
                reason,
            }),
        }
    }
    (measured, skipped)
}

/// Calls per batch for a call that costs about `per_call_ns`: as many as fit in
/// `time_cap_ns` (no cap when 0), at most `max`, at least `min` (and at least 1).
pub fn batch_size(per_call_ns: f64, max: u64, time_cap_ns: u64, min: u64) -> u64 {
    let max = max.max(1);
    let min = min.clamp(1, max);
    if time_cap_ns == 0 || !per_call_ns.is_finite() || per_call_ns <= 0.0 {
        return max;
    }
    let fit = (time_cap_ns as f64 / per_call_ns).floor();
    if fit >= max as f64 {
        max
    } else {
        (fit as u64).clamp(min, max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(elapsed: u64, floor: u64, calls: u64) -> BatchRecord {
        BatchRecord {
            repetition: 0,
            position: 0,
            calls,
            elapsed_ns: elapsed,
            floor_elapsed_ns: floor,
            cpu_ns: 0,
            voluntary_csw: 0,
            involuntary_csw: 0,
        }
    }

    #[test]
    fn rep_stats_by_hand() {
        // 10, 12, 14, 16, 18: mean 14, sd √10 = 3.16228, t(0.999, 4) = 8.61030,
        // half width = 8.61030 · 3.16228 / √5 = 12.1768.
        let s = RepStats::of(&[18.0, 10.0, 14.0, 12.0, 16.0], 0.999);
        assert_eq!(s.n, 5);
        assert!((s.mean_ns - 14.0).abs() < 1e-12);
        assert!((s.stddev_ns - 10f64.sqrt()).abs() < 1e-12);
        let h = s.ci_half_width_ns.unwrap();
        assert!((h - 12.1768).abs() < 1e-3, "{h}");
        assert!((s.ci_low_ns.unwrap() - (14.0 - h)).abs() < 1e-9);
        assert!((s.ci_high_ns.unwrap() - (14.0 + h)).abs() < 1e-9);
        assert_eq!((s.min_ns, s.median_ns, s.max_ns), (10.0, 14.0, 18.0));
    }

    #[test]
    fn rep_stats_twenty_repetitions() {
        // 1..=20: mean 10.5, sd = √35 = 5.91608, t(0.999, 19) = 3.88340,
        // half width = 3.88340 · 5.91608 / √20 = 5.13729; median (10 + 11)/2.
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        let s = RepStats::of(&v, 0.999);
        assert!((s.mean_ns - 10.5).abs() < 1e-12);
        assert!((s.stddev_ns - 35f64.sqrt()).abs() < 1e-12);
        assert!((s.ci_half_width_ns.unwrap() - 5.13729).abs() < 1e-3);
        assert_eq!(s.median_ns, 10.5);
        assert_eq!(s.min_ns, 1.0);
    }

    #[test]
    fn rep_stats_degenerate() {
        let one = RepStats::of(&[7.0], 0.999);
        assert_eq!((one.n, one.mean_ns, one.median_ns), (1, 7.0, 7.0));
        assert!(one.ci_half_width_ns.is_none());
        assert_eq!(one.interval(), (7.0, 7.0));
        assert_eq!(RepStats::of(&[], 0.999).n, 0);
        // Identical values: zero-width interval.
        let same = RepStats::of(&[5.0; 4], 0.999);
        assert_eq!(same.ci_half_width_ns, Some(0.0));
    }

    #[test]
    fn overlap() {
        let a = RepStats::of(&[10.0, 12.0, 14.0], 0.999);
        let b = RepStats::of(&[13.0, 15.0, 17.0], 0.999);
        let far = RepStats::of(&[1000.0, 1000.5, 1001.0], 0.999);
        assert!(a.overlaps(&b) && b.overlaps(&a));
        assert!(!a.overlaps(&far) && !far.overlaps(&a));
    }

    #[test]
    fn floor_median_is_subtracted() {
        // Three repetitions of 100 calls: 10 000, 12 000, 14 000 ns elapsed → raw 100,
        // 120, 140 ns/call; paired floors 100, 300, 200 ns → 1, 3, 2 ns/call, median 2;
        // net 98, 118, 138.
        let batches = vec![
            batch(10_000, 100, 100),
            batch(12_000, 300, 100),
            batch(14_000, 200, 100),
        ];
        let c = ShortCell::from_batches("nanosleep", 1, 50_000, 100, 0.0, batches, 0.999);
        assert!((c.raw.mean_ns - 120.0).abs() < 1e-9);
        assert!((c.floor.mean_ns - 2.0).abs() < 1e-9);
        assert!((c.floor.median_ns - 2.0).abs() < 1e-9);
        assert!((c.floor.stddev_ns - 1.0).abs() < 1e-9);
        assert!((c.net.mean_ns - 118.0).abs() < 1e-9);
        assert_eq!(
            (c.net.min_ns, c.net.median_ns, c.net.max_ns),
            (98.0, 118.0, 138.0)
        );
        // Subtracting a constant keeps the spread: sd 20, the same CI width as raw.
        assert!((c.net.stddev_ns - 20.0).abs() < 1e-9);
        assert_eq!(c.net.ci_half_width_ns, c.raw.ci_half_width_ns);
        // t(0.999, 2) = 31.5991 → half width 31.5991 · 20 / √3 = 364.875.
        assert!((c.net.ci_half_width_ns.unwrap() - 364.875).abs() < 1e-2);
    }

    #[test]
    fn a_stalled_floor_loop_does_not_make_costs_negative() {
        // The third floor loop was preempted for 1 ms (10 µs per call); the median
        // floor (2 ns) ignores it.
        let batches = vec![
            batch(500, 200, 100),
            batch(600, 200, 100),
            batch(500, 1_000_000, 100),
            batch(600, 300, 100),
        ];
        let c = ShortCell::from_batches("pselect", 0, 50_000, 100, 0.0, batches, 0.999);
        assert!((c.floor.median_ns - 2.5).abs() < 1e-9);
        assert!((c.net.mean_ns - (5.5 - 2.5)).abs() < 1e-9);
        assert!(c.net.min_ns > 0.0);
    }

    #[test]
    fn the_floor_cell_is_not_subtracted_from_itself() {
        let c = ShortCell::from_batches(FLOOR, 0, 1, 3000, 0.0, vec![batch(900, 0, 3000)], 0.999);
        assert_eq!(c.net, c.raw);
        assert!((c.raw.mean_ns - 0.3).abs() < 1e-12);
    }

    #[test]
    fn per_call_costs() {
        let mut a = batch(1_000, 0, 10);
        a.cpu_ns = 500;
        a.voluntary_csw = 10;
        a.involuntary_csw = 1;
        let mut b = batch(3_000, 0, 30);
        b.cpu_ns = 1_500;
        b.voluntary_csw = 30;
        let c = ShortCell::from_batches("x", 0, 1, 10, 0.0, vec![a, b], 0.999);
        assert!((c.cpu_ns_per_call - 50.0).abs() < 1e-12);
        assert!((c.voluntary_csw_per_call - 1.0).abs() < 1e-12);
        assert!((c.involuntary_csw_per_call - 1.0 / 40.0).abs() < 1e-12);
    }

    #[test]
    fn requests_per_mechanism() {
        use sleeplab::wait::find;
        let r = |n| requests(find(n).unwrap());
        assert_eq!(r("nanosleep").0, vec![0, 1]);
        assert_eq!(r("select").0, vec![0, 1_000]);
        assert_eq!(r("poll").0, vec![0, 1_000_000]);
        assert_eq!(r("epoll").0, vec![0, 1_000_000]);
        let (m, s) = r("timerfd");
        assert_eq!(m, vec![1]);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].requested_ns, 0);
        let (m, s) = r("yield");
        assert_eq!(m, vec![0]);
        assert_eq!(s[0].requested_ns, 1);
    }

    #[test]
    fn batch_sizes() {
        // Cheap calls: the full batch.
        assert_eq!(batch_size(100.0, 3000, 20_000_000, 10), 3000);
        // 60 µs calls: 20 ms / 60 µs = 333.
        assert_eq!(batch_size(60_000.0, 3000, 20_000_000, 10), 333);
        // 1 ms calls: 20, and never fewer than the minimum.
        assert_eq!(batch_size(1_000_000.0, 3000, 20_000_000, 10), 20);
        assert_eq!(batch_size(10_000_000.0, 3000, 20_000_000, 10), 10);
        // No cap, or a nonsense estimate: the full batch.
        assert_eq!(batch_size(1e9, 3000, 0, 10), 3000);
        assert_eq!(batch_size(f64::NAN, 3000, 20_000_000, 10), 3000);
        // A batch smaller than the minimum stays as asked.
        assert_eq!(batch_size(1e9, 4, 1_000, 10), 4);
    }
}
