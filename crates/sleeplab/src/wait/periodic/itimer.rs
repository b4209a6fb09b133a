//! `setitimer`: `ITIMER_REAL` with `SIGALRM` blocked and collected by `sigwaitinfo`.
//!
//! `ITIMER_REAL` is one per process and `SIGALRM` is process-directed: the kernel hands
//! it to any thread that does not block it, and its default action ends the process.
//! In a process with threads we cannot make block it (a Ctrl-C handler's thread, a test
//! harness's threads), and with several measuring threads that each need a timer, so
//! each arming forks a child process whose single thread (a copy of the arming thread,
//! with its affinity, policy and timer slack) blocks `SIGALRM`, arms the timer and
//! records its wakes into a shared anonymous mapping, for the ticks it was armed for.
//! Between `fork` and `_exit` the child calls only async-signal-safe functions and never
//! allocates. The parent takes the wakes one by one (the child wakes it through a futex
//! on the mapping while it waits), or sleeps until the child is done and takes them all.
//!
//! The kernel keeps the grid when it re-arms (at signal dequeue, forwarded past now) but
//! does not count overruns, so missed deadlines are those already passed at each wake
//! (as for the loops): the counts are estimates, made consistent with the wake times by
//! [`reconcile`](super::reconcile). `it_value` is relative, so `t0` comes from
//! `getitimer` right after arming (see [`child`]): our grid is a microsecond or two
//! earlier than the kernel's, never later.
//! The child's CPU time and context switches are its own (getrusage, process CPU clock
//! around the loop). A `SIGINT` or `SIGTERM` sent to the process group ends the child's
//! run early ([`WaitError::Interrupted`]); disarming sends it `SIGTERM`.

use super::{Armed, Grid, Periodic, PeriodicMechanism, Wake, buffered};
use crate::clock::{monotonic_ns, ns_to_timespec, process_cpu_ns};
use crate::sys::{self, OsError};
use crate::wait::{ThreadUsage, WaitError};
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};

/// What the child shares with the parent at the start of the mapping.
#[repr(C)]
#[derive(Default)]
struct Header {
    /// 0 until the child armed the timer (then `t0_ns` is valid), 1 armed, 2 failed.
    armed: AtomicU32,
    /// Bumped after every recorded wake and at the end (a futex word).
    seq: AtomicU32,
    /// Non-zero while the parent waits for single wakes (the child then wakes it).
    waiting: AtomicU32,
    /// Non-zero once the child's loop is over (its usage fields are then valid).
    done: AtomicU32,
    t0_ns: AtomicU64,
    count: AtomicU64,
    cpu_ns: AtomicU64,
    voluntary_csw: AtomicU64,
    involuntary_csw: AtomicU64,
    interrupted: AtomicU64,
    /// 0, or the errno of the failed call named by `failed_call`.
    errno: AtomicU64,
    /// 1 = setitimer, 2 = sigwaitinfo.
    failed_call: AtomicU64,
}

/// A shared anonymous mapping: the header, then `cap` wakes.
struct Shared {
    ptr: *mut u8,
    len: usize,
    cap: usize,
}

// SAFETY: the mapping is plain memory owned by this value; the child writes it only
// through atomics (the header) or before publishing a count (the wakes).
unsafe impl Send for Shared {}

