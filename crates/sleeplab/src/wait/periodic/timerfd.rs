//! timerfd interval timers: read directly (`timerfd-interval`) or after `epoll_wait`
//! (`epoll-timerfd`). The expiration count read from the descriptor tells how many
//! deadlines passed since the last read: n > 1 means n − 1 overruns. Timer slack does
//! not apply to timerfd expiry.

use super::{Armed, Periodic, PeriodicMechanism, Wake};
use crate::clock::monotonic_ns;
use crate::sys::{self, Epoll, OsError, TimerFd};
use crate::wait::{ThreadUsage, WaitError};

/// Arms `fd` on the absolute grid from now: first expiry `t0 + P`, then every `P`.
fn arm(fd: &TimerFd, period_ns: u64) -> Result<Armed, WaitError> {
    let t0 = monotonic_ns();
    fd.set(true, t0.saturating_add(period_ns), period_ns)?;
    Ok(Armed::at(t0))
}

fn disarm(fd: &TimerFd) -> ThreadUsage {
    // A zero value disarms; it cannot fail on a valid timerfd.
    let _ = fd.set(false, 0, 0);
    ThreadUsage::default()
}

/// `timerfd-interval`.
struct Interval(TimerFd);

impl Periodic for Interval {
    fn arm(&mut self, period_ns: u64, _ticks: u64) -> Result<Armed, WaitError> {
        arm(&self.0, period_ns)
    }

    fn wait(&mut self) -> Result<Wake, WaitError> {
        let n = self.0.read_resuming()?;
        Ok(Wake {
            wake_ns: monotonic_ns(),
            expirations: n,
        })
    }

    fn disarm(&mut self) -> ThreadUsage {
        disarm(&self.0)
    }
}

pub(super) const INTERVAL: PeriodicMechanism = PeriodicMechanism::row(
    "timerfd-interval",
    "timerfd",
    "timerfd_create + timerfd_settime(ABSTIME, interval P); read() returns the expiration count",
    false,
    |_| Ok(Box::new(Interval(TimerFd::new(false)?))),
);

/// `epoll-timerfd`: the timer (non-blocking) registered in an epoll set.
struct EpollTimerfd {
    fd: TimerFd,
    epoll: Epoll,
}

impl Periodic for EpollTimerfd {
    fn arm(&mut self, period_ns: u64, _ticks: u64) -> Result<Armed, WaitError> {
        arm(&self.fd, period_ns)
    }

    fn wait(&mut self) -> Result<Wake, WaitError> {
        loop {
            let r = self.epoll.wait(-1);
            if r == 1 {
                // EAGAIN after a wake-up that another read consumed: wait again.
                if let Some(n) = self.fd.read()? {
                    return Ok(Wake {
                        wake_ns: monotonic_ns(),
                        expirations: n,
                    });
                }
            } else if r < 0 && sys::errno() != libc::EINTR {
                return Err(OsError::last("epoll_wait").into());
            }
        }
    }

    fn disarm(&mut self) -> ThreadUsage {
        disarm(&self.fd)
    }
}

pub(super) const EPOLL: PeriodicMechanism = PeriodicMechanism::row(
    "epoll-timerfd",
    "timerfd",
    "the same interval timerfd registered in epoll; epoll_wait(-1) then read()",
    false,
    |_| {
        let fd = TimerFd::new(true)?;
        let epoll = Epoll::new()?;
        epoll.add_readable(fd.fd())?;
        Ok(Box::new(EpollTimerfd { fd, epoll }))
    },
);
