//! Timer file descriptors read to expiry: one-shot (fresh or reused) and interval.

use super::{WaitError, errno};
use crate::clock::ns_to_timespec;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// A CLOCK_MONOTONIC timerfd.
pub(super) struct TimerFd(OwnedFd);

impl TimerFd {
    pub(super) fn new() -> Result<Self, WaitError> {
        // SAFETY: plain syscall.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
        if fd < 0 {
            return Err(WaitError::os("timerfd_create"));
        }
        // SAFETY: fresh descriptor we own.
        Ok(Self(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn arm(&self, value_ns: u64, interval_ns: u64) {
        let spec = libc::itimerspec {
            it_interval: ns_to_timespec(interval_ns),
            // A zero value would disarm the timer (and a read would block forever).
            it_value: ns_to_timespec(value_ns.max(1)),
        };
        // SAFETY: valid fd and itimerspec; the old value is not wanted.
        unsafe { libc::timerfd_settime(self.0.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
    }

    /// Blocks until at least one expiry; returns the number of expirations read.
    /// `EINTR` does not end the wait: the timer still expires at the same time.
    fn read_expirations(&self) -> u64 {
        let mut count: u64 = 0;
        loop {
            // SAFETY: reading 8 bytes into a u64.
            let r = unsafe {
                libc::read(
                    self.0.as_raw_fd(),
                    (&mut count as *mut u64).cast::<libc::c_void>(),
                    8,
                )
            };
            if r == 8 {
                return count;
            }
            if r < 0 && errno() == libc::EINTR {
                continue;
            }
            return 0;
        }
    }

    /// Arms the timer one-shot for `ns` and reads it to expiry.
    pub(super) fn oneshot(&mut self, ns: u64) {
        self.arm(ns, 0);
        self.read_expirations();
    }
}

/// A timerfd created, armed, read and closed within one call.
pub(super) fn fresh_oneshot(ns: u64) {
    if let Ok(mut t) = TimerFd::new() {
        t.oneshot(ns);
    }
}

/// A timerfd armed once as an interval timer; re-armed only when the period changes.
pub(super) struct IntervalTimer {
    fd: TimerFd,
    period: u64,
    /// Expirations not yet handed out (a late read can collect several at once).
    pending: u64,
}

impl IntervalTimer {
    pub(super) fn new() -> Result<Self, WaitError> {
        Ok(Self {
            fd: TimerFd::new()?,
            period: 0,
            pending: 0,
        })
    }

    /// Waits for the next expiry of the interval timer with period `ns`.
    ///
    /// When a read returns several expirations (the caller was late), the extra ones are
    /// handed out by the next calls, which then return at once: every tick is delivered.
    pub(super) fn wait_next(&mut self, ns: u64) {
        let ns = ns.max(1);
        if ns != self.period {
            self.fd.arm(ns, ns);
            self.period = ns;
            self.pending = 0;
        }
        if self.pending == 0 {
            self.pending = self.fd.read_expirations();
        }
        self.pending = self.pending.saturating_sub(1);
    }
}
