//! Small libc helpers shared by the mechanisms: errors, signal masks, timespecs, the CPU
//! clock and context switches of another thread of this process.

use super::MechanismError;
use crate::rusage::ThreadUsage;
use sleeplab::clock::{ns_to_timespec, timespec_to_ns};

/// The calling thread's `errno`.
pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// `MechanismError::Os` for `call` with the current `errno`.
pub fn os_err(call: &'static str) -> MechanismError {
    MechanismError::Os {
        call,
        source: std::io::Error::last_os_error(),
    }
}

/// `MechanismError::Os` for `call` with an error number returned directly (pthread style).
pub fn os_err_code(call: &'static str, code: i32) -> MechanismError {
    MechanismError::Os {
        call,
        source: std::io::Error::from_raw_os_error(code),
    }
}

/// A signal set holding `signals`.
pub fn sigset(signals: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset only write into the set we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &s in signals {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Blocks `signals` in the calling thread; returns the previous mask for [`restore_mask`].
pub fn block(signals: &[libc::c_int]) -> Result<libc::sigset_t, MechanismError> {
    let set = sigset(signals);
    // SAFETY: valid set pointers.
    unsafe {
        let mut old: libc::sigset_t = std::mem::zeroed();
        let r = libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        if r != 0 {
            return Err(os_err_code("pthread_sigmask", r));
        }
        Ok(old)
    }
}

/// Restores a mask saved by [`block`].
pub fn restore_mask(old: &libc::sigset_t) {
    // SAFETY: valid set pointer.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, old, std::ptr::null_mut()) };
}

/// Discards every pending instance of `signals` (blocked in the calling thread).
pub fn drain(signals: &[libc::c_int]) {
    let set = sigset(signals);
    let zero = ns_to_timespec(0);
    // SAFETY: valid pointers; a zero timeout polls.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        while libc::sigtimedwait(&set, &mut info, &zero) > 0 {}
    }
}

/// An `itimerspec` with first expiry `value_ns` and period `interval_ns`.
pub fn itimerspec(value_ns: u64, interval_ns: u64) -> libc::itimerspec {
    libc::itimerspec {
        it_interval: ns_to_timespec(interval_ns),
        it_value: ns_to_timespec(value_ns),
    }
}

/// The CPU clock id of thread `tid` of this process (the kernel's
/// `MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)`), readable with `clock_gettime`.
fn thread_cpu_clock(tid: libc::pid_t) -> libc::clockid_t {
    const CPUCLOCK_SCHED: libc::clockid_t = 2;
    const CPUCLOCK_PERTHREAD_MASK: libc::clockid_t = 4;
    (!tid << 3) | CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD_MASK
}

/// CPU time and context switches of another thread of this process, by thread id
/// (`/proc/self/task/<tid>/status` for the switches). `None` when it is gone.
pub fn other_thread_usage(tid: libc::pid_t) -> Option<ThreadUsage> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid timespec; an invalid clock id only returns an error.
    if unsafe { libc::clock_gettime(thread_cpu_clock(tid), &mut ts) } != 0 {
        return None;
    }
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    Some(ThreadUsage {
        cpu_ns: timespec_to_ns(&ts),
        voluntary_csw: field("voluntary_ctxt_switches:"),
        involuntary_csw: field("nonvoluntary_ctxt_switches:"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_thread_by_tid() {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        let mine = ThreadUsage::now();
        let u = other_thread_usage(tid).expect("own thread is readable");
        assert!(u.cpu_ns >= mine.cpu_ns);
        assert!(u.voluntary_csw + 1 >= mine.voluntary_csw);
        assert!(other_thread_usage(i32::MAX - 7).is_none());
    }
}
