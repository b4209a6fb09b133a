//! What one wait did ([`SleepReport`]) and running totals over many ([`SleepStats`]).

/// What happened during one wait: when it was asked for, when it woke, and where the time
/// went. All timestamps are nanoseconds on the [`Env`](crate::clock::Env) time line.
///
/// Invariants: `start <= woke`, `woke >= deadline` (no strategy in this module returns
/// early, unless the caller gave `Precise` an early tolerance: then
/// `woke >= deadline − tolerance`), `native_ns + spin_ns == woke - start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SleepReport {
    /// When the wait began (first clock read).
    pub start_ns: u64,
    /// The deadline the wait was asked to reach.
    pub deadline_ns: u64,
    /// When the wait returned: the first clock read at or after `deadline`.
    pub woke_ns: u64,
    /// `woke - deadline`: how late the wait returned (0 is perfect).
    pub lateness_ns: u64,
    /// Time spent in the native (sleeping) phase, from `start` to the last native wakeup.
    pub native_ns: u64,
    /// Time spent spinning (or yielding) after the native phase, until `woke`.
    pub spin_ns: u64,
    /// How far the last native sleep overslept its own target (wake − target), or `None`
    /// when the wait had no native phase (deadline in the past, or spin only).
    pub native_oversleep_ns: Option<u64>,
    /// The margin the strategy planned to spin before the deadline (0 for pure sleeps).
    pub margin_ns: u64,
    /// The margin the learned quantile called for (the estimator's margin less the
    /// caller's lateness tolerance), before the CPU budget and the contended regimes cut
    /// it to `margin_ns`, ns (0 for strategies that learn nothing).
    pub wanted_margin_ns: u64,
    /// True when the CPU budget cut this wait's margin below `wanted_margin_ns`: the
    /// budget cannot cover the tail of this machine's wakeups at this wait's length, and
    /// a wakeup in that tail returns up to `wanted_margin_ns − margin_ns` late. A budget
    /// of `wanted_margin_ns / (deadline_ns − start_ns)` would cover it.
    pub budget_limited: bool,
    /// The longest time between two consecutive clock reads of the spin phase, counted
    /// from the native wakeup's reading (0 for pure sleeps). One spin iteration takes
    /// tens of ns; a gap of hundreds of µs or more means the thread lost its CPU while
    /// spinning (preempted by another thread, or the host descheduled the vCPU):
    /// [`preempted_while_spinning`](Self::preempted_while_spinning).
    pub max_spin_gap_ns: u64,
}

impl SleepReport {
    /// Builds a report from the four instants of a wait, saturating every difference so
    /// that inconsistent inputs never panic.
    ///
    /// `native_end` is the time of the last native wakeup (equal to `start` when there was
    /// no native phase).
    pub fn from_instants(
        start: u64,
        deadline: u64,
        native_end: u64,
        woke: u64,
        native_oversleep_ns: Option<u64>,
        margin_ns: u64,
    ) -> Self {
        let native_end = native_end.clamp(start, woke.max(start));
        Self {
            start_ns: start,
            deadline_ns: deadline,
            woke_ns: woke,
            lateness_ns: woke.saturating_sub(deadline),
            native_ns: native_end - start,
            spin_ns: woke.saturating_sub(native_end),
            native_oversleep_ns,
            margin_ns,
            wanted_margin_ns: 0,
            budget_limited: false,
            max_spin_gap_ns: 0,
        }
    }

    /// The same report with the margin its quantile called for, and whether the CPU
    /// budget cut the margin below it.
    pub fn with_wanted_margin(mut self, wanted_margin_ns: u64, budget_limited: bool) -> Self {
        self.wanted_margin_ns = wanted_margin_ns;
        self.budget_limited = budget_limited;
        self
    }

    /// A spin gap at least this long, ns (100 µs), means the thread lost its CPU while
    /// spinning: far above a spin iteration (tens of ns) or an interrupt (a few µs),
    /// far below a scheduler slice (ms).
    pub const PREEMPT_GAP_NS: u64 = 100_000;

    /// The same report with the spin phase's longest gap between clock reads.
    pub fn with_spin_gap(mut self, max_spin_gap_ns: u64) -> Self {
        self.max_spin_gap_ns = max_spin_gap_ns;
        self
    }

    /// True when the spin phase lost its CPU: a gap between consecutive clock reads of
    /// at least [`PREEMPT_GAP_NS`](Self::PREEMPT_GAP_NS).
    pub fn preempted_while_spinning(&self) -> bool {
        self.max_spin_gap_ns >= Self::PREEMPT_GAP_NS
    }

    /// True when the native phase itself ended after the deadline: the wakeup, not the
    /// spin, made the wait late.
    pub fn woken_late(&self) -> bool {
        self.native_oversleep_ns.is_some() && self.start_ns + self.native_ns > self.deadline_ns
    }

    /// The report of a wait whose deadline had already passed when it began at `start`:
    /// it returned at once, with no native phase.
    pub fn already_past(start: u64, deadline: u64) -> Self {
        Self::from_instants(start, deadline, start, start, None, 0)
    }

    /// How far before its deadline the wait returned, ns (0 unless it was early: only a
    /// sleeper with an early tolerance returns early, and by at most that tolerance).
    pub fn early_ns(&self) -> u64 {
        self.deadline_ns.saturating_sub(self.woke_ns)
    }

    /// True when the wait returned before its deadline (never the case for the strategies
    /// in this module; useful as a test oracle for others).
    pub fn is_early(&self) -> bool {
        self.woke_ns < self.deadline_ns
    }
}

