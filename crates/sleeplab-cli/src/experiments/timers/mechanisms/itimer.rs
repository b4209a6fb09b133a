//! `setitimer`: `ITIMER_REAL` with `SIGALRM` blocked and collected by `sigwaitinfo`.
//!
//! `ITIMER_REAL` is one per process and `SIGALRM` is process-directed: the kernel hands
//! it to any thread that does not block it, and its default action ends the process.
//! In sleeplab's process other threads exist that we cannot make block it (the Ctrl-C
//! handler's thread, the test harness's threads), and `--threads N` needs N timers. So
//! each run forks a child process whose single thread (a copy of the measuring thread,
//! with its affinity, policy and timer slack) blocks `SIGALRM`, arms the timer and
//! records its wakes into a shared anonymous mapping. Between `fork` and `_exit` the
//! child calls only async-signal-safe functions and never allocates.
//!
//! The kernel keeps the grid when it re-arms (at signal dequeue, forwarded past now) but
//! does not count overruns, so missed deadlines are those already passed at each wake
//! (as for the loops). `it_value` is relative, so `t0` comes from `getitimer` right after
//! arming (see [`child`]): our grid is a microsecond or two earlier than the kernel's,
//! never later. A thread preempted between dequeuing a signal and reading the clock
//! counts a deadline whose own signal is still to come; [`reconcile`] gives that
//! deadline back to the wake that delivered it.
//! The child's CPU time and context switches are its own (getrusage, process CPU clock
//! around the loop). A `SIGINT` or `SIGTERM` sent to the process group ends the child's
//! run early; it does not reach sleeplab's Ctrl-C handler twice.

use super::sys::{block, errno, os_err, restore_mask, sigset};
use super::{MechanismError, Periodic, Plan, RunReport, Wake};
use crate::experiments::timers::accounting::{passed_deadlines, reconcile};
use crate::rusage::ThreadUsage;
use sleeplab::clock::{monotonic_ns, process_cpu_ns};

/// What the child leaves for the parent at the start of the shared mapping.
#[repr(C)]
#[derive(Default)]
struct Header {
    t0_ns: u64,
    end_ns: u64,
    count: u64,
    cpu_ns: u64,
    voluntary_csw: u64,
    involuntary_csw: u64,
    interrupted: u64,
    /// 0, or the errno of the failed call named by `failed_call`.
    errno: i64,
    /// 1 = setitimer, 2 = sigwaitinfo.
    failed_call: u64,
}

/// A shared anonymous mapping: the header, then `cap` wakes.
struct Shared {
    ptr: *mut u8,
    len: usize,
    cap: usize,
}

impl Shared {
    fn new(cap: usize) -> Result<Self, MechanismError> {
        let len = std::mem::size_of::<Header>() + cap * std::mem::size_of::<Wake>();
        // SAFETY: anonymous shared mapping; checked for failure.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(os_err("mmap"));
        }
        let ptr = ptr.cast::<u8>();
        // Touch every page now so the child takes no page fault while measuring.
        // SAFETY: the mapping is `len` bytes long.
        unsafe { std::ptr::write_bytes(ptr, 0, len) };
        Ok(Self { ptr, len, cap })
    }

    fn header(&self) -> *mut Header {
        self.ptr.cast()
    }

    fn wakes(&self) -> *mut Wake {
        // SAFETY: the wakes follow the header inside the mapping; both are 8-aligned.
        unsafe { self.ptr.add(std::mem::size_of::<Header>()).cast() }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: our mapping.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// `setitimer`.
pub struct SetItimer;

impl Periodic for SetItimer {
    fn run(&mut self, plan: &Plan, wakes: &mut Vec<Wake>) -> Result<RunReport, MechanismError> {
        if plan.period_ns % 1_000 != 0 || plan.period_ns == 0 {
            return Err(MechanismError::Unavailable(
                "setitimer takes whole microseconds".into(),
            ));
        }
        let cap = usize::try_from(plan.ticks).unwrap_or(usize::MAX / 64);
        let shared = Shared::new(cap)?;
        let signals = [libc::SIGALRM, libc::SIGINT, libc::SIGTERM];
        // Blocked before fork, so the child never has them unblocked.
        let old_mask = block(&signals)?;
        // SAFETY: the child runs only async-signal-safe code and ends in `_exit`.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: we are the child; `shared` is mapped and `cap` wakes long.
            unsafe { child(&shared, plan) }
        }
        restore_mask(&old_mask);
        if pid < 0 {
            return Err(os_err("fork"));
        }
        let mut status = 0;
        loop {
            // SAFETY: our child.
            let r = unsafe { libc::waitpid(pid, &mut status, 0) };
            if r == pid {
                break;
            }
            if r < 0 && errno() != libc::EINTR {
                return Err(os_err("waitpid"));
            }
        }
        // SAFETY: the child has exited; the mapping holds what it wrote.
        let h = unsafe { &*shared.header() };
        if h.errno != 0 {
            let call = if h.failed_call == 1 {
                "setitimer"
            } else {
                "sigwaitinfo"
            };
            return Err(MechanismError::Os {
                call,
                source: std::io::Error::from_raw_os_error(h.errno as i32),
            });
        }
        if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
            return Err(MechanismError::Unavailable(format!(
                "the setitimer child process failed (wait status {status})"
            )));
        }
        let n = usize::try_from(h.count).unwrap_or(0).min(shared.cap);
        // SAFETY: the child wrote `count` wakes (at most `cap`).
        let got = unsafe { std::slice::from_raw_parts(shared.wakes(), n) };
        let first = wakes.len();
        wakes.extend_from_slice(got);
        // Deadlines seen by the clock read may still have their own signal to come.
        reconcile(h.t0_ns, plan.period_ns, &mut wakes[first..]);
        Ok(RunReport {
            t0_ns: h.t0_ns,
            end_ns: h.end_ns,
            helper: ThreadUsage {
                cpu_ns: h.cpu_ns,
                voluntary_csw: h.voluntary_csw,
                involuntary_csw: h.involuntary_csw,
            },
            timer_slack_ns: None,
            interrupted: h.interrupted != 0,
        })
    }
}

