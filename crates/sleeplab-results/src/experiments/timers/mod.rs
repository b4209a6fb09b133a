//! `sleeplab timers`: periodic timers compared (seed 004), validated against cyclictest.
//!
//! Each cell runs one mechanism at one period for one contiguous stretch of `seconds`
//! on `threads` measuring threads at once (each with its own timer), and accounts every
//! wake against the absolute schedule `t0 + k·P` (`crate::ticks`): ticks expected and
//! received, missed ticks (overruns), the seed's interval error, lateness per scheduled
//! tick, drift, CPU and context switches. Cells are interleaved period-major (every
//! mechanism at 100 ms, then every mechanism at 50 ms, …) inside load and timer-slack
//! levels. The result renders as the seed's table per period (the CLI's `render`), as a
//! cyclictest-style histogram file (the CLI's `write_histogram`), JSON and CSV.

mod summary;
mod table;

pub use summary::TickStats;
pub use table::{cells_table, most_common};

use crate::{KeyPart, Point, ResultData};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab_account::{CellAccount, TracedCells};
use sleeplab_account::{Explanation, Tracing};

/// The experiment's name: on the command line, and the `experiment` tag of its result files.
pub const NAME: &str = "timers";

/// The seed's periods: 100, 50, 20, 10, 5, 2 and 1 ms.
pub const DEFAULT_PERIODS_NS: [u64; 7] = [
    100_000_000,
    50_000_000,
    20_000_000,
    10_000_000,
    5_000_000,
    2_000_000,
    1_000_000,
];

/// The seed's run length per cell: one second.
pub const DEFAULT_SECONDS_NS: u64 = 1_000_000_000;

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimersConfig {
    /// Mechanisms, in table order.
    pub mechanisms: Vec<String>,
    /// Periods, ns, in run order.
    pub periods_ns: Vec<u64>,
    /// Length of each cell's contiguous run, ns.
    pub duration_ns: u64,
    /// Measuring threads per cell, each with its own timer.
    pub threads: usize,
    /// Numbers of competing busy threads.
    pub loads: Vec<usize>,
    /// Timer slacks to run under, ns; empty = leave the threads' slack alone.
    pub timer_slacks_ns: Vec<u64>,
    /// Lateness samples per thread and cell kept in the JSON (all go to CSV).
    pub json_samples: usize,
    /// Whether to split each wake's lateness with the kernel's tracepoints (`--trace`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace: bool,
}

impl TimersConfig {
    /// Deadlines per thread in a cell of period `period_ns`: `duration / period`.
    pub fn ticks(&self, period_ns: u64) -> u64 {
        self.duration_ns / period_ns.max(1)
    }
}

/// One measuring thread's share of a cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadResult {
    /// Thread number (0-based).
    pub thread: usize,
    /// Its ticks.
    pub stats: TickStats,
    /// Timer slack in force on the thread while it waited, ns.
    pub timer_slack_ns: u64,
    /// Wall time from arming to the last wake, ns.
    pub wall_ns: u64,
    /// CPU time of the measuring thread plus its helpers (callback threads, the
    /// setitimer child, an equal share of glibc's SIGEV_THREAD helper thread), ns.
    pub cpu_ns: u64,
    /// Of which outside the measuring thread, ns.
    pub helper_cpu_ns: u64,
    /// `cpu_ns / wall_ns` × 100.
    pub cpu_pct: f64,
    /// Voluntary context switches (measuring thread + helpers).
    pub voluntary_csw: u64,
    /// Involuntary context switches (measuring thread + helpers).
    pub involuntary_csw: u64,
    /// Lateness of the first `json_samples` scheduled ticks, ns, in schedule order.
    pub lateness_ns: Vec<i64>,
    /// Every scheduled tick (for CSV and the histogram); not serialized.
    #[serde(skip)]
    #[schemars(skip)]
    pub ticks: Vec<crate::tick_account::TickRecord>,
}

/// One measured cell: a mechanism at a period, load and slack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimersCell {
    /// Mechanism name.
    pub mechanism: String,
    /// Period, ns.
    pub period_ns: u64,
    /// Competing busy threads.
    pub load: usize,
    /// Timer slack in force on the measuring threads (thread 0), ns.
    pub timer_slack_ns: u64,
    /// The `--timer-slack` level this cell ran under; `None` = the threads' own slack
    /// (which the `ticker` sets to 1 ns).
    pub requested_timer_slack_ns: Option<u64>,
    /// False when Ctrl-C cut the run short: expected counts only the deadlines reached.
    pub complete: bool,
    /// All threads' ticks merged.
    pub merged: TickStats,
    /// CPU of all threads and helpers over the cell's wall time, % of one CPU.
    pub cpu_pct: f64,
    /// Voluntary context switches, all threads and helpers.
    pub voluntary_csw: u64,
    /// Involuntary context switches, all threads and helpers.
    pub involuntary_csw: u64,
    /// Per measuring thread.
    pub threads: Vec<ThreadResult>,
    /// Where its wakes' lateness went, over every thread (`--trace`; each wake against
    /// the deadline its timer fired for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Explanation>,
}

/// A cell that was not measured, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkippedTimerCell {
    /// Mechanism name.
    pub mechanism: String,
    /// Period, ns.
    pub period_ns: u64,
    /// Why (e.g. setitimer takes whole microseconds, or the system call that failed).
    pub reason: String,
}

/// The result of `sleeplab timers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimersData {
    /// What was asked for.
    pub config: TimersConfig,
    /// Measured cells in run order (load, slack, period, mechanism).
    pub cells: Vec<TimersCell>,
    /// Cells not measured.
    pub skipped: Vec<SkippedTimerCell>,
    /// Whether the kernel was traced (`--trace`; absent without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracing: Option<Tracing>,
}

impl ResultData for TimersData {
    fn experiment(&self) -> &'static str {
        NAME
    }

    fn traced(&self) -> Option<TracedCells<'_>> {
        let cells = self.cells.iter().filter_map(|c| {
            Some(CellAccount {
                mechanism: (&c.mechanism).into(),
                requested_ns: c.period_ns,
                load: c.load,
                timer_slack_ns: c.timer_slack_ns,
                explanation: c.explanation.as_ref()?,
            })
        });
        Some(TracedCells {
            subject: "the periodic timers' ticks",
            on_request: true,
            tracing: self.tracing.as_ref()?,
            cells: cells.collect(),
        })
    }

    /// Each cell's lateness against its schedule, all threads merged.
    fn points(&self) -> Vec<Point> {
        self.cells
            .iter()
            .filter(|c| c.merged.received > 0)
            .map(|c| Point {
                key: vec![
                    KeyPart::text(format!("{} every", c.mechanism)),
                    KeyPart::Ns(c.period_ns),
                    KeyPart::text(format!("load {} (lateness)", c.load)),
                ],
                n: c.merged.received,
                median_ns: c.merged.median_lateness_ns,
                median_ci_ns: c.merged.median_lateness_ci_ns,
                p99_ns: c.merged.p99_lateness_ns,
                p99_ci_ns: c.merged.p99_lateness_ci_ns,
                units: None,
            })
            .collect()
    }
}
