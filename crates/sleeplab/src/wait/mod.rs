//! Every Linux wait mechanism as a named, listable entry.
//!
//! A [`Mechanism`] describes one way to wait (its name, what it calls, the unit its API
//! takes, whether it takes a duration at all). [`Waiter::new`] creates the per-thread
//! state it needs (an epoll or timer fd, a futex word…), and [`Waiter::wait`] waits for
//! a requested number of nanoseconds.
//!
//! Rules every mechanism follows:
//! * A signal that interrupts a wait does not end it: the wait resumes toward the same
//!   deadline (so an `EINTR` never shows up as an early wakeup).
//! * APIs with a coarse unit (µs for `select`, ms for `poll`/`epoll`) get the request
//!   rounded *up* to that unit, so they never return before the requested time; the
//!   rounding is a finding the sweep shows (a 100 µs `poll` waits at least 1 ms).
//! * `timerfd-interval` is a periodic timer measured call by call: each call waits for
//!   the next expiry, whose phase was set when the timer was armed, so a single call can
//!   be shorter than requested by the time spent between calls. That is reported, never
//!   hidden.

mod futex;
mod poll;
mod sleep;
mod spin;
mod timerfd;

use std::fmt;

/// What a mechanism family waits on, for grouping in listings and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Sleep calls: `nanosleep`, `clock_nanosleep`, `std::thread::sleep`.
    Sleep,
    /// The timeout of an I/O multiplexer: `select`, `poll`, `epoll`.
    Poll,
    /// A timer file descriptor read to expiry.
    Timerfd,
    /// A timed wait on a synchronisation primitive: futex, condition variable.
    Sync,
    /// No sleep at all: yielding or spinning.
    Busy,
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Family::Sleep => "sleep",
            Family::Poll => "poll",
            Family::Timerfd => "timerfd",
            Family::Sync => "sync",
            Family::Busy => "busy",
        })
    }
}

/// A named wait mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mechanism {
    /// The name used on the command line and in results, e.g. `clock-nanosleep-abs`.
    pub name: &'static str,
    /// One line on what it calls.
    pub description: &'static str,
    /// Which family it belongs to.
    pub family: Family,
    /// The granularity of the API's timeout argument in ns (1 for ns APIs, 1000 for
    /// `select`, 1 000 000 for `poll`/`epoll`); requests are rounded up to it.
    pub unit_ns: u64,
    /// The smallest request it accepts (timerfd cannot express 0: a zero timer is a
    /// disarmed timer, and a read would block forever).
    pub min_ns: u64,
    /// False for mechanisms that ignore the duration (`yield`): they are measured at 0 only.
    pub takes_duration: bool,
}

const MECHANISMS: &[Mechanism] = &[
    Mechanism {
        name: "std-sleep",
        description: "std::thread::sleep (nanosleep underneath, resumes after EINTR)",
        family: Family::Sleep,
        unit_ns: 1,
        min_ns: 0,
        takes_duration: true,
    },
    Mechanism {
        name: "nanosleep",
        description: "nanosleep(2), relative; restarted with the remaining time after EINTR",
        family: Family::Sleep,
        unit_ns: 1,
        min_ns: 0,
        takes_duration: true,
    },
    Mechanism {
        name: "clock-nanosleep",
        description: "clock_nanosleep(CLOCK_MONOTONIC), relative",
        family: Family::Sleep,
        unit_ns: 1,
        min_ns: 0,
        takes_duration: true,
    },
    Mechanism {
        name: "clock-nanosleep-abs",
        description: "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to now + d",
        family: Family::Sleep,
        unit_ns: 1,
        min_ns: 0,
        takes_duration: true,
    },
    Mechanism {
        name: "select",
        description: "select(2) with no fds and a timeval timeout (µs, rounded up)",
        family: Family::Poll,
        unit_ns: 1_000,
        min_ns: 0,
        takes_duration: true,
    },
    Mechanism {
        name: "pselect",
        description: "pselect(2) with no fds and a timespec timeout (ns)",
        family: Family::Poll,
        unit_ns: 1,
        min_ns: 0,
        takes_duration: true,
    },
    Mechanism {
        name: "poll",
        description: "poll(2) with no fds; the timeout is in ms (rounded up)",
        family: Family::Poll,
        unit_ns: 1_000_000,
        min_ns: 0,
        takes_duration: true,
    },
    Mechanism {
        name: "ppoll",
        description: "ppoll(2) with no fds and a timespec timeout (ns)",
        family: Family::Poll,
        unit_ns: 1,
        min_ns: 0,
        takes_duration: true,
    },
    Mechanism {
        name: "epoll",
        description: "epoll_wait(2) on an empty epoll set; the timeout is in ms (rounded up)",
        family: Family::Poll,
        unit_ns: 1_000_000,
        min_ns: 0,
        takes_duration: true,
    },
    Mechanism {
        name: "epoll-pwait2",
        description: "epoll_pwait2(2) on an empty epoll set with a timespec timeout (ns, Linux 5.11+)",
        family: Family::Poll,
        unit_ns: 1,
        min_ns: 0,
        takes_duration: true,
    },
    Mechanism {
        name: "timerfd",
        description: "timerfd created, armed one-shot, read to expiry and closed on every call",
        family: Family::Timerfd,
        unit_ns: 1,
        min_ns: 1,
        takes_duration: true,
    },
    Mechanism {
        name: "timerfd-reuse",
        description: "one timerfd re-armed one-shot on every call and read to expiry",
        family: Family::Timerfd,
        unit_ns: 1,
        min_ns: 1,
        takes_duration: true,
    },
    Mechanism {
        name: "timerfd-interval",
        description: "one timerfd armed once as an interval timer; each call reads the next expiry",
        family: Family::Timerfd,
        unit_ns: 1,
        min_ns: 1,
        takes_duration: true,
    },
    Mechanism {
        name: "futex",
        description: "FUTEX_WAIT with a timeout on a private word nobody wakes",
        family: Family::Sync,
        unit_ns: 1,
        min_ns: 0,
        takes_duration: true,
    },
    Mechanism {
        name: "condvar",
        description: "std::sync::Condvar::wait_timeout, nobody notifies (loops over spurious wakeups)",
        family: Family::Sync,
        unit_ns: 1,
        min_ns: 0,
        takes_duration: true,
    },
    Mechanism {
        name: "yield",
        description: "sched_yield(2); ignores the duration (measured at 0 only)",
        family: Family::Busy,
        unit_ns: 1,
        min_ns: 0,
        takes_duration: false,
    },
    Mechanism {
        name: "spin",
        description: "busy-wait reading CLOCK_MONOTONIC until the deadline",
        family: Family::Busy,
        unit_ns: 1,
        min_ns: 0,
        takes_duration: true,
    },
];

