//! `sleeplab tune`: what changing a setting of this machine does to the same waits, and
//! what it costs the whole machine.
//!
//! Every setting that applies here (the CLI's `tuning::catalogue`) is an *arm*, beside
//! "as is" (nothing changed). Each round visits every arm once, in an order rotated
//! round by round: the arm's setting is put in force, every cell (a mechanism at a
//! requested duration) waits for its share of the round, the setting is undone
//! (system-wide ones through the journal). A round is the unit of the intervals
//! (`stats::units`): p50 and p99 of each arm's cells over the rounds, their change
//! against as is (the interval of the difference), and the CPU the whole machine burnt
//! while the arm ran (all CPUs' busy time from `/proc/stat`, helper threads included,
//! plus the time idle CPUs spent in a polling idle state, which `/proc/stat` books as
//! idle: holding `/dev/cpu_dma_latency` at 0 or raising haltpoll's window makes every
//! idle vCPU spin), with its change against as is.
//!
//! The change of a cell's p50 or p99 against as is is *paired* over rounds: each round
//! gives the difference between the arm's statistic and as is's in the same round, and
//! the interval is over those differences ([`sleeplab_stats::paired_ci`]), which
//! cancels what the round's moment did to both. Where a round cannot resolve the
//! statistic (a p99 of fewer than 100 waits), the change falls back to the difference of
//! the arms' values, its interval from each arm's own interval over rounds.
//!
//! The verdict on a cell is on its p99's change: *helps* where its interval lies below
//! zero, *hurts* where above, *no effect* where it lies within ±[`NO_EFFECT_SHARE`] of
//! as is's p99, else *undecided* ([`verdict_of_change`]).

mod change;
pub mod sentence;

pub use change::{change_est, judge, verdict, verdict_of_change};

use crate::experiments::{Point, ResultData};
use crate::setting_info::{BootSetting, Scope, SettingInfo, Unavailable};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab_stats::{Ci, Est, Unit, UnitIntervals, tail_quantile};

/// The experiment's name: on the command line, and the `experiment` tag of its result files.
pub const NAME: &str = "tune";

/// One mechanism at one requested duration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CellSpec {
    /// The mechanism or strategy (as in `sleeplab list`).
    pub mechanism: String,
    /// The requested duration, ns.
    pub requested_ns: u64,
}

/// The default cells: three ways of sleeping at 100 µs and 1 ms, and `precise` at 60 Hz.
pub fn default_cells() -> Vec<CellSpec> {
    let mut cells = Vec::new();
    for m in ["clock-nanosleep-abs", "timerfd", "epoll-pwait2"] {
        for d in [100_000, 1_000_000] {
            cells.push(CellSpec {
                mechanism: m.into(),
                requested_ns: d,
            });
        }
    }
    cells.push(CellSpec {
        mechanism: "precise".into(),
        requested_ns: 16_666_667,
    });
    cells
}

/// The default rounds: enough for intervals over rounds (`stats::units::MIN_UNITS`).
pub const DEFAULT_ROUNDS: u64 = 8;
/// Waiting time per cell, arm and round, ns (full run).
pub const BUDGET_NS: u64 = 150_000_000;
/// The same for `--quick`, ns.
pub const QUICK_BUDGET_NS: u64 = 25_000_000;
/// The most waits per cell, arm and round.
pub const MAX_WAITS: u64 = 2_000;
/// The fewest.
pub const MIN_WAITS: u64 = 3;
/// "No effect": the interval of the p99's change within ± this share of as is's p99.
pub const NO_EFFECT_SHARE: f64 = 0.10;
/// The as-is arm's name.
pub const AS_IS: &str = "as-is";

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TuneConfig {
    /// The cells every arm waits in.
    pub cells: Vec<CellSpec>,
    /// The settings to try by name (`None`: every one that applies).
    pub settings: Option<Vec<String>>,
    /// Whether system-wide settings are tried (root only; the survey asks for them only
    /// with `--tune-system`).
    pub system: bool,
    /// Rounds.
    pub rounds: u64,
    /// Waiting time per cell, arm and round, ns.
    pub budget_ns: u64,
    /// The CPU the one-CPU settings (pin, keep-awake, IRQ affinity) are about.
    pub cpu: usize,
}

impl TuneConfig {
    /// Waits of `cell` per arm and round.
    pub fn waits(&self, requested_ns: u64) -> u64 {
        (self.budget_ns / requested_ns.max(1_000)).clamp(MIN_WAITS, MAX_WAITS)
    }

