//! The library's one layer over libc: `errno`, time conversions, and each system call a
//! wait makes (clocks, sleeps, timerfd, epoll, futex, signal masks, POSIX timers,
//! context switches), written once. Policy stays with the callers (when to resume after
//! `EINTR`, toward which deadline); this module only makes the calls and reports their
//! errors.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::AtomicU32;

/// A failed system call: which one, and the OS error.
#[derive(Debug)]
pub(crate) struct OsError {
    /// The call, e.g. `timerfd_create`.
    pub call: &'static str,
    /// Why it failed.
    pub source: io::Error,
}

impl OsError {
    /// `call` failed with the current `errno`.
    pub fn last(call: &'static str) -> Self {
        Self {
            call,
            source: io::Error::last_os_error(),
        }
    }

    /// `call` failed with an error number it returned (pthread and clock_nanosleep style).
    pub fn code(call: &'static str, code: i32) -> Self {
        Self {
            call,
            source: io::Error::from_raw_os_error(code),
        }
    }
}

/// The calling thread's `errno`.
#[inline]
pub(crate) fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Converts a `timespec` to nanoseconds, saturating instead of overflowing.
#[inline]
pub fn timespec_to_ns(ts: &libc::timespec) -> u64 {
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// Converts nanoseconds to a `timespec`.
#[inline]
pub fn ns_to_timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// A `timeval` of `us` microseconds.
#[inline]
pub(crate) fn timeval_us(us: u64) -> libc::timeval {
    libc::timeval {
        tv_sec: (us / 1_000_000) as libc::time_t,
        tv_usec: (us % 1_000_000) as libc::suseconds_t,
    }
}

/// An `itimerspec` with first expiry `value_ns` and period `interval_ns` (a zero value
/// disarms).
#[inline]
pub(crate) fn itimerspec(value_ns: u64, interval_ns: u64) -> libc::itimerspec {
    libc::itimerspec {
        it_interval: ns_to_timespec(interval_ns),
        it_value: ns_to_timespec(value_ns),
    }
}

/// Reads clock `id` in nanoseconds; `None` when the clock does not exist (e.g. the CPU
/// clock of a thread that has exited).
#[inline]
pub(crate) fn clock_ns(id: libc::clockid_t) -> Option<u64> {
    let mut ts = ns_to_timespec(0);
    // SAFETY: `ts` is a valid, writable timespec; a bad clock id only returns an error.
    (unsafe { libc::clock_gettime(id, &mut ts) } == 0).then(|| timespec_to_ns(&ts))
}

/// One absolute `clock_nanosleep` on CLOCK_MONOTONIC to `deadline_ns`; returns 0 or the
/// error number (`EINTR` when a signal handler ran).
#[inline]
pub(crate) fn clock_nanosleep_abs(deadline_ns: u64) -> i32 {
    let ts = ns_to_timespec(deadline_ns);
    // SAFETY: valid timespec pointer; no remainder is written with TIMER_ABSTIME.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    }
}

/// Absolute `clock_nanosleep` to `deadline_ns`, sleeping again to the same deadline after
/// every `EINTR`; returns 0 or the error number of another failure.
#[inline]
pub(crate) fn sleep_until(deadline_ns: u64) -> i32 {
    loop {
        let r = clock_nanosleep_abs(deadline_ns);
        if r != libc::EINTR {
            return r;
        }
    }
}

/// One relative `clock_nanosleep` on CLOCK_MONOTONIC; the time left is written to `rem`
/// after `EINTR`. Returns 0 or the error number.
#[inline]
pub(crate) fn clock_nanosleep_rel(req: &libc::timespec, rem: &mut libc::timespec) -> i32 {
    // SAFETY: valid timespec pointers for the duration of the call.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, req, rem) }
}

/// `nanosleep` for `ns`, restarted with the kernel's remaining time after every `EINTR`.
#[inline]
pub(crate) fn nanosleep_resuming(ns: u64) {
    let mut req = ns_to_timespec(ns);
    let mut rem = ns_to_timespec(0);
    // SAFETY: valid timespec pointers for the duration of the call.
    while unsafe { libc::nanosleep(&req, &mut rem) } != 0 && errno() == libc::EINTR {
        req = rem;
    }
}

/// `sched_yield`: gives the CPU to another runnable thread, if there is one.
#[inline]
pub(crate) fn sched_yield() {
    // SAFETY: no preconditions.
    unsafe { libc::sched_yield() };
}

/// Voluntary and involuntary context switches of `who` (`RUSAGE_THREAD`, `RUSAGE_SELF`)
/// so far. Async-signal-safe.
#[inline]
pub(crate) fn context_switches(who: libc::c_int) -> (u64, u64) {
    // SAFETY: a zeroed rusage is valid for getrusage to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer; the `who` values used here always exist on Linux.
    unsafe { libc::getrusage(who, &mut ru) };
    (ru.ru_nvcsw.max(0) as u64, ru.ru_nivcsw.max(0) as u64)
}

/// Takes ownership of a descriptor a call just returned, or its error.
fn owned(fd: RawFd, call: &'static str) -> Result<OwnedFd, OsError> {
    if fd < 0 {
        return Err(OsError::last(call));
    }
    // SAFETY: a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A CLOCK_MONOTONIC timer file descriptor.
#[derive(Debug)]
pub(crate) struct TimerFd(OwnedFd);

impl TimerFd {
    /// `timerfd_create`; reads fail with `EAGAIN` instead of blocking when `nonblocking`.
    pub fn new(nonblocking: bool) -> Result<Self, OsError> {
        let flags = libc::TFD_CLOEXEC | if nonblocking { libc::TFD_NONBLOCK } else { 0 };
        // SAFETY: plain syscall.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, flags) };
        owned(fd, "timerfd_create").map(Self)
    }

    /// `timerfd_settime`: first expiry `value_ns` (absolute on CLOCK_MONOTONIC when
    /// `absolute`, else from now), then every `interval_ns` (0: one-shot). A zero value
    /// disarms the timer.
    pub fn set(&self, absolute: bool, value_ns: u64, interval_ns: u64) -> Result<(), OsError> {
        let spec = itimerspec(value_ns, interval_ns);
        let flags = if absolute { libc::TFD_TIMER_ABSTIME } else { 0 };
        // SAFETY: valid fd and itimerspec; the old value is not wanted.
        let r = unsafe { libc::timerfd_settime(self.fd(), flags, &spec, std::ptr::null_mut()) };
        if r != 0 {
            return Err(OsError::last("timerfd_settime"));
        }
        Ok(())
    }

    /// One `read`: the number of expirations since the last read (blocking until there
    /// is one unless non-blocking); `None` after `EINTR` or `EAGAIN`.
    pub fn read(&self) -> Result<Option<u64>, OsError> {
        let mut count: u64 = 0;
        // SAFETY: reading 8 bytes into a u64.
        let r = unsafe {
            libc::read(
                self.fd(),
                (&mut count as *mut u64).cast::<libc::c_void>(),
                8,
            )
        };
        if r == 8 {
            return Ok(Some(count));
        }
        match errno() {
            libc::EINTR | libc::EAGAIN => Ok(None),
            _ => Err(OsError::last("read(timerfd)")),
        }
    }

    /// Blocks until at least one expiry; returns the expirations read. `EINTR` does not
    /// end the wait: the timer still expires when it was set to.
    pub fn read_resuming(&self) -> Result<u64, OsError> {
        loop {
            if let Some(n) = self.read()? {
                return Ok(n);
            }
        }
    }

    /// The raw descriptor (to register it in epoll).
    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// An epoll instance.
#[derive(Debug)]
pub(crate) struct Epoll(OwnedFd);

impl Epoll {
    /// `epoll_create1`.
    pub fn new() -> Result<Self, OsError> {
        // SAFETY: plain syscall.
        owned(
            unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) },
            "epoll_create1",
        )
        .map(Self)
    }

    /// Registers `fd` for readability.
    pub fn add_readable(&self, fd: RawFd) -> Result<(), OsError> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: 0,
        };
        // SAFETY: valid descriptors and event.
        let r = unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) };
        if r != 0 {
            return Err(OsError::last("epoll_ctl"));
        }
        Ok(())
    }

    /// One `epoll_wait` for at most one event, `timeout_ms` (−1: forever); returns the
    /// number of events or −1 with `errno` set.
    pub fn wait(&self, timeout_ms: libc::c_int) -> libc::c_int {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: valid epoll fd and an event buffer of length 1.
        unsafe { libc::epoll_wait(self.0.as_raw_fd(), &mut ev, 1, timeout_ms) }
    }

    /// One `epoll_pwait2` with a timespec timeout (ns) and no signal mask; returns the
    /// number of events or −1 with `errno` set (`ENOSYS` before Linux 5.11).
    pub fn pwait2(&self, ns: u64) -> libc::c_int {
        let ts = ns_to_timespec(ns);
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: epoll_pwait2(epfd, events, maxevents, timeout, sigmask, sigsetsize);
        // valid pointers, null sigmask.
        unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.0.as_raw_fd(),
                &mut ev as *mut libc::epoll_event,
                1 as libc::c_int,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            ) as libc::c_int
        }
    }
}

