//! One wake as the measuring code saw it: the window a wake's account splits.

/// One wake as the measuring code saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The thread that waited.
    pub tid: i32,
    /// Its clock read before the wait, ns (CLOCK_MONOTONIC).
    pub start_ns: u64,
    /// When it asked to wake, ns.
    pub deadline_ns: u64,
    /// Its clock read after the wait, ns.
    pub end_ns: u64,
    /// How long it spun at the end on purpose (the precise sleeper's report), ns.
    pub spin_ns: u64,
    /// Whether the wait can block at all (false: a spin, a yield — its time is spin).
    pub may_block: bool,
    /// The thread's voluntary context switches during the wait, where they were read
    /// (`getrusage` around it): the evidence, independent of the trace, of whether it
    /// blocked.
    pub voluntary_switches: Option<u64>,
}

impl Window {
    /// A relative wait of `requested_ns` timed from `start_ns` to `end_ns` (one that
    /// can block, its context switches not read).
    pub fn relative(tid: i32, start_ns: u64, requested_ns: u64, end_ns: u64) -> Self {
        Self::until(tid, start_ns, start_ns.saturating_add(requested_ns), end_ns)
    }

    /// A wait from `start_ns` for `deadline_ns`, timed to `end_ns` (one that can block,
    /// its context switches not read).
    pub fn until(tid: i32, start_ns: u64, deadline_ns: u64, end_ns: u64) -> Self {
        Self {
            tid,
            start_ns,
            deadline_ns,
            end_ns,
            spin_ns: 0,
            may_block: true,
            voluntary_switches: None,
        }
    }

    /// The window of a strategy's wait as its report tells it (thread `tid`): to its
    /// deadline, its last `spin_ns` spun on purpose, and one that never blocks where it
    /// had no native (sleeping) phase at all (a spin, or a deadline already near).
    pub fn of_report(tid: i32, r: &sleeplab::precise::SleepReport) -> Self {
        Self::until(tid, r.start_ns, r.deadline_ns, r.woke_ns)
            .spinning(r.spin_ns)
            .never_blocking(r.native_oversleep_ns.is_none() && r.native_ns == 0)
    }

    /// The same window, its last `spin_ns` spun on purpose.
    pub fn spinning(self, spin_ns: u64) -> Self {
        Self { spin_ns, ..self }
    }

    /// The same window of a wait that never blocks (a spin, a yield) when `never`.
    pub fn never_blocking(self, never: bool) -> Self {
        Self {
            may_block: self.may_block && !never,
            ..self
        }
    }

    /// The same window with the thread's voluntary context switches during it.
    pub fn with_switches(self, voluntary: u64) -> Self {
        Self {
            voluntary_switches: Some(voluntary),
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sleeplab::precise::SleepReport;

    /// A strategy's wait with no native phase (a spin) never blocks; one that slept may.
    #[test]
    fn a_report_without_a_native_phase_never_blocks() {
        let spun = SleepReport::from_instants(1_000, 5_000, 1_000, 5_010, None, 0);
        let w = Window::of_report(7, &spun);
        assert!(!w.may_block);
        assert_eq!((w.spin_ns, w.deadline_ns, w.end_ns), (4_010, 5_000, 5_010));
        let slept = SleepReport::from_instants(1_000, 5_000, 4_000, 5_010, Some(0), 1_000);
        assert!(Window::of_report(7, &slept).may_block);
    }
}
