//! `sleeplab runtimes`: every language runtime's own wait functions, measured the same
//! way (seeds 001, 003, 004).
//!
//! Each runtime's probe (`probes/<runtime>/`, protocol in `spec/probe-protocol.md`) is
//! built and listed, then launched once per method with every requested duration at
//! once (`--durations-ns`), a time budget per cell and a warm-up; periodic methods run in
//! periodic mode. The harness applies the same load (busy threads in this process), timer
//! slack and CPU pinning (both inherited by the probe process) as `sweep`, parses the
//! output with [`crate::protocol`] and summarises it with [`sleeplab_stats`].
//! A runtime that is missing is skipped with the command that installs it; a probe that
//! crashes, hangs, floods or prints garbage is reported as failed and the run goes on.

pub mod analyze;

pub use analyze::{PeriodicStats, periodic_stats};

use crate::RuntimeId;
use crate::probe_protocol::{Kind, MethodInfo};
use crate::{InForce, KeyPart, Point, ResultData, RunSettings};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab::system::{self, Policy};
use sleeplab_account::{CellAccount, TracedCells};
use sleeplab_account::{Explanation, Tracing};
use sleeplab_stats::{Ci, Est, Stat, Summary, UnitIntervals};
use std::collections::BTreeMap;

/// The experiment's name: on the command line, and the `experiment` tag of its result files.
pub const NAME: &str = "runtimes";

/// Seed 003's requests: 100 ms, 10 ms, 1 ms, 100 µs, 10 µs.
pub const DEFAULT_DURATIONS_NS: [u64; 5] = [100_000_000, 10_000_000, 1_000_000, 100_000, 10_000];

/// How many samples each one-shot cell takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ProbeQuota {
    /// Exactly this many samples per cell (`--count`).
    Count {
        /// Samples per cell.
        count: u64,
    },
    /// Samples until their sum reaches the budget (`--budget-ns`), at least one and at
    /// most `max_count` (`--max-count`): the actual total is fixed, the count (and so
    /// the ideal total) varies.
    Budget {
        /// Sum of samples per cell, ns.
        budget_ns: u64,
        /// Most samples per cell.
        max_count: u64,
    },
    /// Seed 003's design: a number of calls fixed per request before measuring, so the
    /// ideal total (count × request) is set and the actual total is measured: `count`
    /// calls, or fewer at a request so long that `count` calls would ask for more than
    /// `max_ideal_ns` of sleep (at least one). The probe is run once per group of
    /// requests that share a count (`--count`).
    PerRequest {
        /// Calls per request.
        count: u64,
        /// Most requested sleep per cell (count × request), ns.
        max_ideal_ns: u64,
    },
}