/// `FUTEX_WAIT`: sleeps while `word` holds `expected`, at most `timeout` (relative; `None`
/// = no limit). `private` for a word only this process maps. Returns 0 after a wake-up,
/// or −1 with `errno` set (`ETIMEDOUT`, `EAGAIN` when the word changed, `EINTR`).
/// Async-signal-safe.
#[inline]
pub(crate) fn futex_wait(
    word: &AtomicU32,
    expected: u32,
    timeout: Option<&libc::timespec>,
    private: bool,
) -> libc::c_long {
    let op = libc::FUTEX_WAIT | if private { libc::FUTEX_PRIVATE_FLAG } else { 0 };
    let ts = timeout.map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: the word is a live AtomicU32; the timespec (if any) outlives the call.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), op, expected, ts) }
}

/// `FUTEX_WAIT_BITSET` (private) while `word` holds `expected`, until the absolute
/// CLOCK_MONOTONIC `deadline_ns` (`None`: no deadline): 0 when woken, or -1 with errno
/// (`ETIMEDOUT`, `EAGAIN` when the word differs, `EINTR`).
pub(crate) fn futex_wait_until(
    word: &AtomicU32,
    expected: u32,
    deadline_ns: Option<u64>,
) -> libc::c_long {
    let op = libc::FUTEX_WAIT_BITSET | libc::FUTEX_PRIVATE_FLAG;
    let ts = deadline_ns.map(ns_to_timespec);
    let ts = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: the word is a live AtomicU32; the timespec (if any) outlives the call.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            expected,
            ts,
            std::ptr::null::<u32>(),
            libc::FUTEX_BITSET_MATCH_ANY,
        )
    }
}

