//! `posix-timer-signal`: a POSIX timer (`timer_create`) that signals the waiting thread,
//! which keeps the signal blocked and collects it with `sigwaitinfo`.
//!
//! The notification is `SIGEV_SIGNAL` directed at the arming thread (`SIGEV_THREAD_ID`,
//! as cyclictest's `-x` mode does): a process-directed signal could land on any thread
//! that does not block it (a load thread, the Ctrl-C thread, another measuring thread),
//! and its default action would end the process. Overruns come from `timer_getoverrun`
//! right after each signal.

use super::{Armed, Periodic, PeriodicMechanism, Wake};
use crate::clock::monotonic_ns;
use crate::sys::{self, OsError, PosixTimer};
use crate::wait::{ThreadUsage, WaitError};

/// The real-time signal the timer sends (glibc keeps SIGRTMIN and SIGRTMIN+1 for itself;
/// `libc::SIGRTMIN()` is already past them).
fn timer_signal() -> libc::c_int {
    libc::SIGRTMIN() + 3
}

/// An armed run: the timer, the signal set it waits on, the mask to restore.
struct Run {
    timer: PosixTimer,
    set: libc::sigset_t,
    old_mask: libc::sigset_t,
}

/// `posix-timer-signal`.
struct PosixSignal {
    run: Option<Run>,
}

impl Periodic for PosixSignal {
    fn arm(&mut self, period_ns: u64, _ticks: u64) -> Result<Armed, WaitError> {
        let sig = timer_signal();
        let old_mask = sys::block(&[sig])?;
        let timer = match PosixTimer::signalling_thread(sig, sys::gettid()) {
            Ok(t) => t,
            Err(e) => {
                sys::restore_mask(&old_mask);
                return Err(e.into());
            }
        };
        let run = Run {
            timer,
            set: sys::sigset(&[sig]),
            old_mask,
        };
        let t0 = monotonic_ns();
        let armed = run.timer.set_abs(t0.saturating_add(period_ns), period_ns);
        self.run = Some(run);
        if let Err(e) = armed {
            self.disarm();
            return Err(e.into());
        }
        Ok(Armed::at(t0))
    }

    fn wait(&mut self) -> Result<Wake, WaitError> {
        let run = self.run.as_ref().ok_or(WaitError::Ended)?;
        let sig = timer_signal();
        loop {
            let r = sys::sigwaitinfo(&run.set);
            let now = monotonic_ns();
            if r == sig {
                // The count is for the signal just accepted.
                let overrun = sys::timer_overrun(run.timer.id());
                return Ok(Wake {
                    wake_ns: now,
                    expirations: 1 + u64::try_from(overrun).unwrap_or(0),
                });
            }
            if r < 0 && sys::errno() != libc::EINTR {
                return Err(OsError::last("sigwaitinfo").into());
            }
        }
    }

    fn disarm(&mut self) -> ThreadUsage {
        if let Some(run) = self.run.take() {
            drop(run.timer);
            sys::drain(&[timer_signal()]);
            sys::restore_mask(&run.old_mask);
        }
        ThreadUsage::default()
    }
}

pub(super) const POSIX_SIGNAL: PeriodicMechanism = PeriodicMechanism::row(
    "posix-timer-signal",
    "posix-timer",
    "timer_create(SIGEV_SIGNAL to this thread), signal blocked, sigwaitinfo; overruns from timer_getoverrun",
    false,
    |_| {
        if timer_signal() > libc::SIGRTMAX() {
            return Err(WaitError::Unavailable("no free real-time signal".into()));
        }
        Ok(Box::new(PosixSignal { run: None }))
    },
);