impl ProbeQuota {
    /// The fixed number of calls at `requested_ns` (`None` under a budget: the probe
    /// decides as it measures).
    pub fn count_for(self, requested_ns: u64) -> Option<u64> {
        match self {
            ProbeQuota::Count { count } => Some(count),
            ProbeQuota::Budget { .. } => None,
            ProbeQuota::PerRequest {
                count,
                max_ideal_ns,
            } => Some(match max_ideal_ns.checked_div(requested_ns) {
                Some(fits) => count.min(fits).max(1),
                None => count,
            }),
        }
    }
}

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimesConfig {
    /// Runtimes, by command-line name, in order.
    pub runtimes: Vec<String>,
    /// Only these methods (by the probes' names); `None` = every available one.
    pub methods: Option<Vec<String>>,
    /// Requested durations for one-shot methods, ns (yield methods run at 0 only).
    pub durations_ns: Vec<u64>,
    /// Samples per one-shot cell.
    pub quota: ProbeQuota,
    /// Warm-up calls per cell (warm-up ticks for periodic methods), not in the statistics.
    pub warmup: u64,
    /// Period for periodic methods, ns.
    pub period_ns: u64,
    /// Measured ticks for periodic methods.
    pub ticks: u64,
    /// Numbers of competing busy threads (in the harness process).
    pub loads: Vec<usize>,
    /// Timer slacks the probe processes run under, ns; empty = inherit the harness's.
    pub timer_slacks_ns: Vec<u64>,
    /// CPU the probe processes are pinned to.
    pub pin_cpu: Option<usize>,
    /// Scheduling policy of the probe processes (set before `exec`; the threads they
    /// start inherit it).
    #[serde(default, skip_serializing_if = "is_default")]
    pub policy: Policy,
    /// Its priority: 0 for `other`, 1–99 for `fifo` and `rr`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub priority: i32,
    /// Each probe locks its memory before measuring (the protocol's `--mlock`; a run
    /// with a probe that cannot is refused).
    #[serde(default, skip_serializing_if = "is_default")]
    pub mlock: bool,
    /// Each probe that offers it (its `--list` header's `options`) says where each call
    /// sat on `CLOCK_MONOTONIC`, the clock of a kernel trace (the protocol's
    /// `--timestamps`); a probe that does not (Windows under Wine) runs without. The
    /// starts are kept in memory ([`MethodResult::timing`]), not in the JSON.
    #[serde(default, skip_serializing_if = "is_default")]
    pub timestamps: bool,
    /// Each probe call's lateness split by the kernel's tracepoints (`--trace`; needs
    /// `timestamps`): a tracer of every thread beside each method's probe runs.
    #[serde(default, skip_serializing_if = "is_default")]
    pub trace: bool,
    /// Raw samples per cell kept in the JSON result (the CSV gets all).
    pub json_samples: usize,
    /// A probe writing more than this to stdout is killed, bytes.
    pub output_cap_bytes: u64,
    /// Time allowed for a probe's start-up on top of its expected run time, ns.
    pub startup_timeout_ns: u64,
    /// Saved probe outputs included as runtimes of their own (`--saved`).
    #[serde(default)]
    pub saved_files: Vec<String>,
}

impl Default for RuntimesConfig {
    /// What `sleeplab runtimes` measures without flags (a test checks its flags agree):
    /// every runtime's every method at [`DEFAULT_DURATIONS_NS`], seed 003's count fixed
    /// per request (100 calls, fewer where they would ask for more than 1 s), 5 warm-up
    /// calls, 100 ticks of 10 ms, idle, the inherited
    /// timer slack and scheduling, no timestamps, 1000 samples per cell in the JSON, a
    /// 64 MiB output cap and 120 s for a probe's start-up.
    fn default() -> Self {
        Self {
            runtimes: RuntimeId::ALL
                .iter()
                .map(|r| r.name().to_string())
                .collect(),
            methods: None,
            durations_ns: DEFAULT_DURATIONS_NS.to_vec(),
            quota: ProbeQuota::PerRequest {
                count: 100,
                max_ideal_ns: 1_000_000_000,
            },
            warmup: 5,
            period_ns: 10_000_000,
            ticks: 100,
            loads: vec![0],
            timer_slacks_ns: vec![],
            pin_cpu: None,
            policy: Policy::default(),
            priority: 0,
            mlock: false,
            timestamps: false,
            trace: false,
            json_samples: 1000,
            output_cap_bytes: 64 << 20,
            startup_timeout_ns: 120_000_000_000,
            saved_files: vec![],
        }
    }
}

/// Whether a runtime was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum RuntimeStatus {
    /// Its probe was listed and its methods run (each method has its own status).
    Measured,
    /// Not installed here.
    Skipped {
        /// What is missing.
        reason: String,
        /// The command that installs it.
        install: String,
    },
    /// Installed, but the probe could not be built or listed.
    Failed {
        /// Why.
        reason: String,
    },
}

/// Whether one method was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum MethodStatus {
    /// Measured; the output followed the protocol.
    Measured,
    /// The probe said the method is unavailable (exit 3).
    Unavailable {
        /// The probe's message.
        reason: String,
    },
    /// The probe crashed, hung, flooded, printed garbage or did not do what was asked.
    Failed {
        /// Why.
        reason: String,
    },
}

