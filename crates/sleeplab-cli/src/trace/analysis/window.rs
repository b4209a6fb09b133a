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
