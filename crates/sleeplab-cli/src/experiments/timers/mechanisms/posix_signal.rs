//! `posix-timer-signal`: a POSIX timer (`timer_create`) that signals the measuring
//! thread, which keeps the signal blocked and collects it with `sigwaitinfo`.
//!
//! The notification is `SIGEV_SIGNAL` directed at this thread (`SIGEV_THREAD_ID`, as
//! cyclictest's `-x` mode does): a process-directed signal could land on any thread that
//! does not block it (a load thread, the Ctrl-C thread, another measuring thread with
//! `--threads`), and its default action would end the process. Overruns come from
//! `timer_getoverrun` right after each signal.

use super::sys::{block, drain, errno, itimerspec, os_err, restore_mask, sigset};
use super::{MechanismError, Periodic, Plan, RunReport, Wake};
use crate::interrupt::interrupted;
use sleeplab::clock::monotonic_ns;

/// The real-time signal the timer sends (glibc keeps SIGRTMIN and SIGRTMIN+1 for itself;
/// `libc::SIGRTMIN()` is already past them).
fn timer_signal() -> libc::c_int {
    libc::SIGRTMIN() + 3
}

/// `posix-timer-signal`.
pub struct PosixSignal;

impl PosixSignal {
    /// Checks that the signal exists.
    pub fn new() -> Result<Self, MechanismError> {
        if timer_signal() > libc::SIGRTMAX() {
            return Err(MechanismError::Unavailable(
                "no free real-time signal".into(),
            ));
        }
        Ok(Self)
    }
}

impl Periodic for PosixSignal {
    fn run(&mut self, plan: &Plan, wakes: &mut Vec<Wake>) -> Result<RunReport, MechanismError> {
        let sig = timer_signal();
        let old_mask = block(&[sig])?;
        let result = run_blocked(sig, plan, wakes);
        drain(&[sig]);
        restore_mask(&old_mask);
        result
    }
}

fn run_blocked(
    sig: libc::c_int,
    plan: &Plan,
    wakes: &mut Vec<Wake>,
) -> Result<RunReport, MechanismError> {
    // SAFETY: a zeroed sigevent is valid; we fill the fields the kernel reads.
    let mut sev: libc::sigevent = unsafe { std::mem::zeroed() };
    sev.sigev_notify = libc::SIGEV_SIGNAL | libc::SIGEV_THREAD_ID;
    sev.sigev_signo = sig;
    // SAFETY: gettid has no preconditions.
    sev.sigev_notify_thread_id = unsafe { libc::gettid() };
    let mut timer: libc::timer_t = std::ptr::null_mut();
    // SAFETY: valid pointers.
    if unsafe { libc::timer_create(libc::CLOCK_MONOTONIC, &mut sev, &mut timer) } != 0 {
        return Err(os_err("timer_create"));
    }
    let set = sigset(&[sig]);
    let p = plan.period_ns;
    let t0 = monotonic_ns();
    let spec = itimerspec(t0 + p, p);
    // SAFETY: a timer we created; valid itimerspec.
    if unsafe { libc::timer_settime(timer, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut()) } != 0
    {
        let e = os_err("timer_settime");
        // SAFETY: our timer.
        unsafe { libc::timer_delete(timer) };
        return Err(e);
    }
    let mut report = RunReport {
        t0_ns: t0,
        ..RunReport::default()
    };
    let mut covered = 0u64;
    let mut failure = None;
    // SAFETY: a zeroed siginfo_t is valid for sigwaitinfo to fill.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    while covered < plan.ticks {
        // SAFETY: valid set and info pointers.
        let r = unsafe { libc::sigwaitinfo(&set, &mut info) };
        let now = monotonic_ns();
        if r == sig {
            // SAFETY: our timer; the count is for the signal just accepted.
            let overrun = unsafe { libc::timer_getoverrun(timer) };
            let n = 1 + u64::try_from(overrun).unwrap_or(0);
            wakes.push(Wake {
                wake_ns: now,
                expirations: n,
            });
            covered += n;
            report.end_ns = now;
        } else if r < 0 && errno() != libc::EINTR {
            failure = Some(os_err("sigwaitinfo"));
            break;
        }
        if interrupted() {
            report.interrupted = covered < plan.ticks;
            break;
        }
    }
    // SAFETY: our timer.
    unsafe { libc::timer_delete(timer) };
    match failure {
        Some(e) => Err(e),
        None => Ok(report),
    }
}