    /// How long a run takes with `arms` arms (as is included), ns: every cell's waits
    /// and one warm-up wait per arm and round.
    pub fn estimate_ns(&self, arms: u64) -> u64 {
        let per_round: u64 = self
            .cells
            .iter()
            .map(|c| (self.waits(c.requested_ns) + 1) * c.requested_ns.max(20_000))
            .sum();
        per_round * arms * self.rounds
    }
}

/// The verdict on an arm's cell against as is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The interval of its p99's change lies below zero.
    Helps,
    /// Above zero.
    Hurts,
    /// The interval of the p99's change lies within ±10 % of as is's p99.
    NoEffect,
    /// None of these: the intervals overlap, are missing, or rest on too few rounds.
    Undecided,
}

impl Verdict {
    /// As printed: `helps`, `hurts`, `no effect`, `–`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Helps => "helps",
            Verdict::Hurts => "hurts",
            Verdict::NoEffect => "no effect",
            Verdict::Undecided => "–",
        }
    }
}

/// One cell of one arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ArmCell {
    /// The mechanism.
    pub mechanism: String,
    /// The requested duration, ns.
    pub requested_ns: u64,
    /// Waits measured.
    pub waits: u64,
    /// Median lateness (elapsed − requested), ns; `null` without waits.
    pub p50_ns: Option<f64>,
    /// 99th percentile lateness, ns; `null` below 100 waits.
    pub p99_ns: Option<f64>,
    /// The intervals over rounds (`null` intervals below 8 rounds).
    pub units: Option<UnitIntervals>,
    /// Each round's median lateness, ns, in round order (`null` where the round's waits
    /// cannot resolve it): what the paired changes rest on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_p50_ns: Vec<Option<f64>>,
    /// Each round's p99 lateness, ns (`null` below 100 waits in the round).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_p99_ns: Vec<Option<f64>>,
    /// The median's change against as is, ns (`null` for as is): the mean of the
    /// rounds' paired differences where every round resolves the median on both arms,
    /// else the difference of the two arms' values.
    pub p50_change_ns: Option<f64>,
    /// Its interval: over the paired differences where they are, else from each arm's
    /// own interval over rounds (`[a.low − b.high, a.high − b.low]`, conservative).
    pub p50_change_ci_ns: Option<Ci>,
    /// How many paired rounds the median's change rests on; `null` where it is the
    /// difference of the arms' values (a round could not resolve the median).
    #[serde(default)]
    pub p50_change_paired_rounds: Option<u64>,
    /// The p99's change against as is, ns (`null` for as is, or where either p99 is), as
    /// the median's.
    pub p99_change_ns: Option<f64>,
    /// Its interval (as the median's).
    pub p99_change_ci_ns: Option<Ci>,
    /// How many paired rounds the p99's change rests on; `null` where it is the
    /// difference of the arms' p99s (a round held fewer than 100 waits).
    #[serde(default)]
    pub p99_change_paired_rounds: Option<u64>,
    /// The verdict on the p99 (`null` for as is).
    pub verdict: Option<Verdict>,
}

/// One arm: a setting (or as is) and what it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Arm {
    /// The setting.
    pub setting: SettingInfo,
    /// Why it could not be applied, where it could not (then it has no cells).
    pub error: Option<String>,
    /// Rounds it ran.
    pub rounds: u64,
    /// CPUs the whole machine burnt while it ran: all CPUs' busy time (`/proc/stat`)
    /// plus the time idle CPUs spent polling ([`Arm::poll_cpus`]), over wall time.
    pub cpus: Option<f64>,
    /// Its interval over rounds.
    pub cpus_ci: Option<Ci>,
    /// Each round's CPUs (busy and polling over wall time, the whole machine), in round
    /// order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_cpus: Vec<f64>,
    /// Of [`Arm::cpus`], what idle CPUs spent polling: the growth of every CPU's cpuidle
    /// `POLL` state's time. /proc/stat books it as idle, yet the CPU executes
    /// instructions all along (on a virtual machine each polling vCPU holds a core of
    /// its host). `null` without a polling state (or in results written before it was
    /// counted, whose CPUs are /proc/stat's alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_cpus: Option<f64>,
    /// Each round's polling CPUs, in round order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_poll_cpus: Vec<f64>,
    /// The change against as is, CPUs (`null` for as is): the mean of the rounds'
    /// paired differences where both arms ran every round, else the difference.
    pub cpus_change: Option<f64>,
    /// Its interval.
    pub cpus_change_ci: Option<Ci>,
    /// How many paired rounds the CPU change rests on (`null`: not paired).
    #[serde(default)]
    pub cpus_change_paired_rounds: Option<u64>,
    /// Its cells.
    pub cells: Vec<ArmCell>,
}

