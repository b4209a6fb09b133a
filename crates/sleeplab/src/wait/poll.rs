//! The timeouts of the I/O multiplexers: `select`, `pselect`, `poll`, `ppoll`, `epoll`.
//!
//! Each waits on no file descriptor at all, so only the timeout can end it. After an
//! `EINTR` the remaining time is recomputed from the clock toward the original deadline
//! and rounded up to the API's unit again.

use super::{WaitError, ceil_div, errno, remaining};
use crate::clock::{monotonic_ns, ns_to_timespec};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Runs `call` with the time left until `now + ns` until it stops failing with `EINTR`.
/// `call` gets the remaining ns (the full request on the first try) and returns the raw
/// result and whether it failed with EINTR.
#[inline]
fn until_deadline(ns: u64, mut call: impl FnMut(u64) -> bool) {
    let deadline = monotonic_ns().saturating_add(ns);
    let mut left = ns;
    while call(left) {
        match remaining(deadline) {
            Some(l) => left = l,
            None => break,
        }
    }
}

fn interrupted(r: libc::c_int) -> bool {
    r < 0 && errno() == libc::EINTR
}

fn ms_timeout(ns: u64) -> libc::c_int {
    libc::c_int::try_from(ceil_div(ns, 1_000_000)).unwrap_or(libc::c_int::MAX)
}

/// `select` with a timeval (µs, rounded up).
pub(super) fn select(ns: u64) {
    until_deadline(ns, |left| {
        let us = ceil_div(left, 1_000);
        let mut tv = libc::timeval {
            tv_sec: (us / 1_000_000) as libc::time_t,
            tv_usec: (us % 1_000_000) as libc::suseconds_t,
        };
        // SAFETY: null fd sets are allowed; tv is valid.
        let r = unsafe {
            libc::select(
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut tv,
            )
        };
        interrupted(r)
    });
}

/// `pselect` with a timespec (ns).
pub(super) fn pselect(ns: u64) {
    until_deadline(ns, |left| {
        let ts = ns_to_timespec(left);
        // SAFETY: null fd sets and sigmask are allowed; ts is valid.
        let r = unsafe {
            libc::pselect(
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &ts,
                std::ptr::null(),
            )
        };
        interrupted(r)
    });
}

/// `poll` with a ms timeout (rounded up).
pub(super) fn poll(ns: u64) {
    until_deadline(ns, |left| {
        // SAFETY: zero fds, a null array is fine.
        let r = unsafe { libc::poll(std::ptr::null_mut(), 0, ms_timeout(left)) };
        interrupted(r)
    });
}

/// `ppoll` with a timespec (ns).
pub(super) fn ppoll(ns: u64) {
    until_deadline(ns, |left| {
        let ts = ns_to_timespec(left);
        // SAFETY: zero fds; ts valid; null sigmask.
        let r = unsafe { libc::ppoll(std::ptr::null_mut(), 0, &ts, std::ptr::null()) };
        interrupted(r)
    });
}

/// An epoll instance with nothing registered in it.
pub(super) struct EpollFd(OwnedFd);

impl EpollFd {
    pub(super) fn new() -> Result<Self, WaitError> {
        // SAFETY: plain syscall.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(WaitError::os("epoll_create1"));
        }
        // SAFETY: fd is a fresh descriptor we own.
        Ok(Self(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn pwait2(&self, ns: u64) -> libc::c_int {
        let ts = ns_to_timespec(ns);
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: epoll_pwait2(epfd, events, maxevents, timeout, sigmask, sigsetsize);
        // valid pointers, null sigmask.
        unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.0.as_raw_fd(),
                &mut ev as *mut libc::epoll_event,
                1 as libc::c_int,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            ) as libc::c_int
        }
    }

    /// Fails with the reason when the kernel lacks `epoll_pwait2` (Linux < 5.11).
    pub(super) fn probe_pwait2(&self) -> Result<(), WaitError> {
        if self.pwait2(0) < 0 && errno() != libc::EINTR {
            return Err(WaitError::os("epoll_pwait2"));
        }
        Ok(())
    }

    /// `epoll_wait` with a ms timeout (rounded up).
    pub(super) fn wait_ms(&self, ns: u64) {
        let fd = self.0.as_raw_fd();
        until_deadline(ns, |left| {
            let mut ev = libc::epoll_event { events: 0, u64: 0 };
            // SAFETY: valid epoll fd and event buffer of length 1.
            let r = unsafe { libc::epoll_wait(fd, &mut ev, 1, ms_timeout(left)) };
            interrupted(r)
        });
    }

    /// `epoll_pwait2` with a timespec (ns).
    pub(super) fn wait_pwait2(&self, ns: u64) {
        until_deadline(ns, |left| interrupted(self.pwait2(left)));
    }
}
