//! The timeouts of the I/O multiplexers: `select`, `pselect`, `poll`, `ppoll`, `epoll`.
//!
//! Each waits on no file descriptor at all, so only the timeout can end it. After an
//! `EINTR` the remaining time is recomputed from the clock toward the original deadline
//! and rounded up to the API's unit again.

use super::{Family, Mechanism, OneShot, ceil_div, remaining};
use crate::clock::{monotonic_ns, ns_to_timespec};
use crate::sys::{self, Epoll};
use crate::wait::WaitError;

/// Runs `call` with the time left until `now + ns` until it stops failing with `EINTR`.
/// `call` gets the remaining ns (the full request on the first try) and returns whether
/// it failed with EINTR.
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
    r < 0 && sys::errno() == libc::EINTR
}

fn ms_timeout(ns: u64) -> libc::c_int {
    libc::c_int::try_from(ceil_div(ns, 1_000_000)).unwrap_or(libc::c_int::MAX)
}

/// `select` with a timeval (µs, rounded up).
struct Select;

impl OneShot for Select {
    fn wait(&mut self, ns: u64) {
        until_deadline(ns, |left| {
            let mut tv = sys::timeval_us(ceil_div(left, 1_000));
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
}

pub(super) const SELECT: Mechanism = Mechanism {
    unit_ns: 1_000,
    ..Mechanism::ns(
        "select",
        Family::Poll,
        "select(2) with no fds and a timeval timeout (µs, rounded up)",
        || Ok(Box::new(Select)),
    )
};

/// `pselect` with a timespec (ns).
struct Pselect;

impl OneShot for Pselect {
    fn wait(&mut self, ns: u64) {
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
}

pub(super) const PSELECT: Mechanism = Mechanism::ns(
    "pselect",
    Family::Poll,
    "pselect(2) with no fds and a timespec timeout (ns)",
    || Ok(Box::new(Pselect)),
);

/// `poll` with a ms timeout (rounded up).
struct Poll;

impl OneShot for Poll {
    fn wait(&mut self, ns: u64) {
        until_deadline(ns, |left| {
            // SAFETY: zero fds, a null array is fine.
            let r = unsafe { libc::poll(std::ptr::null_mut(), 0, ms_timeout(left)) };
            interrupted(r)
        });
    }
}

pub(super) const POLL: Mechanism = Mechanism {
    unit_ns: 1_000_000,
    ..Mechanism::ns(
        "poll",
        Family::Poll,
        "poll(2) with no fds; the timeout is in ms (rounded up)",
        || Ok(Box::new(Poll)),
    )
};

/// `ppoll` with a timespec (ns).
struct Ppoll;

impl OneShot for Ppoll {
    fn wait(&mut self, ns: u64) {
        until_deadline(ns, |left| {
            let ts = ns_to_timespec(left);
            // SAFETY: zero fds; ts valid; null sigmask.
            let r = unsafe { libc::ppoll(std::ptr::null_mut(), 0, &ts, std::ptr::null()) };
            interrupted(r)
        });
    }
}

pub(super) const PPOLL: Mechanism = Mechanism::ns(
    "ppoll",
    Family::Poll,
    "ppoll(2) with no fds and a timespec timeout (ns)",
    || Ok(Box::new(Ppoll)),
);

/// `epoll_wait` on an empty epoll set, with a ms timeout (rounded up).
struct EpollWait(Epoll);

impl OneShot for EpollWait {
    fn wait(&mut self, ns: u64) {
        until_deadline(ns, |left| interrupted(self.0.wait(ms_timeout(left))));
    }
}

pub(super) const EPOLL: Mechanism = Mechanism {
    unit_ns: 1_000_000,
    ..Mechanism::ns(
        "epoll",
        Family::Poll,
        "epoll_wait(2) on an empty epoll set; the timeout is in ms (rounded up)",
        || Ok(Box::new(EpollWait(empty_epoll()?))),
    )
};

/// `epoll_pwait2` on an empty epoll set, with a timespec (ns).
struct EpollPwait2(Epoll);

impl OneShot for EpollPwait2 {
    fn wait(&mut self, ns: u64) {
        until_deadline(ns, |left| interrupted(self.0.pwait2(left)));
    }
}

pub(super) const EPOLL_PWAIT2: Mechanism = Mechanism::ns(
    "epoll-pwait2",
    Family::Poll,
    "epoll_pwait2(2) on an empty epoll set with a timespec timeout (ns, Linux 5.11+)",
    || {
        let ep = empty_epoll()?;
        // Fails with the reason when the kernel lacks epoll_pwait2 (Linux < 5.11).
        if ep.pwait2(0) < 0 && sys::errno() != libc::EINTR {
            return Err(WaitError::unsupported(sys::OsError::last("epoll_pwait2")));
        }
        Ok(Box::new(EpollPwait2(ep)))
    },
);

fn empty_epoll() -> Result<Epoll, WaitError> {
    Epoll::new().map_err(WaitError::unsupported)
}