impl ArmCell {
    /// The cell of `spec` measured in `rounds` (each round's lateness, ns), not yet
    /// judged against as is: its p50 and p99 pooled and per round, its intervals over
    /// rounds.
    pub fn of_rounds(spec: &CellSpec, rounds: &[Vec<u64>]) -> Self {
        let mut all: Vec<u64> = rounds.iter().flatten().copied().collect();
        all.sort_unstable();
        let per_round = |q: f64| -> Vec<Option<f64>> {
            rounds
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    r.sort_unstable();
                    tail_quantile(&r, q)
                })
                .collect()
        };
        Self {
            mechanism: spec.mechanism.clone(),
            requested_ns: spec.requested_ns,
            waits: all.len() as u64,
            p50_ns: tail_quantile(&all, 0.5),
            p99_ns: tail_quantile(&all, 0.99),
            units: (!all.is_empty()).then(|| UnitIntervals::of_ns(Unit::Round, rounds)),
            round_p50_ns: per_round(0.5),
            round_p99_ns: per_round(0.99),
            p50_change_ns: None,
            p50_change_ci_ns: None,
            p50_change_paired_rounds: None,
            p99_change_ns: None,
            p99_change_ci_ns: None,
            p99_change_paired_rounds: None,
            verdict: None,
        }
    }
}

impl Arm {
    /// An arm of `setting` with `cells` that ran `rounds` rounds, its CPUs and their
    /// changes unknown (not yet measured or judged).
    pub fn new(setting: SettingInfo, cells: Vec<ArmCell>, rounds: u64) -> Self {
        Self {
            setting,
            error: None,
            rounds,
            cpus: None,
            cpus_ci: None,
            round_cpus: Vec::new(),
            poll_cpus: None,
            round_poll_cpus: Vec::new(),
            cpus_change: None,
            cpus_change_ci: None,
            cpus_change_paired_rounds: None,
            cells,
        }
    }

    /// Whether this is the as-is arm.
    pub fn is_as_is(&self) -> bool {
        self.setting.name == AS_IS
    }

    /// Its cell of the same wait as `other` (mechanism and request).
    pub fn cell_like(&self, other: &ArmCell) -> Option<&ArmCell> {
        self.cells
            .iter()
            .find(|c| c.mechanism == other.mechanism && c.requested_ns == other.requested_ns)
    }

    /// Its cells' verdicts counted: (helps, hurts, no effect).
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |v| self.cells.iter().filter(|c| c.verdict == Some(v)).count();
        (n(Verdict::Helps), n(Verdict::Hurts), n(Verdict::NoEffect))
    }
}

/// What `tune` measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TuneData {
    /// The CPU the one-CPU settings were about.
    pub cpu: usize,
    /// Rounds asked for.
    pub rounds: u64,
    /// Whether it ran as root (system-wide settings tried).
    pub root: bool,
    /// As is first, then every setting tried.
    pub arms: Vec<Arm>,
    /// The settings not tried here, and why.
    pub unavailable: Vec<Unavailable>,
    /// The boot-time settings: what the machine has, how to try them.
    pub boot: Vec<BootSetting>,
}

impl TuneData {
    /// The as-is arm.
    pub fn as_is(&self) -> Option<&Arm> {
        self.arms.iter().find(|a| a.is_as_is())
    }
}

/// The info of the as-is arm.
pub fn as_is_info() -> SettingInfo {
    SettingInfo {
        name: AS_IS.into(),
        scope: Scope::Process,
        what: "nothing changed".into(),
        how: String::new(),
    }
}

/// An estimate of a cell's statistic over its rounds.
pub fn est(value: Option<f64>, units: Option<&UnitIntervals>, p99: bool) -> Option<Est> {
    let u = units?;
    let ci = if p99 { u.p99_ci_ns } else { u.median_ci_ns };
    Some(Est::units(value?, ci, Unit::Round, u.units))
}

impl ResultData for TuneData {
    fn experiment(&self) -> &'static str {
        NAME
    }

    /// None: a tune result compares settings within one run; its arms differ from
    /// machine to machine, so `compare` has nothing to match.
    fn points(&self) -> Vec<Point> {
        Vec::new()
    }
}
