//! The system calls a program waits on a timer with, by their numbers on this
//! architecture, and what their arguments say about the timeout.

use serde::{Deserialize, Serialize};

/// A system call that can block until a timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitCall {
    /// `nanosleep(req, rem)`.
    Nanosleep,
    /// `clock_nanosleep(clock, flags, req, rem)`, relative or absolute.
    ClockNanosleep,
    /// `poll(fds, n, timeout_ms)`.
    Poll,
    /// `ppoll(fds, n, timespec, sigmask)`.
    Ppoll,
    /// `select(n, r, w, e, timeval)`.
    Select,
    /// `pselect6(n, r, w, e, timespec, sigmask)`.
    Pselect6,
    /// `epoll_wait(fd, events, max, timeout_ms)`.
    EpollWait,
    /// `epoll_pwait(fd, events, max, timeout_ms, sigmask)`.
    EpollPwait,
    /// `epoll_pwait2(fd, events, max, timespec, sigmask)`.
    EpollPwait2,
    /// `futex(addr, FUTEX_WAIT…, val, timespec)`: a wait op (with or without a timeout).
    Futex,
    /// `futex_waitv(waiters, n, flags, timespec, clock)`.
    FutexWaitv,
    /// `io_uring_enter(fd, submit, min_complete, flags, …)` waiting for completions.
    IoUringEnter,
    /// `read(fd, buf, 8)` on a timerfd: it waits for the timer `timerfd_settime` armed
    /// (or, for a periodic one, the read before it re-armed). Known from the program's
    /// own calls, not from the number alone ([`WaitCall::of`] never returns it).
    TimerfdRead,
}

/// What a wait call's arguments say about its timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "ms")]
pub enum Timeout {
    /// No timeout: it waits for an event only.
    None,
    /// A timeout in whole milliseconds (`poll`, `epoll_wait`, `epoll_pwait`).
    Millis(i64),
    /// A timeout the call reads from the caller's memory (a `timespec` or `timeval`
    /// pointer): its length is known only from the timer the kernel armed.
    InMemory,
    /// A timer armed before the call (a timerfd's): its deadline is that timer's.
    Armed,
}

impl WaitCall {
    /// Every wait call.
    pub const ALL: [WaitCall; 13] = [
        WaitCall::Nanosleep,
        WaitCall::ClockNanosleep,
        WaitCall::Poll,
        WaitCall::Ppoll,
        WaitCall::Select,
        WaitCall::Pselect6,
        WaitCall::EpollWait,
        WaitCall::EpollPwait,
        WaitCall::EpollPwait2,
        WaitCall::Futex,
        WaitCall::FutexWaitv,
        WaitCall::IoUringEnter,
        WaitCall::TimerfdRead,
    ];

