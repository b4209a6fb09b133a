//! Waiting without sleeping: `sched_yield` and a busy-wait on the monotonic clock.

use super::{Family, Mechanism, OneShot};
use crate::clock::monotonic_ns;
use crate::precise::spin_log;
use crate::sys;

/// `sched_yield`: gives the CPU to another runnable thread, if there is one.
struct Yield;

impl OneShot for Yield {
    #[inline]
    fn wait(&mut self, _ns: u64) {
        sys::sched_yield();
    }
}

pub(super) const YIELD: Mechanism = Mechanism {
    takes_duration: false,
    ..Mechanism::ns(
        "yield",
        Family::Busy,
        "sched_yield(2); ignores the duration (measured at 0 only)",
        || Ok(Box::new(Yield)),
    )
    .without_slack()
};

/// Spins on CLOCK_MONOTONIC with a `pause` hint until the deadline.
struct Spin;

impl OneShot for Spin {
    #[inline]
    fn wait(&mut self, ns: u64) {
        spin_until(monotonic_ns().saturating_add(ns));
    }
}

pub(super) const SPIN: Mechanism = Mechanism::ns(
    "spin",
    Family::Busy,
    "busy-wait reading CLOCK_MONOTONIC until the deadline",
    || Ok(Box::new(Spin)),
)
.without_slack();

/// Spins with a `pause` hint until CLOCK_MONOTONIC reaches `deadline`; returns the clock
/// read that ended the spin. Its gaps go to the [`spin_log`] when installed.
#[inline]
pub(crate) fn spin_until(deadline: u64) -> u64 {
    // Gaps are logged only while a tracer installed the log (one read per call).
    let log = spin_log::threshold();
    // No read before the loop: the first gap is measured from the first read (from
    // `u64::MAX`, it saturates to 0), so a spin reads the clock as often as before.
    let mut prev = u64::MAX;
    loop {
        let now = monotonic_ns();
        if now.saturating_sub(prev) >= log {
            spin_log::note(prev, now);
        }
        prev = now;
        if now >= deadline {
            return now;
        }
        std::hint::spin_loop();
    }
}
