//! The plain structs C reads: what one sleep did, running statistics, one tick.
//! All times are nanoseconds on `CLOCK_MONOTONIC`.

use sleeplab_core::precise::{SleepReport, SleepStats, Tick as CoreTick};

/// What one sleep did.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Report {
    /// When the sleep began (its first clock read).
    pub start_ns: u64,
    /// The deadline it was asked to reach.
    pub deadline_ns: u64,
    /// When it returned: the first clock read at or after the deadline.
    pub woke_ns: u64,
    /// `woke_ns - deadline_ns` (0 is perfect; never negative: it never returns early).
    pub lateness_ns: u64,
    /// Time spent in the native (sleeping) phase.
    pub native_ns: u64,
    /// Time spent spinning after the native phase.
    pub spin_ns: u64,
    /// How far the native sleep overslept its own target (0 without a native phase).
    pub native_oversleep_ns: u64,
    /// Whether the sleep had a native phase (false when the deadline had passed or was
    /// within the margin, so it only spun).
    pub had_native_phase: bool,
    /// The margin this sleep planned to spin before the deadline.
    pub margin_ns: u64,
}

impl From<SleepReport> for Report {
    fn from(r: SleepReport) -> Self {
        Self {
            start_ns: r.start_ns,
            deadline_ns: r.deadline_ns,
            woke_ns: r.woke_ns,
            lateness_ns: r.lateness_ns,
            native_ns: r.native_ns,
            spin_ns: r.spin_ns,
            native_oversleep_ns: r.native_oversleep_ns.unwrap_or(0),
            had_native_phase: r.native_oversleep_ns.is_some(),
            margin_ns: r.margin_ns,
        }
    }
}

/// Running totals over the sleeps of one sleeper (or ticker) since it was created or its
/// statistics were reset. Sums saturate.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Stats {
    /// Sleeps recorded.
    pub count: u64,
    /// Sum of their lateness.
    pub total_lateness_ns: u64,
    /// Largest lateness.
    pub max_lateness_ns: u64,
    /// Mean lateness (0 when `count` is 0).
    pub mean_lateness_ns: f64,
    /// Sum of the spin phases: roughly the CPU the sleeper burned.
    pub total_spin_ns: u64,
    /// Sum of the native phases.
    pub total_native_ns: u64,
    /// Sleeps that had a native phase.
    pub native_sleeps: u64,
    /// Native wakeups later than the margin estimator's cap: counted, not learned (host
    /// stalls).
    pub stalls: u64,
}

impl From<SleepStats> for Stats {
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
        }
    }
}

/// Whether the CPU budget covers the tail of this machine's wakeups: what the sleeper
/// wanted to spin and what its budget let it.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budget {
    /// Sleeps (since the statistics were reset) whose margin the CPU budget cut below what
    /// the learned quantile called for: a wakeup in that tail returns late.
    pub limited_sleeps: u64,
    /// Of those, the largest margin the quantile called for.
    pub wanted_margin_ns: u64,
    /// ... and the length of that sleep (from its start to its deadline).
    pub wanted_wait_ns: u64,
    /// The budget that would have covered them, percent of each sleep
    /// (`wanted_margin_ns / wanted_wait_ns`); 0 when no sleep was limited.
    pub wanted_percent: f64,
    /// The margin the quantile calls for now (the estimator's margin less the lateness
    /// tolerance), before the budget and the contended regimes cut it.
    pub quantile_margin_ns: u64,
}

impl Budget {
    /// The budget view of a sleeper: its statistics and its estimator now.
    pub fn of(stats: SleepStats, quantile_margin_ns: u64) -> Self {
        Self {
            limited_sleeps: stats.budget_limited,
            wanted_margin_ns: stats.wanted_margin_ns,
            wanted_wait_ns: stats.wanted_wait_ns,
            wanted_percent: stats.budget_wanted_percent().unwrap_or(0.0),
            quantile_margin_ns,
        }
    }
}