    /// Its name, as the system call is called.
    pub fn name(self) -> &'static str {
        match self {
            WaitCall::Nanosleep => "nanosleep",
            WaitCall::ClockNanosleep => "clock_nanosleep",
            WaitCall::Poll => "poll",
            WaitCall::Ppoll => "ppoll",
            WaitCall::Select => "select",
            WaitCall::Pselect6 => "pselect6",
            WaitCall::EpollWait => "epoll_wait",
            WaitCall::EpollPwait => "epoll_pwait",
            WaitCall::EpollPwait2 => "epoll_pwait2",
            WaitCall::Futex => "futex",
            WaitCall::FutexWaitv => "futex_waitv",
            WaitCall::IoUringEnter => "io_uring_enter",
            WaitCall::TimerfdRead => "timerfd_read",
        }
    }

    /// Its number on this architecture (`None`: the architecture has no such call).
    pub fn number(self) -> Option<i64> {
        number(self)
    }

    /// The wait call system call `id` with arguments `args` is: `None` for another
    /// call, and for the calls that do not wait in this use (a futex wake, an
    /// `io_uring_enter` that only submits).
    pub fn of(id: i64, args: &[u64; 6]) -> Option<WaitCall> {
        let call = WaitCall::ALL
            .into_iter()
            .filter(|&c| c != WaitCall::TimerfdRead)
            .find(|c| c.number() == Some(id))?;
        match call {
            WaitCall::Futex => is_futex_wait(args[1]).then_some(call),
            // IORING_ENTER_GETEVENTS: it waits for min_complete completions.
            WaitCall::IoUringEnter => (args[3] & 1 != 0).then_some(call),
            _ => Some(call),
        }
    }

    /// What its arguments say about its timeout.
    pub fn timeout(self, args: &[u64; 6]) -> Timeout {
        // A negative millisecond timeout waits forever; the kernel reads it as an int.
        let millis = |a: u64| match a as u32 as i32 {
            t if t < 0 => Timeout::None,
            t => Timeout::Millis(i64::from(t)),
        };
        let pointer = |a: u64| {
            if a == 0 {
                Timeout::None
            } else {
                Timeout::InMemory
            }
        };
        match self {
            WaitCall::Nanosleep | WaitCall::ClockNanosleep => Timeout::InMemory,
            WaitCall::Poll => millis(args[2]),
            WaitCall::EpollWait | WaitCall::EpollPwait => millis(args[3]),
            WaitCall::Ppoll => pointer(args[2]),
            WaitCall::Select | WaitCall::Pselect6 => pointer(args[4]),
            WaitCall::EpollPwait2 | WaitCall::Futex | WaitCall::FutexWaitv => pointer(args[3]),
            // IORING_ENTER_EXT_ARG: the argument block may carry a timeout; a timeout
            // request in the ring is one too. Known from the timer it arms.
            WaitCall::IoUringEnter => Timeout::InMemory,
            WaitCall::TimerfdRead => Timeout::Armed,
        }
    }

    /// Whether it takes its timeout in whole milliseconds, so that a shorter wait
    /// cannot be asked for (and its nanosecond-timeout sibling).
    pub fn millisecond_api(self) -> Option<&'static str> {
        match self {
            WaitCall::Poll => Some("ppoll"),
            WaitCall::EpollWait | WaitCall::EpollPwait => Some("epoll_pwait2"),
            _ => None,
        }
    }
}

/// Whether a `futex` operation (its second argument) waits: `FUTEX_WAIT`,
/// `FUTEX_LOCK_PI`, `FUTEX_WAIT_BITSET`, `FUTEX_WAIT_REQUEUE_PI`, `FUTEX_LOCK_PI2`
/// (the private and clock flags masked off).
fn is_futex_wait(op: u64) -> bool {
    matches!(op & 0x7f, 0 | 6 | 9 | 11 | 13)
}

/// The calls a timerfd is known by: created, armed, closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerfdCall {
    /// `timerfd_create(clock, flags)`: returns the fd.
    Create,
    /// `timerfd_settime(fd, flags, new, old)`: arms (or disarms) its timer.
    Settime,
    /// `close(fd)`: the fd may name something else afterwards.
    Close,
}

impl TimerfdCall {
    /// The timerfd call system call `id` is, on this architecture.
    pub fn of(id: i64) -> Option<TimerfdCall> {
        [
            TimerfdCall::Create,
            TimerfdCall::Settime,
            TimerfdCall::Close,
        ]
        .into_iter()
        .find(|&c| timerfd_number(c) == Some(id))
    }
}

#[cfg(target_arch = "x86_64")]
fn timerfd_number(call: TimerfdCall) -> Option<i64> {
    Some(match call {
        TimerfdCall::Close => 3,
        TimerfdCall::Create => 283,
        TimerfdCall::Settime => 286,
    })
}