/// A method the probe lists as unavailable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UnavailableMethod {
    /// Method name.
    pub method: String,
    /// Its kind.
    pub kind: Kind,
    /// The probe's reason.
    pub reason: String,
}

/// One one-shot (or yield) cell: a requested duration and how long the calls took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OneshotCell {
    /// Requested duration, ns (0 for yield methods).
    pub requested_ns: u64,
    /// Statistics of the measured samples: count, min, max, mean, median, σ, early
    /// returns, total (the "actual total" next to count × requested).
    pub summary: Summary,
    /// Warm-up calls, in order (not in the statistics).
    pub warmup_ns: Vec<u64>,
    /// The first samples in measurement order (at most the JSON cap).
    pub samples_ns: Vec<u64>,
    /// All samples (for CSV); not serialized.
    #[serde(skip)]
    #[schemars(skip)]
    pub all_samples_ns: Vec<u64>,
    /// The probe's comments on this cell (a clamp, a rounding).
    pub notes: Vec<String>,
    /// Where its calls' lateness went (`--trace`, where the probe names its thread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Explanation>,
    /// The 95 % intervals of its statistics over [`BATCHES`] blocks of consecutive calls
    /// (`stats::units`; absent in results written before them). One probe run's calls:
    /// a comparison with another method's says it leaves run-to-run variation out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<UnitIntervals>,
}

/// The blocks of consecutive calls a one-shot cell's intervals are taken over.
pub const BATCHES: u64 = 10;

impl OneshotCell {
    /// `stat` of its calls with its interval over blocks of consecutive calls (set
    /// against another probe run's: within-run), else its pooled interval.
    pub fn est(&self, stat: Stat) -> Option<Est> {
        Est::of(&self.summary, self.units.as_ref(), stat).map(Est::within_run)
    }

    /// count × requested, ns: what the calls would have taken if each slept exactly.
    pub fn ideal_total_ns(&self) -> u128 {
        u128::from(self.summary.count) * u128::from(self.requested_ns)
    }
}

/// Lateness of periodic ticks: arrival − k·P for tick k (counting from 1 across warm-up
/// and measured ticks), over the measured ticks. Signed: an early tick is negative.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Lateness {
    /// Most negative (earliest), ns.
    pub min_ns: i64,
    /// Mean, ns.
    pub mean_ns: f64,
    /// Median, ns.
    pub median_ns: f64,
    /// 95 % interval of the median, ns (`stats::quantile_ci`).
    #[serde(default)]
    pub median_ci_ns: Option<Ci>,
    /// 99th percentile, ns; `null` below 100 ticks (the quantile rule).
    pub p99_ns: Option<f64>,
    /// 95 % interval of the 99th percentile, ns.
    #[serde(default)]
    pub p99_ci_ns: Option<Ci>,
    /// Largest, ns.
    pub max_ns: i64,
    /// Lateness of the last tick, ns: the drift accumulated over the run.
    pub last_ns: i64,
    /// Ticks that arrived before their due time.
    pub early_count: u64,
}

/// The periodic cell of a periodic method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PeriodicCell {
    /// Period, ns.
    pub period_ns: u64,
    /// Measured ticks.
    pub ticks: u64,
    /// Intervals between consecutive ticks (the first measured one from the last
    /// warm-up tick, or from t0), summarised against the period: mean interval, σ,
    /// total (actual) vs ticks × period (ideal); `early_count` = intervals shorter than P.
    pub interval: Summary,
    /// Lateness against the schedule k·P.
    pub lateness: Lateness,
    /// Warm-up tick arrivals since t0, ns.
    pub warmup_ns: Vec<u64>,
    /// The first measured arrivals since t0 (at most the JSON cap), ns.
    pub arrivals_ns: Vec<u64>,
    /// All measured arrivals (for CSV); not serialized.
    #[serde(skip)]
    #[schemars(skip)]
    pub all_arrivals_ns: Vec<u64>,
    /// The probe's comments on this cell.
    pub notes: Vec<String>,
    /// Where its ticks' lateness went (`--trace`, where the probe names its thread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Explanation>,
}