impl Shared {
    fn new(cap: usize) -> Result<Self, WaitError> {
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
            return Err(OsError::last("mmap").into());
        }
        let ptr = ptr.cast::<u8>();
        // Touch every page now so the child takes no page fault while measuring (zero
        // bytes are a valid, all-zero header).
        // SAFETY: the mapping is `len` bytes long.
        unsafe { std::ptr::write_bytes(ptr, 0, len) };
        Ok(Self { ptr, len, cap })
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping starts with a zero-initialised, page-aligned header.
        unsafe { &*self.ptr.cast::<Header>() }
    }

    fn wakes(&self) -> *mut Wake {
        // SAFETY: the wakes follow the header inside the mapping; both are 8-aligned.
        unsafe { self.ptr.add(std::mem::size_of::<Header>()).cast() }
    }

    /// The wakes the child published, from `from` on.
    fn published(&self, from: usize) -> &[Wake] {
        let n = usize::try_from(self.header().count.load(SeqCst))
            .unwrap_or(0)
            .min(self.cap);
        // SAFETY: the child wrote the first `count` wakes before publishing the count.
        unsafe { std::slice::from_raw_parts(self.wakes(), n) }
            .get(from..)
            .unwrap_or(&[])
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: our mapping.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// An armed run: the child, the mapping, the next wake to hand out.
struct Run {
    pid: libc::pid_t,
    shared: Shared,
    read: usize,
    /// The child's wait status once reaped.
    status: Cell<Option<libc::c_int>>,
}

impl Run {
    /// Reaps the child, blocking until it exits when `block`; true once reaped.
    fn reap(&self, block: bool) -> Result<bool, WaitError> {
        while self.status.get().is_none() {
            let mut status = 0;
            let flags = if block { 0 } else { libc::WNOHANG };
            // SAFETY: our child.
            let r = unsafe { libc::waitpid(self.pid, &mut status, flags) };
            if r == self.pid {
                self.status.set(Some(status));
            } else if r == 0 {
                return Ok(false);
            } else if sys::errno() != libc::EINTR {
                return Err(OsError::last("waitpid").into());
            }
        }
        Ok(true)
    }

    /// Why the reaped child's run ended: the failure it recorded, or its end.
    fn outcome(&self) -> WaitError {
        let h = self.shared.header();
        let errno = h.errno.load(SeqCst);
        if errno != 0 {
            return WaitError::Failed {
                call: if h.failed_call.load(SeqCst) == 1 {
                    "setitimer"
                } else {
                    "sigwaitinfo"
                },
                source: std::io::Error::from_raw_os_error(errno as i32),
            };
        }
        match self.status.get() {
            Some(s) if !libc::WIFEXITED(s) || libc::WEXITSTATUS(s) != 0 => WaitError::Unavailable(
                format!("the setitimer child process failed (wait status {s})"),
            ),
            _ if h.interrupted.load(SeqCst) != 0 => WaitError::Interrupted,
            _ => WaitError::Ended,
        }
    }

    /// Sleeps on the futex word `word` while it holds `seen`, at most 100 ms.
    fn sleep_on(word: &AtomicU32, seen: u32) {
        let limit = ns_to_timespec(100_000_000);
        sys::futex_wait(word, seen, Some(&limit), false);
    }
}

/// `setitimer`.
struct SetItimer {
    run: Option<Run>,
}

impl Periodic for SetItimer {
    fn arm(&mut self, period_ns: u64, ticks: u64) -> Result<Armed, WaitError> {
        let shared = Shared::new(buffered("setitimer", ticks)?)?;
        let signals = [libc::SIGALRM, libc::SIGINT, libc::SIGTERM];
        // Blocked before fork, so the child never has them unblocked.
        let old_mask = sys::block(&signals)?;
        // SAFETY: the child runs only async-signal-safe code and ends in `_exit`.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: we are the child; `shared` is mapped and `cap` wakes long.
            unsafe { child(&shared, period_ns, ticks) }
        }
        sys::restore_mask(&old_mask);
        if pid < 0 {
            return Err(OsError::last("fork").into());
        }
        let run = Run {
            pid,
            shared,
            read: 0,
            status: Cell::new(None),
        };
        // Wait for the child to arm the timer and publish the grid's origin.
        let h = run.shared.header();
        loop {
            match h.armed.load(SeqCst) {
                0 if !run.reap(false)? => Run::sleep_on(&h.armed, 0),
                1 => break,
                _ => {
                    run.reap(true)?;
                    return Err(run.outcome());
                }
            }
        }
        let t0_ns = h.t0_ns.load(SeqCst);
        self.run = Some(run);
        Ok(Armed::at(t0_ns))
    }

    fn wait(&mut self) -> Result<Wake, WaitError> {
        let run = self.run.as_mut().ok_or(WaitError::Ended)?;
        let h = run.shared.header();
        h.waiting.store(1, SeqCst);
        loop {
            let seen = h.seq.load(SeqCst);
            // Read before the wakes: once the child is done, its count is final.
            let finished = h.done.load(SeqCst) != 0 || run.reap(false)?;
            if let Some(&w) = run.shared.published(run.read).first() {
                run.read += 1;
                return Ok(w);
            }
            if finished {
                run.reap(true)?;
                return Err(run.outcome());
            }
            Run::sleep_on(&h.seq, seen);
        }
    }

    fn wait_batch(&mut self, out: &mut Vec<Wake>) -> Result<(), WaitError> {
        let run = self.run.as_mut().ok_or(WaitError::Ended)?;
        run.shared.header().waiting.store(0, SeqCst);
        run.reap(true)?;
        let outcome = run.outcome();
        if matches!(
            outcome,
            WaitError::Failed { .. } | WaitError::Unavailable(_)
        ) {
            return Err(outcome);
        }
        let got = run.shared.published(run.read);
        if got.is_empty() {
            return Err(outcome);
        }
        out.extend_from_slice(got);
        run.read += got.len();
        Ok(())
    }

    fn disarm(&mut self) -> ThreadUsage {
        let Some(run) = self.run.take() else {
            return ThreadUsage::default();
        };
        if run.status.get().is_none() {
            // SAFETY: our child, not yet reaped (its pid cannot have been reused).
            unsafe { libc::kill(run.pid, libc::SIGTERM) };
            let _ = run.reap(true);
        }
        let h = run.shared.header();
        ThreadUsage {
            cpu_ns: h.cpu_ns.load(SeqCst),
            voluntary_csw: h.voluntary_csw.load(SeqCst),
            involuntary_csw: h.involuntary_csw.load(SeqCst),
        }
    }
}