/// `futex_waitv(2)` (Linux 5.16+) on one private 32-bit futex `word` expected to hold
/// `expected`, until the absolute CLOCK_MONOTONIC `deadline_ns`: 0 when woken, or -1 with
/// errno (`ETIMEDOUT` at the deadline, `EAGAIN` when the word differs, `EINTR`, `ENOSYS`).
pub(crate) fn futex_waitv_until(word: &AtomicU32, expected: u32, deadline_ns: u64) -> libc::c_long {
    /// The kernel's `struct futex_waitv`.
    #[repr(C)]
    struct FutexWaitv {
        val: u64,
        uaddr: u64,
        flags: u32,
        reserved: u32,
    }
    /// `FUTEX2_SIZE_U32 | FUTEX2_PRIVATE`.
    const FLAGS: u32 = 0x02 | 128;
    let waiter = FutexWaitv {
        val: u64::from(expected),
        uaddr: word.as_ptr() as u64,
        flags: FLAGS,
        reserved: 0,
    };
    let ts = ns_to_timespec(deadline_ns);
    // SAFETY: one valid futex_waitv entry and a timespec that outlive the call.
    unsafe {
        libc::syscall(
            libc::SYS_futex_waitv,
            &waiter as *const FutexWaitv,
            1u32,
            0u32,
            &ts as *const libc::timespec,
            libc::CLOCK_MONOTONIC,
        )
    }
}

/// `FUTEX_WAKE` of every waiter on `word` (shared between processes unless `private`).
/// Async-signal-safe.
#[inline]
pub(crate) fn futex_wake_all(word: &AtomicU32, private: bool) {
    let op = libc::FUTEX_WAKE | if private { libc::FUTEX_PRIVATE_FLAG } else { 0 };
    // SAFETY: the word is a live AtomicU32.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), op, libc::c_int::MAX) };
}

/// A signal set holding `signals`. Async-signal-safe.
pub(crate) fn sigset(signals: &[libc::c_int]) -> libc::sigset_t {
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

/// Blocks `signals` in the calling thread; returns the previous mask for
/// [`restore_mask`].
pub(crate) fn block(signals: &[libc::c_int]) -> Result<libc::sigset_t, OsError> {
    let set = sigset(signals);
    // SAFETY: valid set pointers.
    unsafe {
        let mut old: libc::sigset_t = std::mem::zeroed();
        let r = libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        if r != 0 {
            return Err(OsError::code("pthread_sigmask", r));
        }
        Ok(old)
    }
}

/// Restores a mask saved by [`block`].
pub(crate) fn restore_mask(old: &libc::sigset_t) {
    // SAFETY: valid set pointer.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, old, std::ptr::null_mut()) };
}

/// Discards every pending instance of `signals` (blocked in the calling thread).
pub(crate) fn drain(signals: &[libc::c_int]) {
    let set = sigset(signals);
    let zero = ns_to_timespec(0);
    // SAFETY: valid pointers; a zero timeout polls.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        while libc::sigtimedwait(&set, &mut info, &zero) > 0 {}
    }
}

/// `sigwaitinfo` on `set`: the signal accepted, or −1 with `errno` set. Async-signal-safe.
#[inline]
pub(crate) fn sigwaitinfo(set: &libc::sigset_t) -> libc::c_int {
    // SAFETY: a zeroed siginfo_t is valid for sigwaitinfo to fill; valid set pointer.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::sigwaitinfo(set, &mut info)
    }
}