/// Running totals over many waits. Bounded memory, O(1) per wait; sums saturate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SleepStats {
    /// Number of waits recorded.
    pub count: u64,
    /// Sum of `lateness_ns` over all waits (saturating).
    pub total_lateness_ns: u64,
    /// Largest `lateness_ns` seen.
    pub max_lateness_ns: u64,
    /// Sum of `spin_ns` (saturating): the CPU the spin phases burned, roughly.
    pub total_spin_ns: u64,
    /// Sum of `native_ns` (saturating).
    pub total_native_ns: u64,
    /// Waits that had a native phase.
    pub native_sleeps: u64,
    /// Native wakeups that overslept beyond the largest margin the trade-off allowed for
    /// that wait (its CPU ceiling): no allowed margin could have kept them on time. Only
    /// `Precise` fills this in.
    pub stalls: u64,
    /// The earliest return before a deadline, ns (0 unless an early tolerance allowed it).
    pub max_early_ns: u64,
    /// Waits whose spin phase lost its CPU
    /// ([`SleepReport::preempted_while_spinning`]).
    pub preempted_spins: u64,
    /// Waits whose native phase ended after the deadline ([`SleepReport::woken_late`]).
    pub woken_late: u64,
    /// Waits whose margin the CPU budget cut below what the learned quantile called for
    /// ([`SleepReport::budget_limited`]): the budget cannot cover the tail here.
    pub budget_limited: u64,
    /// Of those, the largest margin the quantile called for, ns, and the length of that
    /// wait (from its start to its deadline), ns: a budget of
    /// `wanted_margin_ns / wanted_wait_ns` would have covered it.
    pub wanted_margin_ns: u64,
    /// See [`wanted_margin_ns`](Self::wanted_margin_ns).
    pub wanted_wait_ns: u64,
}

impl SleepStats {
    /// Adds one wait to the totals.
    pub fn record(&mut self, r: &SleepReport) {
        self.count = self.count.saturating_add(1);
        self.total_lateness_ns = self.total_lateness_ns.saturating_add(r.lateness_ns);
        self.max_lateness_ns = self.max_lateness_ns.max(r.lateness_ns);
        self.max_early_ns = self.max_early_ns.max(r.early_ns());
        self.total_spin_ns = self.total_spin_ns.saturating_add(r.spin_ns);
        self.total_native_ns = self.total_native_ns.saturating_add(r.native_ns);
        if r.native_oversleep_ns.is_some() {
            self.native_sleeps = self.native_sleeps.saturating_add(1);
        }
        self.preempted_spins = self
            .preempted_spins
            .saturating_add(u64::from(r.preempted_while_spinning()));
        self.woken_late = self.woken_late.saturating_add(u64::from(r.woken_late()));
        if r.budget_limited {
            self.budget_limited = self.budget_limited.saturating_add(1);
            if r.wanted_margin_ns > self.wanted_margin_ns {
                self.wanted_margin_ns = r.wanted_margin_ns;
                self.wanted_wait_ns = r.deadline_ns.saturating_sub(r.start_ns);
            }
        }
    }

    /// The CPU budget that would have covered the tail of every budget-limited wait so
    /// far, percent of each wait (the largest wanted margin over its wait's length);
    /// `None` when the budget limited no wait.
    pub fn budget_wanted_percent(&self) -> Option<f64> {
        (self.budget_limited > 0 && self.wanted_wait_ns > 0)
            .then(|| self.wanted_margin_ns as f64 * 100.0 / self.wanted_wait_ns as f64)
    }

    /// Mean lateness in nanoseconds (0 when nothing was recorded).
    pub fn mean_lateness_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total_lateness_ns as f64 / self.count as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_from_instants_saturates() {
        let r = SleepReport::from_instants(100, 200, 150, 210, Some(3), 50);
        assert_eq!(r.lateness_ns, 10);
        assert_eq!(r.native_ns, 50);
        assert_eq!(r.spin_ns, 60);
        assert!(!r.is_early());
        // Nonsense inputs must not panic.
        let r = SleepReport::from_instants(u64::MAX, 0, 0, 5, None, 0);
        assert_eq!(r.native_ns + r.spin_ns, 0);
    }

    #[test]
    fn stats_accumulate() {
        let mut s = SleepStats::default();
        assert_eq!(s.mean_lateness_ns(), 0.0);
        s.record(&SleepReport::from_instants(0, 10, 5, 12, Some(1), 5));
        s.record(&SleepReport::from_instants(20, 30, 20, 34, None, 10));
        assert_eq!(s.count, 2);
        assert_eq!(s.max_lateness_ns, 4);
        assert_eq!(s.mean_lateness_ns(), 3.0);
        assert_eq!(s.native_sleeps, 1);
        assert_eq!(s.total_native_ns, 5);
        assert_eq!(s.total_spin_ns, 7 + 14);
        assert_eq!((s.budget_limited, s.budget_wanted_percent()), (0, None));
    }

    #[test]
    fn stats_keep_the_largest_margin_the_budget_refused() {
        let mut s = SleepStats::default();
        let wait = |start, deadline, wanted, limited| {
            SleepReport::from_instants(start, deadline, deadline - 10, deadline, Some(0), 10)
                .with_wanted_margin(wanted, limited)
        };
        s.record(&wait(0, 1_000_000, 300_000, true));
        s.record(&wait(0, 16_000_000, 800_000, true));
        s.record(&wait(0, 1_000_000, 900_000, false)); // not limited: not counted
        s.record(&wait(0, 2_000_000, 100_000, true));
        assert_eq!(s.budget_limited, 3);
        assert_eq!(
            (s.wanted_margin_ns, s.wanted_wait_ns),
            (800_000, 16_000_000)
        );
        assert_eq!(s.budget_wanted_percent(), Some(5.0));
    }
}