pub(super) const SETITIMER: PeriodicMechanism = PeriodicMechanism {
    period_unit_ns: 1_000,
    exact_counts: false,
    ..PeriodicMechanism::row(
        "setitimer",
        "itimer",
        "setitimer(ITIMER_REAL) + SIGALRM blocked, sigwaitinfo; process-wide, so run in a child process",
        false,
        |_| Ok(Box::new(SetItimer { run: None })),
    )
};

/// The child: arm, collect `ticks` deadlines, disarm, report, `_exit`. Async-signal-safe
/// calls only; no allocation, no panics (saturating arithmetic, bounds checked by hand).
///
/// # Safety
/// Must run in a freshly forked child with `shared` mapped.
unsafe fn child(shared: &Shared, period_ns: u64, ticks: u64) -> ! {
    let h = shared.header();
    let set = sys::sigset(&[libc::SIGALRM, libc::SIGINT, libc::SIGTERM]);
    let p = period_ns;
    let (v0, i0) = sys::context_switches(libc::RUSAGE_SELF);
    let cpu0 = process_cpu_ns();
    let it = libc::itimerval {
        it_interval: sys::timeval_us(p / 1_000),
        it_value: sys::timeval_us(p / 1_000),
    };
    let fail = |call: u64| {
        h.errno.store(sys::errno() as u64, SeqCst);
        h.failed_call.store(call, SeqCst);
    };
    // SAFETY (whole block): plain syscalls on valid pointers; the wakes are written at
    // indices checked against `cap`.
    unsafe {
        let called = monotonic_ns();
        if libc::setitimer(libc::ITIMER_REAL, &it, std::ptr::null_mut()) != 0 {
            fail(1);
            h.armed.store(2, SeqCst);
            sys::futex_wake_all(&h.armed, false);
            libc::_exit(1);
        }
        // The kernel's grid starts when it armed the timer, which a preemption could put
        // well after `called`. Ask it when the first expiry is due instead: `getitimer`
        // gives the remaining time truncated to a microsecond, so `before + remaining` is
        // at or before the true expiry. That holds only while the first expiry is still
        // ahead: if the timer already fired (SIGALRM pending) or is idle, fall back to
        // `called`. (One microsecond is taken off: the kernel reports a remaining time
        // below 1 µs as 1 µs.) Either way the grid is never later than the kernel's, so
        // no wake is falsely early; lateness is overestimated by the uncertainty.
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
        h.t0_ns.store(t0, SeqCst);
        h.armed.store(1, SeqCst);
        sys::futex_wake_all(&h.armed, false);
        let mut grid = Grid::new(t0, p);
        let mut count = 0usize;
        while grid.covered() < ticks {
            let r = sys::sigwaitinfo(&set);
            let now = monotonic_ns();
            if r == libc::SIGALRM {
                let wake = Wake {
                    wake_ns: now,
                    expirations: grid.passed(now),
                };
                grid.advance(wake);
                if count < shared.cap {
                    shared.wakes().add(count).write(wake);
                    count += 1;
                    h.count.store(count as u64, SeqCst);
                    h.seq.fetch_add(1, SeqCst);
                    if h.waiting.load(SeqCst) != 0 {
                        sys::futex_wake_all(&h.seq, false);
                    }
                }
            } else if r > 0 {
                h.interrupted.store(1, SeqCst);
                break;
            } else if sys::errno() != libc::EINTR {
                fail(2);
                break;
            }
        }
        let off = libc::itimerval {
            it_interval: sys::timeval_us(0),
            it_value: sys::timeval_us(0),
        };
        libc::setitimer(libc::ITIMER_REAL, &off, std::ptr::null_mut());
        let (v1, i1) = sys::context_switches(libc::RUSAGE_SELF);
        h.cpu_ns
            .store(process_cpu_ns().saturating_sub(cpu0), SeqCst);
        h.voluntary_csw.store(v1.saturating_sub(v0), SeqCst);
        h.involuntary_csw.store(i1.saturating_sub(i0), SeqCst);
        h.done.store(1, SeqCst);
        h.seq.fetch_add(1, SeqCst);
        sys::futex_wake_all(&h.seq, false);
        libc::_exit(0)
    }
}
