//! What `sleeplab simulate` records: its configuration and one [`SimCell`] per
//! (strategy, requested interval, model) — the value every renderer reads.

use super::host::HostModel;
use super::models::ModelSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab::lab::VirtualCosts;
use sleeplab_stats::Ci;

/// The fixed costs of the virtual environment's operations (see
/// [`VirtualCosts`]), ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SimCosts {
    /// Time and CPU per clock read.
    pub clock_read_ns: u64,
    /// Time and CPU per spin-loop pause.
    pub spin_pause_ns: u64,
    /// Time and CPU per `sched_yield`.
    pub yield_ns: u64,
    /// CPU (not time) per native sleep call.
    pub sleep_cpu_ns: u64,
}

impl From<VirtualCosts> for SimCosts {
    fn from(c: VirtualCosts) -> Self {
        Self {
            clock_read_ns: c.clock_read_ns,
            spin_pause_ns: c.spin_pause_ns,
            yield_ns: c.yield_ns,
            sleep_cpu_ns: c.sleep_cpu_ns,
        }
    }
}

impl From<SimCosts> for VirtualCosts {
    fn from(c: SimCosts) -> Self {
        Self {
            clock_read_ns: c.clock_read_ns,
            spin_pause_ns: c.spin_pause_ns,
            yield_ns: c.yield_ns,
            sleep_cpu_ns: c.sleep_cpu_ns,
        }
    }
}

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SimulateConfig {
    /// Strategies (library registry names), in order.
    pub strategies: Vec<String>,
    /// Requested intervals (the grid's rows), ns.
    pub intervals_ns: Vec<u64>,
    /// Native-sleep models (the grid's columns).
    pub models: Vec<ModelSpec>,
    /// Measured sleeps per cell.
    pub sleeps: u64,
    /// Sleeps per cell run first and not measured (the strategy learns during them).
    pub warmup: u64,
    /// The seed: the same seed gives the same result on every machine.
    pub seed: u64,
    /// The virtual environment's operation costs.
    pub costs: SimCosts,
    /// The virtual machine's host, which interrupts (and, busy, punishes) spins; absent:
    /// spins run undisturbed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostModel>,
}

/// One cell: a fresh strategy, warmed up, then `sleeps` back-to-back sleeps of
/// `requested_ns` under one model, in virtual time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SimCell {
    /// Strategy name.
    pub strategy: String,
    /// Requested interval, ns.
    pub requested_ns: u64,
    /// Index of the model in `config.models`.
    pub model: usize,
    /// Measured sleeps.
    pub sleeps: u64,
    /// Mean relative error: mean of (actual − requested) / requested.
    pub mean_rel_error: f64,
    /// Median relative error.
    pub p50_rel_error: f64,
    /// 95 % interval of the median relative error (`stats::quantile_ci`).
    #[serde(default)]
    pub p50_rel_error_ci: Option<Ci>,
    /// 99th-percentile relative error (linear interpolation between ranks); `null`
    /// below 100 sleeps (the quantile rule).
    pub p99_rel_error: Option<f64>,
    /// 95 % interval of the p99 relative error.
    #[serde(default)]
    pub p99_rel_error_ci: Option<Ci>,
    /// Largest relative error.
    pub max_rel_error: f64,
    /// Mean lateness (actual − requested), ns.
    pub mean_lateness_ns: f64,
    /// 99th-percentile lateness, ns; `null` below 100 sleeps.
    pub p99_lateness_ns: Option<f64>,
    /// 95 % interval of the p99 lateness, ns.
    #[serde(default)]
    pub p99_lateness_ci_ns: Option<Ci>,
    /// Largest lateness, ns.
    pub max_lateness_ns: u64,
    /// Virtual CPU time as % of virtual wall time over the measured sleeps (spinning,
    /// clock reads, and a fixed cost per native sleep call).
    pub cpu_percent: f64,
    /// Native sleep calls per measured sleep.
    pub native_sleeps_per_wait: f64,
    /// Sleeps that returned before their deadline in virtual time (always 0 for the
    /// library's strategies; counted, never hidden).
    pub early: u64,
}

/// The result of `sleeplab simulate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SimulateData {
    /// What was simulated.
    pub config: SimulateConfig,
    /// Cells in strategy, interval, model order (config order).
    pub cells: Vec<SimCell>,
}

impl SimulateData {
    /// The cell for (strategy, requested, model index), if simulated.
    pub fn cell(&self, strategy: &str, requested_ns: u64, model: usize) -> Option<&SimCell> {
        self.cells
            .iter()
            .find(|c| c.strategy == strategy && c.requested_ns == requested_ns && c.model == model)
    }
}
