//! `SleepReport`, `SleepStats` and `Tick`: read-only records returned to Python. Times
//! are integer nanoseconds on `time.monotonic_ns()`'s clock, with float-seconds
//! properties for convenience.

use pyo3::prelude::*;

use sleeplab::precise::{SleepReport, SleepStats, Tick};

use crate::duration::ns_to_seconds;

/// What one sleep did (integer nanoseconds on the `time.monotonic_ns()` clock).
#[pyclass(
    name = "SleepReport",
    module = "sleeplab._sleeplab",
    frozen,
    get_all,
    eq
)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PySleepReport {
    /// When the sleep began.
    start_ns: u64,
    /// The deadline it was asked to reach.
    deadline_ns: u64,
    /// When it returned: the first clock read at or after the deadline.
    woke_ns: u64,
    /// `woke_ns - deadline_ns` (never negative: it never returns early).
    lateness_ns: u64,
    /// Time spent sleeping natively (coarse slices included).
    native_ns: u64,
    /// Time spent spinning before the deadline.
    spin_ns: u64,
    /// How far the last native sleep overslept its target; None without a native phase.
    native_oversleep_ns: Option<u64>,
    /// The margin the precise phase planned to spin.
    margin_ns: u64,
    /// The margin the learned quantile called for, before the CPU budget and the
    /// contended regimes cut it to `margin_ns`.
    wanted_margin_ns: u64,
    /// True when the CPU budget cut the margin below `wanted_margin_ns`: the budget does
    /// not cover the tail of this machine's wakeups at this sleep's length.
    budget_limited: bool,
}

impl From<SleepReport> for PySleepReport {
    fn from(r: SleepReport) -> Self {
        Self {
            start_ns: r.start_ns,
            deadline_ns: r.deadline_ns,
            woke_ns: r.woke_ns,
            lateness_ns: r.lateness_ns,
            native_ns: r.native_ns,
            spin_ns: r.spin_ns,
            native_oversleep_ns: r.native_oversleep_ns,
            margin_ns: r.margin_ns,
            wanted_margin_ns: r.wanted_margin_ns,
            budget_limited: r.budget_limited,
        }
    }
}

#[pymethods]
impl PySleepReport {
    /// `lateness_ns` in seconds.
    #[getter]
    fn lateness(&self) -> f64 {
        ns_to_seconds(self.lateness_ns)
    }

    fn __repr__(&self) -> String {
        format!(
            "SleepReport(deadline_ns={}, woke_ns={}, lateness_ns={}, spin_ns={}, margin_ns={})",
            self.deadline_ns, self.woke_ns, self.lateness_ns, self.spin_ns, self.margin_ns
        )
    }
}

/// Running totals over a sleeper's sleeps since it was created or `reset_stats()`.
#[pyclass(name = "SleepStats", module = "sleeplab._sleeplab", frozen, get_all)]
#[derive(Debug, Clone)]
pub(crate) struct PySleepStats {
    /// Sleeps recorded.
    count: u64,
    /// Sum of their lateness, ns.
    total_lateness_ns: u64,
    /// Largest lateness, ns.
    max_lateness_ns: u64,
    /// Mean lateness, ns (0.0 when count is 0).
    mean_lateness_ns: f64,
    /// Sum of the spin phases, ns: roughly the CPU the sleeper burned.
    total_spin_ns: u64,
    /// Sum of the native phases of the precise part, ns.
    total_native_ns: u64,
    /// Sleeps that had a native phase.
    native_sleeps: u64,
    /// Native wakeups beyond the estimator's cap: counted, not learned (host stalls).
    stalls: u64,
    /// Sleeps whose margin the CPU budget cut below what the learned quantile called for:
    /// the budget does not cover the tail of this machine's wakeups.
    budget_limited: u64,
    /// Of those, the largest margin the quantile called for, ns ...
    wanted_margin_ns: u64,
    /// ... and the length of that sleep, ns.
    wanted_wait_ns: u64,
    /// The CPU budget that would have covered them, percent of each sleep
    /// (`cpu_budget=` takes it); None when no sleep was limited.
    budget_wanted_percent: Option<f64>,
}

impl From<SleepStats> for PySleepStats {
    fn from(s: SleepStats) -> Self {
        Self {
            count: s.count,
            total_lateness_ns: s.total_lateness_ns,
            max_lateness_ns: s.max_lateness_ns,
            mean_lateness_ns: s.mean_lateness_ns(),
            total_spin_ns: s.total_spin_ns,
            total_native_ns: s.total_native_ns,
            native_sleeps: s.native_sleeps,
            stalls: s.stalls,
            budget_limited: s.budget_limited,
            wanted_margin_ns: s.wanted_margin_ns,
            wanted_wait_ns: s.wanted_wait_ns,
            budget_wanted_percent: s.budget_wanted_percent(),
        }
    }
}

#[pymethods]
impl PySleepStats {
    fn __repr__(&self) -> String {
        format!(
            "SleepStats(count={}, mean_lateness_ns={:.1}, max_lateness_ns={}, total_spin_ns={}, stalls={}, budget_limited={})",
            self.count,
            self.mean_lateness_ns,
            self.max_lateness_ns,
            self.total_spin_ns,
            self.stalls,
            self.budget_limited
        )
    }
}

/// One tick of a `Ticker`.
#[pyclass(name = "Tick", module = "sleeplab._sleeplab", frozen, get_all)]
#[derive(Debug, Clone)]
pub(crate) struct PyTick {
    /// 0-based number of this tick.
    index: u64,
    /// When it was due (start + k·period), ns.
    scheduled_ns: u64,
    /// When it fired, ns.
    woke_ns: u64,
    /// `woke_ns - scheduled_ns`.
    lateness_ns: u64,
    /// Ticks missed at this tick (see `Ticker`).
    missed: u64,
    /// The sleep behind this tick.
    sleep: PySleepReport,
}

impl From<Tick> for PyTick {
    fn from(t: Tick) -> Self {
        Self {
            index: t.index,
            scheduled_ns: t.scheduled_ns,
            woke_ns: t.woke_ns,
            lateness_ns: t.lateness_ns,
            missed: t.missed,
            sleep: t.sleep.into(),
        }
    }
}

#[pymethods]
impl PyTick {
    /// `lateness_ns` in seconds.
    #[getter]
    fn lateness(&self) -> f64 {
        ns_to_seconds(self.lateness_ns)
    }

    /// `scheduled_ns` in seconds (comparable with `time.monotonic()`).
    #[getter]
    fn scheduled(&self) -> f64 {
        ns_to_seconds(self.scheduled_ns)
    }

    fn __repr__(&self) -> String {
        format!(
            "Tick(index={}, scheduled_ns={}, lateness_ns={}, missed={})",
            self.index, self.scheduled_ns, self.lateness_ns, self.missed
        )
    }
}