/// Every mechanism this crate knows, in a stable order.
pub fn mechanisms() -> &'static [Mechanism] {
    MECHANISMS
}

/// Looks a mechanism up by name.
pub fn find(name: &str) -> Option<&'static Mechanism> {
    MECHANISMS.iter().find(|m| m.name == name)
}

/// Whether a mechanism works on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// It works.
    Supported,
    /// It does not; the reason says why (e.g. `epoll_pwait2: ENOSYS (kernel < 5.11)`).
    Unsupported(String),
}

impl Mechanism {
    /// Checks whether this machine supports the mechanism by creating its state once.
    pub fn support(&self) -> Support {
        match Waiter::new(self.name) {
            Ok(_) => Support::Supported,
            Err(e) => Support::Unsupported(e.to_string()),
        }
    }

    /// Whether a request of `ns` is meaningful for this mechanism.
    pub fn accepts(&self, ns: u64) -> bool {
        ns >= self.min_ns && (self.takes_duration || ns == 0)
    }
}

/// An error creating a waiter.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    /// The name is not a known mechanism.
    #[error("unknown wait mechanism {0:?}")]
    Unknown(String),
    /// The mechanism exists but this machine cannot do it.
    #[error("{call}: {source}")]
    Unsupported {
        /// The call that failed.
        call: &'static str,
        /// Why.
        source: std::io::Error,
    },
}

impl WaitError {
    fn os(call: &'static str) -> Self {
        WaitError::Unsupported {
            call,
            source: std::io::Error::last_os_error(),
        }
    }
}

/// The per-thread state of one mechanism, ready to wait.
///
/// Create one per thread (it owns fds and is not `Sync`), then call [`wait`](Self::wait)
/// as often as needed. Dropping it releases its fds.
pub struct Waiter {
    mechanism: &'static Mechanism,
    state: State,
}

enum State {
    StdSleep,
    Nanosleep,
    ClockNanosleep,
    ClockNanosleepAbs,
    Select,
    Pselect,
    Poll,
    Ppoll,
    Epoll(poll::EpollFd),
    EpollPwait2(poll::EpollFd),
    Timerfd,
    TimerfdReuse(timerfd::TimerFd),
    TimerfdInterval(timerfd::IntervalTimer),
    Futex(futex::FutexWord),
    Condvar(futex::CondvarPair),
    Yield,
    Spin,
}

impl fmt::Debug for Waiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Waiter")
            .field("mechanism", &self.mechanism.name)
            .finish()
    }
}

impl Waiter {
    /// Creates the state for mechanism `name`.
    pub fn new(name: &str) -> Result<Self, WaitError> {
        let mechanism = find(name).ok_or_else(|| WaitError::Unknown(name.to_string()))?;
        let state = match mechanism.name {
            "std-sleep" => State::StdSleep,
            "nanosleep" => State::Nanosleep,
            "clock-nanosleep" => State::ClockNanosleep,
            "clock-nanosleep-abs" => State::ClockNanosleepAbs,
            "select" => State::Select,
            "pselect" => State::Pselect,
            "poll" => State::Poll,
            "ppoll" => State::Ppoll,
            "epoll" => State::Epoll(poll::EpollFd::new()?),
            "epoll-pwait2" => {
                let fd = poll::EpollFd::new()?;
                fd.probe_pwait2()?;
                State::EpollPwait2(fd)
            }
            "timerfd" => {
                // Check once that timerfds can be made here.
                drop(timerfd::TimerFd::new()?);
                State::Timerfd
            }
            "timerfd-reuse" => State::TimerfdReuse(timerfd::TimerFd::new()?),
            "timerfd-interval" => State::TimerfdInterval(timerfd::IntervalTimer::new()?),
            "futex" => State::Futex(futex::FutexWord::new()),
            "condvar" => State::Condvar(futex::CondvarPair::new()),
            "yield" => State::Yield,
            "spin" => State::Spin,
            other => return Err(WaitError::Unknown(other.to_string())),
        };
        Ok(Self { mechanism, state })
    }