fn rusage() -> (u64, u64) {
    // SAFETY: a zeroed rusage is valid for getrusage to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    (ru.ru_nvcsw.max(0) as u64, ru.ru_nivcsw.max(0) as u64)
}

fn timeval(ns: u64) -> libc::timeval {
    libc::timeval {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_usec: ((ns % 1_000_000_000) / 1_000) as libc::suseconds_t,
    }
}

/// The child: arm, collect, disarm, report, `_exit`. Async-signal-safe calls only; no
/// allocation, no panics (saturating arithmetic, bounds checked by hand).
///
/// # Safety
/// Must run in a freshly forked child with `shared` mapped.
unsafe fn child(shared: &Shared, plan: &Plan) -> ! {
    let h = shared.header();
    let set = sigset(&[libc::SIGALRM, libc::SIGINT, libc::SIGTERM]);
    let p = plan.period_ns;
    let (v0, i0) = rusage();
    let cpu0 = process_cpu_ns();
    let it = libc::itimerval {
        it_interval: timeval(p),
        it_value: timeval(p),
    };
    // SAFETY (whole block): raw pointers into our mapping, indices checked against cap;
    // plain syscalls.
    unsafe {
        let called = monotonic_ns();
        if libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut()) != 0 {
            (*h).errno = i64::from(errno());
            (*h).failed_call = 1;
            libc::_exit(1);
        }
        // The kernel's grid starts when it armed the timer, which a preemption could put
        // well after `called`. Ask it when the first expiry is due instead: `getitimer`
        // gives the remaining time truncated to a microsecond, so `before + remaining` is
        // at or before the true expiry. That holds only while the first expiry is still
        // ahead: if the timer already fired (SIGALRM pending) or is idle, fall back to
        // `called`. (One microsecond is taken off: the kernel reports a remaining time
        // below 1 µs as 1 µs.) Either way the schedule is never later than the kernel's,
        // so no wake is falsely early; lateness is overestimated by the uncertainty.
        let mut left: libc::itimerval = std::mem::zeroed();
        let before = monotonic_ns();
        libc::getitimer(libc::ITIMER_REAL, &mut left);
        let mut pending: libc::sigset_t = std::mem::zeroed();
        libc::sigpending(&mut pending);
        let fired = libc::sigismember(&pending, libc::SIGALRM) == 1;
        let remaining = (left.it_value.tv_sec.max(0) as u64)
            .saturating_mul(1_000_000_000)
            .saturating_add(left.it_value.tv_usec.max(0) as u64 * 1_000);
        let t0 = if remaining > 0 && !fired {
            called.max((before + remaining).saturating_sub(p + 1_000))
        } else {
            called
        };
        (*h).t0_ns = t0;
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let mut covered = 0u64;
        let mut count = 0usize;
        while covered < plan.ticks {
            let r = libc::sigwaitinfo(&set, &mut info);
            let now = monotonic_ns();
            if r == libc::SIGALRM {
                let n = passed_deadlines(t0, p, covered, now);
                if count < shared.cap {
                    shared.wakes().add(count).write(Wake {
                        wake_ns: now,
                        expirations: n,
                    });
                    count += 1;
                }
                covered = covered.saturating_add(n);
                (*h).end_ns = now;
            } else if r > 0 {
                (*h).interrupted = 1;
                break;
            } else if errno() != libc::EINTR {
                (*h).errno = i64::from(errno());
                (*h).failed_call = 2;
                break;
            }
        }
        let off = libc::itimerval {
            it_interval: timeval(0),
            it_value: timeval(0),
        };
        libc::setitimer(libc::ITIMER_REAL, &off, std::ptr::null_mut());
        let (v1, i1) = rusage();
        (*h).count = count as u64;
        (*h).cpu_ns = process_cpu_ns().saturating_sub(cpu0);
        (*h).voluntary_csw = v1.saturating_sub(v0);
        (*h).involuntary_csw = i1.saturating_sub(i0);
        libc::_exit(0)
    }
}
