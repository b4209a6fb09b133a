//! Timer slack: the per-thread amount by which Linux may delay a timer expiry so that it
//! can coalesce wakeups (`prctl(PR_SET_TIMERSLACK)`).
//!
//! Normal threads start with 50 µs; real-time threads get 0. Slack applies to
//! `nanosleep`, `clock_nanosleep`, `select`/`poll`/`epoll` timeouts and futex waits, but
//! not to timerfd expiry. It is the main reason a short sleep oversleeps on an idle
//! Linux machine.

use super::SystemError;

/// The calling thread's timer slack, in nanoseconds.
pub fn timer_slack_ns() -> u64 {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer arguments and returns the slack.
    let r = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    r.max(0) as u64
}

/// Sets the calling thread's timer slack to `ns` nanoseconds (≥ 1).
///
/// Use [`reset_timer_slack`] to restore the default. Returns the slack now in force.
pub fn set_timer_slack_ns(ns: u64) -> Result<u64, SystemError> {
    if ns == 0 {
        return Err(SystemError::InvalidValue {
            what: "timer slack",
            value: "0 ns (the kernel reads 0 as 'reset to default'; use 1 ns for the minimum)"
                .into(),
        });
    }
    let arg = libc::c_ulong::try_from(ns).map_err(|_| SystemError::InvalidValue {
        what: "timer slack",
        value: format!("{ns} ns"),
    })?;
    // SAFETY: PR_SET_TIMERSLACK takes the slack by value.
    let r = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, arg, 0, 0, 0) };
    if r != 0 {
        return Err(SystemError::os("prctl(PR_SET_TIMERSLACK)"));
    }
    Ok(timer_slack_ns())
}

/// Restores the calling thread's default timer slack (the one it inherited).
pub fn reset_timer_slack() -> Result<u64, SystemError> {
    // SAFETY: as above; 0 means "reset to the default".
    let r = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 0 as libc::c_ulong, 0, 0, 0) };
    if r != 0 {
        return Err(SystemError::os("prctl(PR_SET_TIMERSLACK, 0)"));
    }
    Ok(timer_slack_ns())
}

/// Sets the timer slack for as long as the guard lives, then restores the previous value.
#[derive(Debug)]
pub struct SlackGuard {
    previous: u64,
}

impl SlackGuard {
    /// Sets the calling thread's slack to `ns` and remembers the previous value.
    pub fn set(ns: u64) -> Result<Self, SystemError> {
        let previous = timer_slack_ns();
        set_timer_slack_ns(ns)?;
        Ok(Self { previous })
    }
}

impl Drop for SlackGuard {
    fn drop(&mut self) {
        if self.previous > 0 {
            let _ = set_timer_slack_ns(self.previous);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_and_restore() {
        std::thread::spawn(|| {
            let before = timer_slack_ns();
            {
                let _g = SlackGuard::set(1).unwrap();
                assert_eq!(timer_slack_ns(), 1);
            }
            assert_eq!(timer_slack_ns(), before);
            assert!(set_timer_slack_ns(0).is_err());
        })
        .join()
        .unwrap();
    }
}