    /// The mechanism this waiter implements.
    pub fn mechanism(&self) -> &'static Mechanism {
        self.mechanism
    }

    /// Waits for `ns` nanoseconds with this mechanism.
    ///
    /// Mechanisms that cannot express the request (see [`Mechanism::accepts`]) treat it
    /// as their minimum; the sweep never asks them to.
    #[inline]
    pub fn wait(&mut self, ns: u64) {
        match &mut self.state {
            State::StdSleep => std::thread::sleep(std::time::Duration::from_nanos(ns)),
            State::Nanosleep => sleep::nanosleep(ns),
            State::ClockNanosleep => sleep::clock_nanosleep_rel(ns),
            State::ClockNanosleepAbs => sleep::clock_nanosleep_abs(ns),
            State::Select => poll::select(ns),
            State::Pselect => poll::pselect(ns),
            State::Poll => poll::poll(ns),
            State::Ppoll => poll::ppoll(ns),
            State::Epoll(fd) => fd.wait_ms(ns),
            State::EpollPwait2(fd) => fd.wait_pwait2(ns),
            State::Timerfd => timerfd::fresh_oneshot(ns),
            State::TimerfdReuse(fd) => fd.oneshot(ns),
            State::TimerfdInterval(t) => t.wait_next(ns),
            State::Futex(w) => w.wait(ns),
            State::Condvar(c) => c.wait(ns),
            State::Yield => spin::yield_now(),
            State::Spin => spin::spin_for(ns),
        }
    }
}

/// Rounds `ns` up to a whole number of `unit`s, saturating.
#[inline]
pub(crate) fn ceil_div(ns: u64, unit: u64) -> u64 {
    ns / unit + u64::from(ns % unit != 0)
}

/// The time left until `deadline`, or `None` once it has passed.
#[inline]
pub(crate) fn remaining(deadline: u64) -> Option<u64> {
    let now = crate::clock::monotonic_ns();
    (now < deadline).then(|| deadline - now)
}

/// `errno` of the last failed call.
#[inline]
pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::monotonic_ns;

    #[test]
    fn names_are_unique_and_findable() {
        for (i, m) in mechanisms().iter().enumerate() {
            assert_eq!(find(m.name), Some(m));
            assert!(mechanisms()[..i].iter().all(|o| o.name != m.name));
        }
        assert!(find("nope").is_none());
        assert!(matches!(Waiter::new("nope"), Err(WaitError::Unknown(_))));
    }

    #[test]
    fn ceil_div_rounds_up() {
        assert_eq!(ceil_div(0, 1000), 0);
        assert_eq!(ceil_div(1, 1000), 1);
        assert_eq!(ceil_div(1000, 1000), 1);
        assert_eq!(ceil_div(1001, 1000), 2);
        assert_eq!(ceil_div(u64::MAX, 1), u64::MAX);
    }

    /// Every mechanism that takes a duration waits at least that long (timerfd-interval:
    /// its k-th return is at or after the k-th expiry of its schedule).
    #[test]
    fn every_mechanism_is_never_early() {
        for m in mechanisms() {
            let mut w = match Waiter::new(m.name) {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("skipping {}: {e}", m.name);
                    continue;
                }
            };
            for ns in [0u64, 1, 1_000, 50_000, 1_500_000] {
                if !m.accepts(ns) || m.name == "timerfd-interval" {
                    continue;
                }
                for _ in 0..3 {
                    let t0 = monotonic_ns();
                    w.wait(ns);
                    let dt = monotonic_ns() - t0;
                    assert!(dt >= ns, "{} waited {dt} ns for a {ns} ns request", m.name);
                }
            }
        }
    }

    #[test]
    fn timerfd_interval_follows_its_schedule() {
        let mut w = Waiter::new("timerfd-interval").unwrap();
        let period = 300_000;
        let t0 = monotonic_ns();
        for k in 1..=10u64 {
            w.wait(period);
            // Armed inside the first call, which started after t0.
            assert!(monotonic_ns() >= t0 + k * period);
        }
    }

    #[test]
    fn yield_only_accepts_zero() {
        let y = find("yield").unwrap();
        assert!(y.accepts(0));
        assert!(!y.accepts(1));
        let t = find("timerfd").unwrap();
        assert!(!t.accepts(0));
        assert!(t.accepts(1));
    }
}
