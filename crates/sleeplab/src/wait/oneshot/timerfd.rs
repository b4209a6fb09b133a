//! Timer file descriptors read to expiry: one-shot (fresh or reused) and interval.

use super::{Family, Mechanism, OneShot};
use crate::sys::TimerFd;
use crate::wait::WaitError;

/// Arms `fd` relative to now, first expiry in `value_ns` (at least 1 ns: a zero value
/// would disarm the timer and a read would block forever), then every `interval_ns`.
fn arm(fd: &TimerFd, value_ns: u64, interval_ns: u64) {
    // Cannot fail for a valid CLOCK_MONOTONIC timerfd and in-range values.
    let _ = fd.set(false, value_ns.max(1), interval_ns);
}

/// Blocks until at least one expiry; the expirations read (0 if the read failed).
fn read(fd: &TimerFd) -> u64 {
    fd.read_resuming().unwrap_or(0)
}

fn new_fd() -> Result<TimerFd, WaitError> {
    TimerFd::new(false).map_err(WaitError::unsupported)
}

/// A timerfd created, armed, read and closed within one call.
struct Fresh;

impl OneShot for Fresh {
    fn wait(&mut self, ns: u64) {
        if let Ok(fd) = TimerFd::new(false) {
            arm(&fd, ns, 0);
            read(&fd);
        }
    }
}

pub(super) const FRESH: Mechanism = Mechanism {
    min_ns: 1,
    ..Mechanism::ns(
        "timerfd",
        Family::Timerfd,
        "timerfd created, armed one-shot, read to expiry and closed on every call",
        || {
            // Check once that timerfds can be made here.
            new_fd()?;
            Ok(Box::new(Fresh))
        },
    )
    .without_slack()
};

/// One timerfd re-armed one-shot on every call and read to expiry.
struct Reuse(TimerFd);

impl OneShot for Reuse {
    fn wait(&mut self, ns: u64) {
        arm(&self.0, ns, 0);
        read(&self.0);
    }
}

pub(super) const REUSE: Mechanism = Mechanism {
    min_ns: 1,
    ..Mechanism::ns(
        "timerfd-reuse",
        Family::Timerfd,
        "one timerfd re-armed one-shot on every call and read to expiry",
        || Ok(Box::new(Reuse(new_fd()?))),
    )
    .without_slack()
};

/// A timerfd armed once as an interval timer; re-armed only when the period changes.
struct Interval {
    fd: TimerFd,
    period: u64,
    /// Expirations read but not yet handed out (a late read collects several at once).
    pending: u64,
}

impl OneShot for Interval {
    /// Takes one expiration of the interval timer with period `ns`: when none is pending,
    /// reads the timer (blocking until the next expiry, or returning at once with every
    /// expiration that passed since the last read); the extra ones are handed out by the
    /// next calls, which then return at once. Every tick is delivered.
    fn wait(&mut self, ns: u64) {
        let ns = ns.max(1);
        if ns != self.period {
            arm(&self.fd, ns, ns);
            self.period = ns;
            self.pending = 0;
        }
        if self.pending == 0 {
            self.pending = read(&self.fd);
        }
        self.pending = self.pending.saturating_sub(1);
    }
}

pub(super) const INTERVAL: Mechanism = Mechanism {
    min_ns: 1,
    ..Mechanism::ns(
        "timerfd-interval",
        Family::Timerfd,
        "one interval timerfd armed once; a call takes one expiration, at once if it has passed",
        || {
            Ok(Box::new(Interval {
                fd: new_fd()?,
                period: 0,
                pending: 0,
            }))
        },
    )
    .without_slack()
};

#[cfg(test)]
mod tests {
    use crate::clock::monotonic_ns;
    use crate::wait::{ThreadUsage, Waiter};

    /// The k-th return is at or after the k-th expiry of the schedule armed in the first
    /// call (which started after `t0`).
    #[test]
    fn interval_follows_its_schedule() {
        let mut w = Waiter::new("timerfd-interval").unwrap();
        let period = 300_000;
        let t0 = monotonic_ns();
        for k in 1..=10u64 {
            w.wait(period);
            assert!(monotonic_ns() >= t0 + k * period);
        }
    }

    /// What the listing says: after a pause, one read collects every expiration that
    /// passed, and the calls that hand them out return without blocking (no voluntary
    /// context switch); once they are used up, a call blocks for the next expiry.
    #[test]
    fn interval_hands_out_cached_expirations_at_once() {
        let mut w = Waiter::new("timerfd-interval").unwrap();
        let period = 20_000_000;
        let armed = monotonic_ns();
        w.wait(period);
        // The timer was armed inside that call, at most one period before it returned, so
        // expiries 2, 3 and 4 have passed 3.5 periods after it returned.
        let first = monotonic_ns();
        std::thread::sleep(std::time::Duration::from_nanos(3 * period + period / 2));
        let before = ThreadUsage::now();
        w.wait(period);
        let after_read = monotonic_ns();
        w.wait(period);
        w.wait(period);
        let cached = ThreadUsage::now().since(&before);
        assert!(after_read >= first + 3 * period);
        assert_eq!(cached.voluntary_csw, 0, "a cached expiration blocked");
        // Expiry 5 (armed + 5 periods at the earliest) had not passed when the read
        // returned: the read collected exactly 3, so the next call must block.
        if after_read < armed + 5 * period {
            w.wait(period);
            let next = ThreadUsage::now().since(&before);
            assert!(next.voluntary_csw >= 1, "the next expiry did not block");
            assert!(monotonic_ns() >= armed + 5 * period);
        } else {
            eprintln!("the read came after expiry 5 (a stall); the blocking check is skipped");
        }
    }
}
