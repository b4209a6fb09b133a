//! The sleep calls: `std::thread::sleep`, `nanosleep` and `clock_nanosleep`, relative
//! and absolute.

use super::{Family, Mechanism, OneShot};
use crate::clock::{monotonic_ns, ns_to_timespec};
use crate::sys;

/// `std::thread::sleep`.
struct StdSleep;

impl OneShot for StdSleep {
    #[inline]
    fn wait(&mut self, ns: u64) {
        std::thread::sleep(std::time::Duration::from_nanos(ns));
    }
}

pub(super) const STD_SLEEP: Mechanism = Mechanism::ns(
    "std-sleep",
    Family::Sleep,
    "std::thread::sleep (nanosleep underneath, resumes after EINTR)",
    || Ok(Box::new(StdSleep)),
);

/// `nanosleep`, restarted with the kernel's remaining time after `EINTR`.
struct Nanosleep;

impl OneShot for Nanosleep {
    #[inline]
    fn wait(&mut self, ns: u64) {
        sys::nanosleep_resuming(ns);
    }
}

pub(super) const NANOSLEEP: Mechanism = Mechanism::ns(
    "nanosleep",
    Family::Sleep,
    "nanosleep(2), relative; restarted with the remaining time after EINTR",
    || Ok(Box::new(Nanosleep)),
);

/// Relative `clock_nanosleep` on CLOCK_MONOTONIC, restarted with the remaining time.
struct ClockNanosleep;

impl OneShot for ClockNanosleep {
    #[inline]
    fn wait(&mut self, ns: u64) {
        let mut req = ns_to_timespec(ns);
        let mut rem = ns_to_timespec(0);
        while sys::clock_nanosleep_rel(&req, &mut rem) == libc::EINTR {
            req = rem;
        }
    }
}

pub(super) const CLOCK_NANOSLEEP: Mechanism = Mechanism::ns(
    "clock-nanosleep",
    Family::Sleep,
    "clock_nanosleep(CLOCK_MONOTONIC), relative",
    || Ok(Box::new(ClockNanosleep)),
);

/// Absolute `clock_nanosleep` to now + `ns`; after `EINTR` it sleeps to the same deadline.
struct ClockNanosleepAbs;

impl OneShot for ClockNanosleepAbs {
    #[inline]
    fn wait(&mut self, ns: u64) {
        sys::sleep_until(monotonic_ns().saturating_add(ns));
    }
}

pub(super) const CLOCK_NANOSLEEP_ABS: Mechanism = Mechanism::ns(
    "clock-nanosleep-abs",
    Family::Sleep,
    "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to now + d",
    || Ok(Box::new(ClockNanosleepAbs)),
);
