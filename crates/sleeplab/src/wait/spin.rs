//! Waiting without sleeping: `sched_yield` and a busy-wait on the monotonic clock.

use crate::clock::monotonic_ns;

/// `sched_yield`: gives the CPU to another runnable thread, if there is one.
#[inline]
pub(super) fn yield_now() {
    // SAFETY: no preconditions.
    unsafe { libc::sched_yield() };
}

/// Spins on CLOCK_MONOTONIC with a `pause` hint until `ns` have passed.
#[inline]
pub(super) fn spin_for(ns: u64) {
    let deadline = monotonic_ns().saturating_add(ns);
    while monotonic_ns() < deadline {
        std::hint::spin_loop();
    }
}