/// One method measured under one setting (load, timer slack).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MethodResult {
    /// Method name (the probe's).
    pub method: String,
    /// Its kind.
    pub kind: Kind,
    /// What it calls (the probe's description).
    pub description: String,
    /// Competing busy threads.
    pub load: usize,
    /// Timer slack set for the probe process, ns (`None` = inherited).
    pub timer_slack_ns: Option<u64>,
    /// Timer slack the probe reported in its header (`timerslack_ns`), if it does.
    pub probe_timer_slack_ns: Option<u64>,
    /// Outcome.
    #[serde(flatten)]
    pub status: MethodStatus,
    /// One-shot cells, in request order (empty for periodic methods).
    pub cells: Vec<OneshotCell>,
    /// The periodic cell (periodic methods only).
    pub periodic: Option<PeriodicCell>,
    /// Notes: the probe's comments outside cells, protocol quirks the harness noticed.
    pub notes: Vec<String>,
    /// Wall time of the probe process, ns.
    pub wall_ns: u64,
    /// What was in force for the probe process while it measured, read back from
    /// `/proc` (absent in results written before it was recorded, and for saved outputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_force: Option<InForce>,
    /// Set when the probe was stopped midway (Ctrl-C, a timeout): the cells it finished
    /// are kept (status `measured`), the rest were not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<PartialRun>,
    /// Which process and thread measured each cell, and with timestamps where its calls
    /// sat on `CLOCK_MONOTONIC`: one entry per one-shot cell (parallel to `cells`), or
    /// one for the periodic cell. In memory only (for a kernel trace of the probes).
    #[serde(skip)]
    #[schemars(skip)]
    pub timing: Vec<CellTiming>,
}

/// Where one cell's calls ran, for lining them up with a kernel trace (whose `mono`
/// clock is `CLOCK_MONOTONIC`): the probe process, its measuring thread, and with
/// timestamps ([`RuntimesConfig::timestamps`]) each call's start.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CellTiming {
    /// The probe process (`None` for a saved output).
    pub pid: Option<u32>,
    /// Its measuring thread (the header's `tid`), where the probe names it.
    pub tid: Option<u32>,
    /// One-shot with timestamps: each warm-up call's start, ns (parallel to the cell's
    /// `warmup_ns`).
    pub warmup_starts_ns: Option<Vec<u64>>,
    /// One-shot with timestamps: each measured call's start, ns (parallel to the cell's
    /// `all_samples_ns`): the call ran from `start` to `start + sample`.
    pub starts_ns: Option<Vec<u64>>,
    /// Periodic with timestamps: t0, ns; tick arrival `a` happened at `t0 + a`.
    pub t0_ns: Option<u64>,
}

impl MethodResult {
    /// `method` (of `kind`, calling what `description` says) measured under `load` busy
    /// threads and the timer slack `timer_slack_ns`, before anything is filled in: no
    /// cells, notes or wall time yet, nothing read back.
    pub fn new(
        method: impl Into<String>,
        kind: Kind,
        description: impl Into<String>,
        load: usize,
        timer_slack_ns: Option<u64>,
    ) -> Self {
        Self {
            method: method.into(),
            kind,
            description: description.into(),
            load,
            timer_slack_ns,
            probe_timer_slack_ns: None,
            status: MethodStatus::Measured,
            cells: vec![],
            periodic: None,
            notes: vec![],
            wall_ns: 0,
            in_force: None,
            partial: None,
            timing: vec![],
        }
    }
}

/// A probe run stopped before its end, its finished cells kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PartialRun {
    /// Why it stopped (e.g. "interrupted (Ctrl-C), killed").
    pub reason: String,
    /// Cells the probe finished (each as whole as in a complete run).
    pub cells_kept: u64,
    /// Cells it was asked for.
    pub cells_asked: u64,
}

