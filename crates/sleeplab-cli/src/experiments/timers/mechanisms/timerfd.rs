//! timerfd interval timers: read directly (`timerfd-interval`) or after `epoll_wait`
//! (`epoll-timerfd`). The expiration count read from the descriptor tells how many
//! deadlines passed since the last read: n > 1 means n − 1 overruns. Timer slack does
//! not apply to timerfd expiry.

use super::sys::{errno, itimerspec, os_err};
use super::{MechanismError, Periodic, Plan, RunReport, Wake};
use crate::interrupt::interrupted;
use sleeplab::clock::monotonic_ns;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

fn create(flags: libc::c_int) -> Result<OwnedFd, MechanismError> {
    // SAFETY: plain syscall.
    let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC | flags) };
    if fd < 0 {
        return Err(os_err("timerfd_create"));
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Arms `fd` on the absolute schedule: first expiry `t0 + P`, then every `P`.
fn arm(fd: &OwnedFd, t0: u64, period: u64) -> Result<(), MechanismError> {
    let spec = itimerspec(t0 + period, period);
    // SAFETY: valid fd and itimerspec.
    let r = unsafe {
        libc::timerfd_settime(
            fd.as_raw_fd(),
            libc::TFD_TIMER_ABSTIME,
            &spec,
            std::ptr::null_mut(),
        )
    };
    if r != 0 {
        return Err(os_err("timerfd_settime"));
    }
    Ok(())
}

fn disarm(fd: &OwnedFd) {
    let spec = itimerspec(0, 0);
    // SAFETY: as above; a zero value disarms.
    unsafe { libc::timerfd_settime(fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
}

/// Reads the expiration count; `Ok(None)` on EINTR or (non-blocking) EAGAIN.
fn read_count(fd: &OwnedFd) -> Result<Option<u64>, MechanismError> {
    let mut count: u64 = 0;
    // SAFETY: reading 8 bytes into a u64.
    let r = unsafe {
        libc::read(
            fd.as_raw_fd(),
            (&mut count as *mut u64).cast::<libc::c_void>(),
            8,
        )
    };
    if r == 8 {
        return Ok(Some(count));
    }
    match errno() {
        libc::EINTR | libc::EAGAIN => Ok(None),
        _ => Err(os_err("read(timerfd)")),
    }
}

/// `timerfd-interval`.
pub struct TimerfdInterval {
    fd: OwnedFd,
}

impl TimerfdInterval {
    /// Creates the descriptor.
    pub fn new() -> Result<Self, MechanismError> {
        Ok(Self { fd: create(0)? })
    }
}

impl Periodic for TimerfdInterval {
    fn run(&mut self, plan: &Plan, wakes: &mut Vec<Wake>) -> Result<RunReport, MechanismError> {
        let fd = &self.fd;
        run_armed(fd, plan, wakes, || read_count(fd))
    }
}

/// Arms `fd` as an interval timer from now, then records one [`Wake`] per completed
/// `wait_expirations` (which blocks until the next expiry and returns the expirations
/// read, or `None` after EINTR), until `plan.ticks` deadlines are covered or Ctrl-C.
/// The timer is disarmed on every way out.
fn run_armed(
    fd: &OwnedFd,
    plan: &Plan,
    wakes: &mut Vec<Wake>,
    mut wait_expirations: impl FnMut() -> Result<Option<u64>, MechanismError>,
) -> Result<RunReport, MechanismError> {
    let t0 = monotonic_ns();
    arm(fd, t0, plan.period_ns)?;
    let mut report = RunReport {
        t0_ns: t0,
        ..RunReport::default()
    };
    let mut covered = 0u64;
    while covered < plan.ticks {
        let n = wait_expirations();
        let now = monotonic_ns();
        match n {
            Ok(Some(n)) => {
                wakes.push(Wake {
                    wake_ns: now,
                    expirations: n,
                });
                covered += n.max(1);
                report.end_ns = now;
            }
            Ok(None) => {}
            Err(e) => {
                disarm(fd);
                return Err(e);
            }
        }
        if interrupted() {
            report.interrupted = covered < plan.ticks;
            break;
        }
    }
    disarm(fd);
    Ok(report)
}

/// `epoll-timerfd`.
pub struct EpollTimerfd {
    fd: OwnedFd,
    epoll: OwnedFd,
}

impl EpollTimerfd {
    /// Creates the descriptors and registers the timer (non-blocking) in epoll.
    pub fn new() -> Result<Self, MechanismError> {
        let fd = create(libc::TFD_NONBLOCK)?;
        // SAFETY: plain syscall.
        let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if ep < 0 {
            return Err(os_err("epoll_create1"));
        }
        // SAFETY: a fresh descriptor we own.
        let epoll = unsafe { OwnedFd::from_raw_fd(ep) };
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: 0,
        };
        // SAFETY: valid descriptors and event.
        let r = unsafe {
            libc::epoll_ctl(
                epoll.as_raw_fd(),
                libc::EPOLL_CTL_ADD,
                fd.as_raw_fd(),
                &mut ev,
            )
        };
        if r != 0 {
            return Err(os_err("epoll_ctl"));
        }
        Ok(Self { fd, epoll })
    }
}

impl Periodic for EpollTimerfd {
    fn run(&mut self, plan: &Plan, wakes: &mut Vec<Wake>) -> Result<RunReport, MechanismError> {
        let (fd, epoll) = (&self.fd, self.epoll.as_raw_fd());
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        run_armed(fd, plan, wakes, || {
            // SAFETY: valid descriptor and one-event buffer.
            let r = unsafe { libc::epoll_wait(epoll, &mut ev, 1, -1) };
            if r == 1 {
                read_count(fd)
            } else if r < 0 && errno() != libc::EINTR {
                Err(os_err("epoll_wait"))
            } else {
                Ok(None)
            }
        })
    }
}
