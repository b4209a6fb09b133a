//! `sleeplab cpu`: CPU usage against requested sleep for the hybrid (sleep + spin)
//! strategies (seed 002, figure 3). Each point sleeps the interval over and over
//! (relative sleeps, as in the seed) for `seconds`, and divides the thread's CPU time
//! by the wall time. With `blocks` above 1 (`advise` asks for 20), each point's time is
//! split into that many blocks, the contenders taking turns block by block, and each
//! point carries its intervals over the blocks.

use crate::experiments::{KeyPart, Point, ResultData};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab_stats::{Ci, Summary, UnitIntervals};

/// The experiment's name: on the command line, and the `experiment` tag of its result files.
pub const NAME: &str = "cpu";

/// The default contenders: the strategies that mix sleeping and spinning.
pub const HYBRIDS: [&str; 5] = [
    "seed-hybrid",
    "sdl-precise",
    "fixed-margin",
    "spin-sleep",
    "precise",
];

/// What to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuConfig {
    /// Contenders.
    pub strategies: Vec<String>,
    /// Requested sleeps, ns.
    pub intervals_ns: Vec<u64>,
    /// Wall time per (strategy, interval) point, ns.
    pub seconds_ns: u64,
    /// Timer slack all contenders run under, ns (None = left as it was).
    pub timer_slack_ns: Option<u64>,
    /// Blocks each point's time is split into, the contenders taking turns block by
    /// block (absent: 1, each point one stretch).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub blocks: u64,
}

fn one() -> u64 {
    1
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

/// One (strategy, interval) point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuPoint {
    /// Contender.
    pub strategy: String,
    /// Requested sleep, ns.
    pub interval_ns: u64,
    /// Thread CPU time as % of one core.
    pub cpu_percent: f64,
    /// Sleeps done.
    pub sleeps: u64,
    /// Lateness of each sleep (`woke − deadline`), ns.
    pub error: Summary,
    /// The 95 % intervals of its lateness statistics over its blocks (`stats::units`;
    /// absent for one block, below 8 blocks every interval is null).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<UnitIntervals>,
    /// The 95 % interval of its CPU over its blocks, % of one core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ci_percent: Option<Ci>,
}

/// The result of `cpu`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuData {
    /// What was run.
    pub config: CpuConfig,
    /// Points, interval-major in config order.
    pub points: Vec<CpuPoint>,
}

impl ResultData for CpuData {
    fn experiment(&self) -> &'static str {
        NAME
    }

    /// Each point's lateness (woke − deadline) at its requested sleep.
    fn points(&self) -> Vec<Point> {
        self.points
            .iter()
            .filter(|p| p.error.count > 0)
            .map(|p| {
                Point::of_summary(
                    vec![
                        KeyPart::text(format!("{} sleeping", p.strategy)),
                        KeyPart::Ns(p.interval_ns),
                        KeyPart::text("(lateness)"),
                    ],
                    &p.error,
                )
                .with_units(p.units.as_ref())
            })
            .collect()
    }
}
