//! `sleeplab explain`: why waits are late, from the kernel's own timestamps. Each cell
//! (a mechanism at a requested duration, under a load and a timer slack) waits
//! `iterations` times on one measuring thread while the kernel's tracepoints are
//! recorded for it; each wake's lateness is then split into its components (timer
//! slack, timer interrupt, run queue, …: [`sleeplab_account`]) and the cell summarised.
//! Cells are interleaved in rounds, as in `sweep`.
//!
//! Without tracing (not root, no tracefs, an event missing) it says why in a note and
//! gives the partial account `/proc` allows: run-queue time and timer slack.

use crate::experiments::{KeyPart, Point, ResultData};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab_account::{CellAccount, Explanation, TracedCells, Tracing, WakeRecord};
use sleeplab_stats::UnitIntervals;

/// The experiment's name: on the command line, and the `experiment` tag of its result files.
pub const NAME: &str = "explain";

/// The default mechanisms: the common one-shot waits at [`DEFAULT_DURATIONS`], and the
/// precise sleeper at 60 Hz.
pub const DEFAULT_MECHANISMS: &str =
    "nanosleep,clock-nanosleep-abs,timerfd,epoll,futex,precise@60hz";

/// The default requested durations of mechanisms named without one.
pub const DEFAULT_DURATIONS: &str = "100us,1ms";

/// The default wakes per cell.
pub const DEFAULT_ITERATIONS: u64 = 200;

/// One mechanism at one requested duration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExplainItem {
    /// A one-shot mechanism or a precise-sleep strategy (setting), by name.
    pub mechanism: String,
    /// The requested duration, ns.
    pub requested_ns: u64,
}

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExplainConfig {
    /// Mechanism × duration items, in order.
    pub items: Vec<ExplainItem>,
    /// Numbers of competing busy threads.
    pub loads: Vec<usize>,
    /// Timer slack values to run under, ns; empty = leave the thread's slack alone.
    pub timer_slacks_ns: Vec<u64>,
    /// Wakes per cell.
    pub iterations: u64,
    /// Interleaved passes over all cells.
    pub rounds: u64,
    /// Per-wake records kept per cell in the JSON result (all go to the CSV).
    pub json_wakes: usize,
    /// Whether to trace the kernel (false: the partial /proc account only).
    pub trace: bool,
}

impl ExplainConfig {
    /// The cells' count.
    pub fn cells(&self) -> usize {
        self.items.len() * self.loads.len() * self.timer_slacks_ns.len().max(1)
    }
}

/// One cell's account.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExplainCell {
    /// Mechanism or strategy.
    pub mechanism: String,
    /// Requested duration, ns.
    pub requested_ns: u64,
    /// Competing busy threads.
    pub load: usize,
    /// Timer slack in force, ns.
    pub timer_slack_ns: u64,
    /// Where the lateness went.
    pub explanation: Explanation,
    /// The 95 % intervals of its lateness statistics over its rounds (`stats::units`;
    /// absent in results written before them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<UnitIntervals>,
    /// The first `json_wakes` wakes, each split.
    pub wakes: Vec<WakeRecord>,
    /// Every wake, for the CSV (not saved in JSON).
    #[serde(skip)]
    #[schemars(skip)]
    pub all_wakes: Vec<WakeRecord>,
}

impl<'a> From<&'a ExplainCell> for CellAccount<'a> {
    fn from(c: &'a ExplainCell) -> Self {
        Self {
            mechanism: (&c.mechanism).into(),
            requested_ns: c.requested_ns,
            load: c.load,
            timer_slack_ns: c.timer_slack_ns,
            explanation: &c.explanation,
        }
    }
}

/// The result of `explain`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExplainData {
    /// What was run.
    pub config: ExplainConfig,
    /// Whether the kernel was traced.
    pub tracing: Tracing,
    /// One per item × load × slack, in config order.
    pub cells: Vec<ExplainCell>,
}

impl ResultData for ExplainData {
    fn experiment(&self) -> &'static str {
        NAME
    }

    fn traced(&self) -> Option<TracedCells<'_>> {
        Some(TracedCells {
            subject: "waits",
            on_request: false,
            tracing: &self.tracing,
            cells: self.cells.iter().map(CellAccount::from).collect(),
        })
    }

    /// Each cell's lateness (woke − deadline).
    fn points(&self) -> Vec<Point> {
        self.cells
            .iter()
            .filter(|c| c.explanation.wakes > 0)
            .map(|c| {
                Point::of_summary(
                    vec![
                        KeyPart::text(c.mechanism.clone()),
                        KeyPart::Ns(c.requested_ns),
                        KeyPart::text(format!("load {}", c.load)),
                        KeyPart::text("(lateness)"),
                    ],
                    &c.explanation.lateness,
                )
                .with_units(c.units.as_ref())
            })
            .collect()
    }
}
