//! `sleeplab cpu`: CPU usage against requested sleep for the hybrid (sleep + spin)
//! strategies (seed 002, figure 3). Each point sleeps the interval over and over
//! (relative sleeps, as in the seed) for `seconds`, and divides the thread's CPU time
//! by the wall time.

mod run;

pub use run::{render, run, write_csv};

use crate::stats::Summary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
}

/// The result of `cpu`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuData {
    /// What was run.
    pub config: CpuConfig,
    /// Points, interval-major in config order.
    pub points: Vec<CpuPoint>,
}