/// A POSIX timer (`timer_create` on CLOCK_MONOTONIC), deleted on drop.
#[derive(Debug)]
pub(crate) struct PosixTimer(libc::timer_t);

// SAFETY: a timer id is a plain handle the kernel (and glibc, for SIGEV_THREAD) resolves
// in any thread of the process.
unsafe impl Send for PosixTimer {}

impl PosixTimer {
    /// A timer with notification `sev` (see `timer_create(2)`).
    ///
    /// # Safety
    /// `sev` must be a valid `sigevent` for glibc (for `SIGEV_THREAD`, its function and
    /// value must stay valid as long as the timer can fire).
    pub unsafe fn new(sev: *mut libc::sigevent, call: &'static str) -> Result<Self, OsError> {
        let mut timer: libc::timer_t = std::ptr::null_mut();
        // SAFETY: the caller vouches for `sev`; `timer` is valid to write.
        if unsafe { libc::timer_create(libc::CLOCK_MONOTONIC, sev, &mut timer) } != 0 {
            return Err(OsError::last(call));
        }
        Ok(Self(timer))
    }

    /// A timer that sends `signo` to thread `tid` of this process (`SIGEV_THREAD_ID`).
    pub fn signalling_thread(signo: libc::c_int, tid: libc::pid_t) -> Result<Self, OsError> {
        // SAFETY: a zeroed sigevent is valid; we fill the fields the kernel reads.
        let mut sev: libc::sigevent = unsafe { std::mem::zeroed() };
        sev.sigev_notify = libc::SIGEV_SIGNAL | libc::SIGEV_THREAD_ID;
        sev.sigev_signo = signo;
        sev.sigev_notify_thread_id = tid;
        // SAFETY: a complete SIGEV_SIGNAL sigevent.
        unsafe { Self::new(&mut sev, "timer_create") }
    }

    /// Arms it on the absolute grid: first expiry `first_ns`, then every `period_ns`.
    pub fn set_abs(&self, first_ns: u64, period_ns: u64) -> Result<(), OsError> {
        let spec = itimerspec(first_ns, period_ns);
        // SAFETY: our timer; valid itimerspec.
        let r = unsafe {
            libc::timer_settime(self.0, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut())
        };
        if r != 0 {
            return Err(OsError::last("timer_settime"));
        }
        Ok(())
    }

    /// The raw id (for `timer_getoverrun` from a callback thread).
    pub fn id(&self) -> libc::timer_t {
        self.0
    }
}

impl Drop for PosixTimer {
    fn drop(&mut self) {
        // SAFETY: our timer, deleted once.
        unsafe { libc::timer_delete(self.0) };
    }
}

/// `timer_getoverrun`: expirations that passed while the signal of the last one was
/// pending; −1 for a deleted id.
#[inline]
pub(crate) fn timer_overrun(timer: libc::timer_t) -> libc::c_int {
    // SAFETY: a deleted or stale id only returns -1 (EINVAL).
    unsafe { libc::timer_getoverrun(timer) }
}

/// The calling thread's kernel id.
#[inline]
pub(crate) fn gettid() -> libc::pid_t {
    // SAFETY: no preconditions.
    unsafe { libc::gettid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timespec_and_timeval_conversions() {
        for ns in [0, 1, 999_999_999, 1_000_000_000, 123_456_789_012] {
            assert_eq!(timespec_to_ns(&ns_to_timespec(ns)), ns);
        }
        let tv = timeval_us(2_500_001);
        assert_eq!((tv.tv_sec, tv.tv_usec), (2, 500_001));
        let spec = itimerspec(1_500_000_000, 7);
        assert_eq!(timespec_to_ns(&spec.it_value), 1_500_000_000);
        assert_eq!(timespec_to_ns(&spec.it_interval), 7);
    }

    #[test]
    fn errors_name_the_call() {
        let e = OsError::code("clock_nanosleep", libc::EINVAL);
        assert_eq!(e.call, "clock_nanosleep");
        assert_eq!(e.source.raw_os_error(), Some(libc::EINVAL));
        assert!(clock_ns(libc::CLOCK_MONOTONIC).is_some());
        assert!(clock_ns(0x7fff_0000).is_none());
    }

    #[test]
    fn a_nonblocking_timerfd_reports_nothing_until_it_expires() {
        let t = TimerFd::new(true).unwrap();
        assert_eq!(t.read().unwrap(), None);
        t.set(false, 1, 0).unwrap();
        let n = loop {
            if let Some(n) = t.read().unwrap() {
                break n;
            }
        };
        assert_eq!(n, 1);
    }
}