/// One runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimeResult {
    /// Command-line name (`c`, …, `ruby`, `jruby`, `windows`).
    pub id: String,
    /// Human title.
    pub title: String,
    /// Outcome.
    #[serde(flatten)]
    pub status: RuntimeStatus,
    /// The probe's `runtime` header field.
    pub runtime: Option<String>,
    /// The implementation (`CPython`, `MRI`, `JRuby`, …).
    pub implementation: Option<String>,
    /// The runtime's version.
    pub version: Option<String>,
    /// The platform.
    pub platform: Option<String>,
    /// The clock the probe reads.
    pub clock: Option<String>,
    /// Extra header fields of the listing (e.g. `timerslack_ns`, `gomaxprocs`).
    pub header_extra: BTreeMap<String, serde_json::Value>,
    /// How the probe was launched.
    pub command: Vec<String>,
    /// How the probe was prepared (built, cached, from source).
    pub prepared: Option<String>,
    /// Methods measured (one entry per method and setting).
    pub methods: Vec<MethodResult>,
    /// Methods the probe lists as unavailable here (among those asked for).
    pub unavailable: Vec<UnavailableMethod>,
    /// Every method the probe lists, as it lists them.
    pub listed: Vec<MethodInfo>,
}

/// The result of `sleeplab runtimes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuntimesData {
    /// What was asked for.
    pub config: RuntimesConfig,
    /// Every runtime asked for, in order, then those read from saved probe outputs.
    pub runtimes: Vec<RuntimeResult>,
    /// Whether the kernel was traced (`--trace`; absent without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracing: Option<Tracing>,
}

/// Whether a setting holds its default, so results that do not use it read as before.
fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

impl ResultData for RuntimesData {
    fn experiment(&self) -> &'static str {
        NAME
    }

    /// A probe's cells are named "runtime method"; a periodic one by its period.
    fn traced(&self) -> Option<TracedCells<'_>> {
        let tracing = self.tracing.as_ref()?;
        let mut cells = Vec::new();
        for rt in &self.runtimes {
            for m in &rt.methods {
                let slack = m.probe_timer_slack_ns.or(m.timer_slack_ns).unwrap_or(0);
                let periodic = m
                    .periodic
                    .as_ref()
                    .and_then(|p| Some((p.period_ns, p.explanation.as_ref()?)));
                let oneshot = m
                    .cells
                    .iter()
                    .filter_map(|c| Some((c.requested_ns, c.explanation.as_ref()?)));
                for (requested_ns, explanation) in oneshot.chain(periodic) {
                    cells.push(CellAccount {
                        mechanism: format!("{} {}", rt.id, m.method).into(),
                        requested_ns,
                        load: m.load,
                        timer_slack_ns: slack,
                        explanation,
                    });
                }
            }
        }
        Some(TracedCells {
            subject: "the runtimes' sleeps",
            on_request: true,
            tracing,
            cells,
        })
    }

    /// Every one-shot cell of every method, by runtime, method, request and load.
    fn points(&self) -> Vec<Point> {
        let mut out = Vec::new();
        for rt in &self.runtimes {
            for m in &rt.methods {
                for c in m.cells.iter().filter(|c| c.summary.count > 0) {
                    out.push(
                        Point::of_summary(
                            vec![
                                KeyPart::text(format!("{} {}", rt.title, m.method)),
                                KeyPart::Ns(c.requested_ns),
                                KeyPart::text(format!("load {}", m.load)),
                            ],
                            &c.summary,
                        )
                        .with_units(c.units.as_ref()),
                    );
                }
            }
        }
        out
    }
}

impl RuntimesConfig {
    /// The settings recorded in the result's envelope: the probes' timer slack (the
    /// first one asked for, else the one they inherit from this thread), CPU, policy,
    /// priority and memory locking.
    pub fn run_settings(&self) -> RunSettings {
        RunSettings {
            timer_slack_ns: self
                .timer_slacks_ns
                .first()
                .copied()
                .unwrap_or_else(system::timer_slack_ns),
            pin_cpu: self.pin_cpu,
            policy: self.policy,
            priority: self.priority,
            mlock: self.mlock,
        }
    }
}
