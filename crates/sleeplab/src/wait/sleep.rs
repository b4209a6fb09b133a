//! The sleep calls: `nanosleep` and `clock_nanosleep`, relative and absolute.

use super::errno;
use crate::clock::{monotonic_ns, ns_to_timespec};

/// `nanosleep`, restarted with the kernel's remaining time after `EINTR`.
pub(super) fn nanosleep(ns: u64) {
    let mut req = ns_to_timespec(ns);
    let mut rem = ns_to_timespec(0);
    // SAFETY: valid timespec pointers for the duration of the call.
    while unsafe { libc::nanosleep(&req, &mut rem) } != 0 && errno() == libc::EINTR {
        req = rem;
    }
}

/// Relative `clock_nanosleep` on CLOCK_MONOTONIC, restarted with the remaining time.
pub(super) fn clock_nanosleep_rel(ns: u64) {
    let mut req = ns_to_timespec(ns);
    let mut rem = ns_to_timespec(0);
    loop {
        // SAFETY: valid timespec pointers; clock_nanosleep returns the error, not -1.
        let r = unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &req, &mut rem) };
        if r != libc::EINTR {
            break;
        }
        req = rem;
    }
}

/// Absolute `clock_nanosleep` to now + `ns`; after `EINTR` it sleeps to the same deadline.
pub(super) fn clock_nanosleep_abs(ns: u64) {
    let deadline = ns_to_timespec(monotonic_ns().saturating_add(ns));
    loop {
        // SAFETY: valid timespec pointer; no remainder with TIMER_ABSTIME.
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &deadline,
                std::ptr::null_mut(),
            )
        };
        if r != libc::EINTR {
            break;
        }
    }
}