#[cfg(target_arch = "aarch64")]
fn timerfd_number(call: TimerfdCall) -> Option<i64> {
    Some(match call {
        TimerfdCall::Close => 57,
        TimerfdCall::Create => 85,
        TimerfdCall::Settime => 86,
    })
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn timerfd_number(_: TimerfdCall) -> Option<i64> {
    None
}

#[cfg(target_arch = "x86_64")]
fn number(call: WaitCall) -> Option<i64> {
    Some(match call {
        WaitCall::TimerfdRead => 0,
        WaitCall::Poll => 7,
        WaitCall::Select => 23,
        WaitCall::Nanosleep => 35,
        WaitCall::Futex => 202,
        WaitCall::ClockNanosleep => 230,
        WaitCall::EpollWait => 232,
        WaitCall::Pselect6 => 270,
        WaitCall::Ppoll => 271,
        WaitCall::EpollPwait => 281,
        WaitCall::IoUringEnter => 426,
        WaitCall::EpollPwait2 => 441,
        WaitCall::FutexWaitv => 449,
    })
}

#[cfg(target_arch = "aarch64")]
fn number(call: WaitCall) -> Option<i64> {
    // The generic table: no poll, select or epoll_wait (libc maps them onto the others).
    Some(match call {
        WaitCall::EpollPwait => 22,
        WaitCall::TimerfdRead => 63,
        WaitCall::Pselect6 => 72,
        WaitCall::Ppoll => 73,
        WaitCall::Futex => 98,
        WaitCall::Nanosleep => 101,
        WaitCall::ClockNanosleep => 115,
        WaitCall::IoUringEnter => 426,
        WaitCall::EpollPwait2 => 441,
        WaitCall::FutexWaitv => 449,
        WaitCall::Poll | WaitCall::Select | WaitCall::EpollWait => return None,
    })
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn number(_: WaitCall) -> Option<i64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_distinct_and_name_their_call() {
        // A timerfd's read is told from any read by the program's own calls.
        let known: Vec<(WaitCall, i64)> = WaitCall::ALL
            .into_iter()
            .filter(|&c| c != WaitCall::TimerfdRead)
            .filter_map(|c| Some((c, c.number()?)))
            .collect();
        for (c, n) in &known {
            assert_eq!(
                known.iter().filter(|(_, m)| m == n).count(),
                1,
                "{} shares {n}",
                c.name()
            );
            let args = match c {
                WaitCall::IoUringEnter => [0, 0, 1, 1, 0, 0],
                _ => [0; 6],
            };
            assert_eq!(WaitCall::of(*n, &args), Some(*c), "{}", c.name());
        }
        assert_eq!(WaitCall::of(0, &[0; 6]), None, "read is no wait");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn arguments_tell_waits_and_timeouts() {
        // futex: FUTEX_WAIT_PRIVATE waits, FUTEX_WAKE_PRIVATE does not.
        assert_eq!(
            WaitCall::of(202, &[0, 128, 0, 0, 0, 0]),
            Some(WaitCall::Futex)
        );
        assert_eq!(WaitCall::of(202, &[0, 129, 0, 0, 0, 0]), None);
        assert_eq!(
            WaitCall::of(202, &[0, 9 | 256, 0, 0, 0, 0]),
            Some(WaitCall::Futex)
        );
        // io_uring_enter waits only with IORING_ENTER_GETEVENTS.
        assert_eq!(WaitCall::of(426, &[3, 1, 0, 0, 0, 0]), None);
        // Millisecond timeouts, read as the kernel's int: -1 (any negative) waits forever.
        let poll = |ms: u64| WaitCall::Poll.timeout(&[0, 1, ms, 0, 0, 0]);
        assert_eq!(poll(0), Timeout::Millis(0));
        assert_eq!(poll(5), Timeout::Millis(5));
        assert_eq!(poll(u64::MAX), Timeout::None);
        assert_eq!(poll(0xffff_ffff), Timeout::None);
        let epoll = |ms: u64| WaitCall::EpollWait.timeout(&[0, 0, 8, ms, 0, 0]);
        assert_eq!(epoll(1), Timeout::Millis(1));
        // Pointers: NULL waits forever.
        assert_eq!(WaitCall::Ppoll.timeout(&[0; 6]), Timeout::None);
        assert_eq!(
            WaitCall::Ppoll.timeout(&[0, 0, 0x7fff_0000, 0, 0, 0]),
            Timeout::InMemory
        );
        assert_eq!(
            WaitCall::Futex.timeout(&[0, 0, 0, 0x1000, 0, 0]),
            Timeout::InMemory
        );
        assert_eq!(WaitCall::Nanosleep.timeout(&[0; 6]), Timeout::InMemory);
        assert_eq!(WaitCall::EpollWait.millisecond_api(), Some("epoll_pwait2"));
        assert_eq!(WaitCall::Nanosleep.millisecond_api(), None);
    }
}