/// One tick of a ticker.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tick {
    /// 0-based number of this tick.
    pub index: u64,
    /// When it was due (`start + k·period` on the grid).
    pub scheduled_ns: u64,
    /// When it fired.
    pub woke_ns: u64,
    /// `woke_ns - scheduled_ns`.
    pub lateness_ns: u64,
    /// Ticks missed at this tick (see `SLEEPLAB_MISSED_*`).
    pub missed: u64,
    /// The sleep behind this tick.
    pub sleep: Report,
}

impl From<CoreTick> for Tick {
    fn from(t: CoreTick) -> Self {
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

/// Where a ticker stands.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TickerState {
    /// The period.
    pub period_ns: u64,
    /// The grid origin (moves when `SLEEPLAB_MISSED_DELAY` reschedules).
    pub start_ns: u64,
    /// When the next tick is due.
    pub next_ns: u64,
    /// Ticks returned so far.
    pub ticks: u64,
    /// Ticks missed so far.
    pub missed_ticks: u64,
    /// The missed-tick behaviour (`SLEEPLAB_MISSED_*`).
    pub missed_behavior: i32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    /// The layouts of the structs C allocates and the library writes, as programs linked
    /// against this SONAME know them. They never change under one SONAME (the header's
    /// ABI rule): a program compiled against the old header would have the library write
    /// past its struct. If this fails, the change needs the next major version (a new
    /// SONAME, build.rs), and these numbers with it.
    #[test]
    fn struct_layouts_are_those_of_this_soname() {
        assert_eq!(env!("SLEEPLAB_SONAME"), "libsleeplab.so.0");
        let report = [
            offset_of!(Report, start_ns),
            offset_of!(Report, deadline_ns),
            offset_of!(Report, woke_ns),
            offset_of!(Report, lateness_ns),
            offset_of!(Report, native_ns),
            offset_of!(Report, spin_ns),
            offset_of!(Report, native_oversleep_ns),
            offset_of!(Report, had_native_phase),
            offset_of!(Report, margin_ns),
        ];
        assert_eq!(report, [0, 8, 16, 24, 32, 40, 48, 56, 64]);
        assert_eq!((size_of::<Report>(), align_of::<Report>()), (72, 8));
        let stats = [
            offset_of!(Stats, count),
            offset_of!(Stats, total_lateness_ns),
            offset_of!(Stats, max_lateness_ns),
            offset_of!(Stats, mean_lateness_ns),
            offset_of!(Stats, total_spin_ns),
            offset_of!(Stats, total_native_ns),
            offset_of!(Stats, native_sleeps),
            offset_of!(Stats, stalls),
        ];
        assert_eq!(stats, [0, 8, 16, 24, 32, 40, 48, 56]);
        assert_eq!((size_of::<Stats>(), align_of::<Stats>()), (64, 8));
        let tick = [
            offset_of!(Tick, index),
            offset_of!(Tick, scheduled_ns),
            offset_of!(Tick, woke_ns),
            offset_of!(Tick, lateness_ns),
            offset_of!(Tick, missed),
            offset_of!(Tick, sleep),
        ];
        assert_eq!(tick, [0, 8, 16, 24, 32, 40]);
        assert_eq!((size_of::<Tick>(), align_of::<Tick>()), (112, 8));
        let state = [
            offset_of!(TickerState, period_ns),
            offset_of!(TickerState, start_ns),
            offset_of!(TickerState, next_ns),
            offset_of!(TickerState, ticks),
            offset_of!(TickerState, missed_ticks),
            offset_of!(TickerState, missed_behavior),
        ];
        assert_eq!(state, [0, 8, 16, 24, 32, 40]);
        assert_eq!(
            (size_of::<TickerState>(), align_of::<TickerState>()),
            (48, 8)
        );
        let budget = [
            offset_of!(Budget, limited_sleeps),
            offset_of!(Budget, wanted_margin_ns),
            offset_of!(Budget, wanted_wait_ns),
            offset_of!(Budget, wanted_percent),
            offset_of!(Budget, quantile_margin_ns),
        ];
        assert_eq!(budget, [0, 8, 16, 24, 32]);
        assert_eq!((size_of::<Budget>(), align_of::<Budget>()), (40, 8));
    }
}
