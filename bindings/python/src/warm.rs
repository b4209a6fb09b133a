//! The way back into Python, warmed just before the deadline.
//!
//! A precise wait ends in a spin that returns at the first clock read at or after its
//! deadline, but the caller sees the deadline only once Python runs again, and after a
//! long native sleep everything that return touches is cold: on a virtual machine the
//! host ran other work on the halted vCPU's core (and on its hyperthread sibling) and
//! took the caches and TLBs with it. On the project's 2-core KVM guest, from the spin's
//! last clock read to the caller's next `time.monotonic_ns()` took a median of about
//! 0.8 µs after a 30 µs wait, 6 µs after a 1 ms one and 31 µs after a 60 Hz frame's:
//! 3 µs in the library's bookkeeping, 4 µs in the final signal check and 22 µs in the
//! interpreter. Warming it right after the native wake helped less (21–23 µs): the spin
//! that follows runs for hundreds of microseconds, long enough for the sibling to evict
//! it again.
//!
//! So the wait warms it at the last moment: while it spins, a learned lead ([`Lead`])
//! before the deadline, it calls `sleeplab._warm_way_back` (Python code that reads the
//! clock, as the caller's next statement typically does) and makes its signal check,
//! then spins on to the deadline. The lead follows how long the recent warm-ups took, so
//! a warm-up ends before the deadline. Measured the same way: 14 µs from the last read
//! to the caller's (the interpreter's share 22 → 11 µs, the signal check 4 → 0.4 µs),
//! the lateness at the deadline unchanged at its median. What is left is the caller's
//! own frame, which no generic warm-up reaches cheaply (touching it through
//! `sys._getframe` cost more than it saved). The warm-up's time comes out of the spin,
//! so the CPU is the same; it shows as a gap of tens of µs in the spin, below the
//! 100 µs from which the library counts a spin as having lost its CPU.
//!
//! Only a wait that still has time does it (never after the deadline: there nothing is
//! gained). A signal handler that the interpreter runs inside the warm-up and that
//! raises (Ctrl-C's `KeyboardInterrupt`) is kept and raised when the wait returns, at
//! its deadline, as the wait's final signal check would have.

use std::cell::{Cell, RefCell};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use sleeplab::clock::monotonic_ns;

thread_local! {
    /// When the armed wait warms the way back (ns on CLOCK_MONOTONIC); `u64::MAX` while
    /// no wait is armed or it has warmed already. Read on every clock read of a spin.
    static AT: Cell<u64> = const { Cell::new(u64::MAX) };
    /// The armed wait's deadline.
    static DEADLINE: Cell<u64> = const { Cell::new(0) };
    /// The lead, learned per thread, and an error a warm-up raised.
    static STATE: RefCell<(Lead, Option<PyErr>)> = RefCell::new((Lead::default(), None));
}

/// How long before the deadline the warm-up starts: learned from the durations of the
/// recent warm-ups.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lead {
    /// The last [`Lead::KEPT`] durations, ns (0: no sample yet).
    recent: [u64; Lead::KEPT],
    next: usize,
}

impl Lead {
    /// Warm-ups remembered.
    const KEPT: usize = 8;
    /// The lead before two warm-ups were timed, ns: the longest, as the first warm-ups
    /// of a thread are the slowest (the package's lookup, everything cold).
    const FIRST_NS: u64 = Self::MAX_NS;
    /// The shortest lead, ns.
    const MIN_NS: u64 = 5_000;
    /// The longest lead, ns: a warm-up that took longer lost its CPU, which says nothing
    /// about the next one.
    const MAX_NS: u64 = 100_000;

    /// Notes how long a warm-up took.
    pub(crate) fn observe(&mut self, took_ns: u64) {
        self.recent[self.next] = took_ns.max(1);
        self.next = (self.next + 1) % Self::KEPT;
    }

    /// The lead for the next wait, ns: the second-longest of the recent warm-ups (one
    /// that lost its CPU does not set it), plus a quarter and 2 µs, within
    /// [`MIN_NS`](Self::MIN_NS)..=[`MAX_NS`](Self::MAX_NS); [`FIRST_NS`](Self::FIRST_NS)
    /// until two warm-ups were timed.
    pub(crate) fn ns(&self) -> u64 {
        let mut seen = self.recent;
        seen.sort_unstable_by(|a, b| b.cmp(a));
        let base = seen[1];
        if base == 0 {
            return Self::FIRST_NS;
        }
        (base + base / 4 + 2_000).clamp(Self::MIN_NS, Self::MAX_NS)
    }
}

/// Arms the warm-up for a wait that ends at `deadline`.
pub(crate) fn arm(deadline: u64) {
    let lead = STATE.with_borrow(|(lead, _)| lead.ns());
    DEADLINE.set(deadline);
    AT.set(deadline.saturating_sub(lead));
}

/// Disarms it when the wait returns; the error a warm-up raised, if any.
pub(crate) fn disarm() -> Option<PyErr> {
    AT.set(u64::MAX);
    STATE.with_borrow_mut(|(_, pending)| pending.take())
}

/// Called with every clock reading `t` of a wait on the GIL-holding environment: at the
/// armed instant (and before the deadline) warms the way back, once. Returns `t` either
/// way, the reading as taken: a warm-up at the native wake's reading must not count as
/// oversleep (the margin would learn it); the spin's next reading shows its time.
#[inline]
pub(crate) fn on_read(t: u64) -> u64 {
    if t < AT.get() {
        return t;
    }
    AT.set(u64::MAX);
    if t >= DEADLINE.get() {
        return t;
    }
    let raised = Python::attach(|py| warm_up(py).err());
    let took = monotonic_ns().saturating_sub(t);
    STATE.with_borrow_mut(|(lead, pending)| {
        lead.observe(took);
        if raised.is_some() {
            *pending = raised;
        }
    });
    t
}

/// Runs `sleeplab._warm_way_back()`, looked up at each call (so a test can replace
/// it), then the signal check.
fn warm_up(py: Python<'_>) -> PyResult<()> {
    static PACKAGE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let package = PACKAGE.get_or_try_init(py, || py.import("sleeplab").map(Bound::unbind))?;
    package.bind(py).getattr("_warm_way_back")?.call0()?;
    // The wait's own last step: its signal check (a handler that raises is kept).
    py.check_signals()
}

/// The lead after warm-ups that took `durations_ns` (oldest first), ns: `Lead`'s rule,
/// for the tests.
#[pyfunction]
pub(crate) fn _warm_lead_ns(durations_ns: Vec<u64>) -> u64 {
    let mut lead = Lead::default();
    for d in durations_ns {
        lead.observe(d);
    }
    lead.ns()
}
