//! `posix-timer-thread`: a POSIX timer with `SIGEV_THREAD` notification. glibc runs one
//! helper thread per process that receives the timer's signal and starts a new thread
//! for every expiry; that thread calls our callback, which records its arrival time and
//! `timer_getoverrun` into a buffer allocated when the timer is armed. The waiting thread
//! takes the records in order ([`wait`](Periodic::wait)), or sleeps until the last
//! deadline and takes them all ([`wait_batch`](Periodic::wait_batch)). A callback's
//! `timer_getoverrun` may be another expiry's (the callbacks run concurrently), so the
//! counts are estimates, made consistent with the arrival times by [`reconcile`].
//!
//! CPU cost: every callback thread adds its own CPU time (`CLOCK_THREAD_CPUTIME_ID`, read
//! at the end of the callback: thread start-up plus the callback) and context switches;
//! glibc's helper thread is found by name (see [`helper_usage`]) and read through its
//! per-thread CPU clock. Thread creation in the kernel before the new thread runs, and
//! its exit, are not counted.
//!
//! Lifetime: a callback thread may still be starting after `timer_delete` returns, and
//! glibc cannot say when the last one has run. So each timer's small control block is
//! deliberately leaked (about 200 bytes, once per timer, reused by every arming). A
//! callback of an earlier arming sees another generation (carried in the low bits of its
//! `sigval`) or `retired` and returns without touching the buffer, which is freed only
//! after every callback that got past that check has left (`in_flight` is incremented
//! *before* the check).
//!
//! [`reconcile`]: super::reconcile

use super::{Armed, Periodic, PeriodicMechanism, Wake, buffered};
use crate::clock::monotonic_ns;
use crate::sys::{self, PosixTimer};
use crate::wait::{ThreadUsage, WaitError};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// glibc's `struct sigevent` with the `_sigev_thread` member of its union spelled out
/// (the `libc` crate only exposes the thread-id member).
#[repr(C)]
struct SigeventThread {
    value: libc::sigval,
    signo: libc::c_int,
    notify: libc::c_int,
    function: Option<extern "C" fn(libc::sigval)>,
    attributes: *mut libc::pthread_attr_t,
    _pad: [libc::c_int; 8],
}

const _: () =
    assert!(std::mem::size_of::<SigeventThread>() == std::mem::size_of::<libc::sigevent>());

/// How long the waiting thread sleeps between looks at the records (and the stop flag
/// its caller checks).
const POLL: Duration = Duration::from_millis(50);

/// The low bits of a `Control` address (8-aligned) that carry the arming's generation.
const GENERATION: usize = 7;

/// One recorded callback; `expirations` (≥ 1) is written last, so non-zero means ready.
#[derive(Default)]
struct Slot {
    wake_ns: AtomicU64,
    expirations: AtomicU64,
}

/// What the callbacks of one timer share (leaked: see the module documentation).
#[derive(Default)]
struct Control {
    generation: AtomicUsize,
    in_flight: AtomicU64,
    retired: AtomicBool,
    timer: AtomicUsize,
    slots: AtomicPtr<Slot>,
    cap: AtomicUsize,
    next: AtomicUsize,
    /// The last deadline, ns: the run is over once a callback arrives at or after it.
    last_deadline: AtomicU64,
    /// Callbacks arriving at or after this time wake the waiting thread.
    wake_at: AtomicU64,
    cpu_ns: AtomicU64,
    voluntary_csw: AtomicU64,
    involuntary_csw: AtomicU64,
    done: Mutex<bool>,
    done_cv: Condvar,
}

impl Control {
    fn lock(&self) -> MutexGuard<'_, bool> {
        self.done.lock().unwrap_or_else(|e| e.into_inner())
    }
}

extern "C" fn on_expiry(value: libc::sigval) {
    let now = monotonic_ns();
    let raw = value.sival_ptr as usize;
    // SAFETY: the pointer is a leaked `Control`, valid for the life of the process.
    let ctl = unsafe { &*((raw & !GENERATION) as *const Control) };
    ctl.in_flight.fetch_add(1, SeqCst);
    if !ctl.retired.load(SeqCst) && ctl.generation.load(SeqCst) & GENERATION == raw & GENERATION {
        let overrun = sys::timer_overrun(ctl.timer.load(SeqCst) as libc::timer_t);
        let n = 1 + u64::try_from(overrun).unwrap_or(0);
        let i = ctl.next.fetch_add(1, SeqCst);
        let slots = ctl.slots.load(SeqCst);
        if i < ctl.cap.load(SeqCst) && !slots.is_null() {
            // SAFETY: i < cap, and the buffer lives until in_flight drops to 0 after
            // retirement.
            let slot = unsafe { &*slots.add(i) };
            slot.wake_ns.store(now, SeqCst);
            slot.expirations.store(n, SeqCst);
        }
        let u = ThreadUsage::now();
        ctl.cpu_ns.fetch_add(u.cpu_ns, SeqCst);
        ctl.voluntary_csw.fetch_add(u.voluntary_csw, SeqCst);
        ctl.involuntary_csw.fetch_add(u.involuntary_csw, SeqCst);
        let end = now >= ctl.last_deadline.load(SeqCst);
        if end || now >= ctl.wake_at.load(SeqCst) {
            *ctl.lock() |= end;
            ctl.done_cv.notify_all();
        }
    }
    ctl.in_flight.fetch_sub(1, SeqCst);
}

extern "C" fn noop(_: libc::sigval) {}

/// Creates a SIGEV_THREAD timer calling `function` with `value`.
fn create_timer(
    function: extern "C" fn(libc::sigval),
    value: *mut libc::c_void,
) -> Result<PosixTimer, WaitError> {
    let mut sev = SigeventThread {
        value: libc::sigval { sival_ptr: value },
        signo: 0,
        notify: libc::SIGEV_THREAD,
        function: Some(function),
        attributes: std::ptr::null_mut(),
        _pad: [0; 8],
    };
    // SAFETY: `SigeventThread` has glibc's layout (size checked above); the callbacks
    // and the leaked control block outlive the timer.
    let timer = unsafe {
        PosixTimer::new(
            (&mut sev as *mut SigeventThread).cast::<libc::sigevent>(),
            "timer_create(SIGEV_THREAD)",
        )
    };
    Ok(timer?)
}

const PRIMER_NAME: &str = "sl-sigev-prime";

/// The thread id of glibc's SIGEV_THREAD helper thread. glibc starts it on the first
/// SIGEV_THREAD `timer_create` of the process, from the calling thread, whose name it
/// inherits: so a thread with a unique name creates (and deletes) one timer, and the
/// helper is the thread left with that name. `None` when another SIGEV_THREAD timer was
/// created earlier in this process (the helper then has another name).
fn helper_tid() -> Option<libc::pid_t> {
    static TID: OnceLock<Option<libc::pid_t>> = OnceLock::new();
    *TID.get_or_init(|| {
        let primed = std::thread::Builder::new()
            .name(PRIMER_NAME.into())
            .spawn(|| drop(create_timer(noop, std::ptr::null_mut())))
            .ok()?
            .join();
        primed.ok()?;
        std::fs::read_dir("/proc/self/task")
            .ok()?
            .filter_map(Result::ok)
            .find_map(|e| {
                let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
                (comm.trim_end() == PRIMER_NAME)
                    .then(|| e.file_name().to_str()?.parse().ok())
                    .flatten()
            })
    })
}

/// CPU time and context switches of glibc's SIGEV_THREAD helper thread so far.
fn helper_usage() -> Option<ThreadUsage> {
    ThreadUsage::of_thread(helper_tid()?)
}

/// `posix-timer-thread`.
struct PosixThread {
    ctl: &'static Control,
    /// The armed timer; `None` once the run is over.
    timer: Option<PosixTimer>,
    /// The next record to hand out.
    read: usize,
    /// When to give up on a timer that stopped firing: a second after the last deadline.
    give_up: u64,
    /// Whether a buffer is allocated (between arm and disarm).
    buffer: bool,
}

impl PosixThread {
    fn slot(&self, i: usize) -> Option<Wake> {
        let slots = self.ctl.slots.load(SeqCst);
        if !self.buffer || slots.is_null() || i >= self.ctl.cap.load(SeqCst) {
            return None;
        }
        // SAFETY: i < cap; the buffer lives until `free`.
        let slot = unsafe { &*slots.add(i) };
        let n = slot.expirations.load(SeqCst);
        (n != 0).then(|| Wake {
            wake_ns: slot.wake_ns.load(SeqCst),
            expirations: n,
        })
    }

    /// Appends the ready records from `read` on, in order.
    fn drain(&mut self, out: &mut Vec<Wake>) {
        while let Some(w) = self.slot(self.read) {
            out.push(w);
            self.read += 1;
        }
    }

    /// Deletes the timer and waits until no callback can touch the buffer.
    fn stop(&mut self) {
        if self.timer.take().is_some() {
            self.ctl.retired.store(true, SeqCst);
            while self.ctl.in_flight.load(SeqCst) != 0 {
                std::thread::yield_now();
            }
        }
    }

    /// Frees the buffer of a stopped run.
    fn free(&mut self) {
        if std::mem::take(&mut self.buffer) {
            let cap = self.ctl.cap.swap(0, SeqCst);
            let raw = self.ctl.slots.swap(std::ptr::null_mut(), SeqCst);
            // SAFETY: `raw` came from `Box::into_raw` of a `[Slot]` of length `cap`, and
            // no callback can reach it any more (stopped).
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(raw, cap)) });
        }
    }
}

impl Periodic for PosixThread {
    fn arm(&mut self, period_ns: u64, ticks: u64) -> Result<Armed, WaitError> {
        let cap = buffered("posix-timer-thread", ticks)? + 64;
        let ctl = self.ctl;
        let slots: Box<[Slot]> = (0..cap).map(|_| Slot::default()).collect();
        ctl.slots.store(Box::into_raw(slots).cast::<Slot>(), SeqCst);
        ctl.cap.store(cap, SeqCst);
        self.buffer = true;
        self.read = 0;
        ctl.next.store(0, SeqCst);
        for c in [&ctl.cpu_ns, &ctl.voluntary_csw, &ctl.involuntary_csw] {
            c.store(0, SeqCst);
        }
        *ctl.lock() = false;
        ctl.last_deadline.store(u64::MAX, SeqCst);
        let generation = ctl.generation.fetch_add(1, SeqCst).wrapping_add(1);
        ctl.retired.store(false, SeqCst);
        let value = (ctl as *const Control as usize) | (generation & GENERATION);
        let timer = match create_timer(on_expiry, value as *mut libc::c_void) {
            Ok(t) => t,
            Err(e) => {
                self.free();
                return Err(e);
            }
        };
        ctl.timer.store(timer.id() as usize, SeqCst);
        let t0 = monotonic_ns();
        let last = t0.saturating_add(ticks.saturating_mul(period_ns));
        ctl.last_deadline.store(last, SeqCst);
        ctl.wake_at.store(last, SeqCst);
        self.give_up = last.saturating_add(1_000_000_000);
        let set = timer.set_abs(t0.saturating_add(period_ns), period_ns);
        self.timer = Some(timer);
        if let Err(e) = set {
            self.disarm();
            return Err(e.into());
        }
        Ok(Armed::at(t0))
    }

    fn wait(&mut self) -> Result<Wake, WaitError> {
        self.ctl.wake_at.store(0, SeqCst);
        loop {
            if let Some(w) = self.slot(self.read) {
                self.read += 1;
                return Ok(w);
            }
            if self.timer.is_none() || self.read >= self.ctl.cap.load(SeqCst) {
                return Err(WaitError::Ended);
            }
            let guard = self.ctl.lock();
            // Checked again under the lock a callback takes to notify: no lost wake-up.
            if self.slot(self.read).is_none() {
                drop(self.ctl.done_cv.wait_timeout(guard, POLL));
            }
        }
    }

    fn wait_batch(&mut self, out: &mut Vec<Wake>) -> Result<(), WaitError> {
        if self.timer.is_none() {
            self.drain(out);
            return Err(WaitError::Ended);
        }
        self.ctl
            .wake_at
            .store(self.ctl.last_deadline.load(SeqCst), SeqCst);
        let mut done = self.ctl.lock();
        if !*done && monotonic_ns() < self.give_up {
            done = self
                .ctl
                .done_cv
                .wait_timeout(done, POLL)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        let end = *done || monotonic_ns() >= self.give_up;
        drop(done);
        if end {
            // The last deadline came (or the timer stopped firing): every record made
            // before the timer is deleted belongs to the run.
            self.stop();
        }
        self.drain(out);
        Ok(())
    }

    fn disarm(&mut self) -> ThreadUsage {
        self.stop();
        self.free();
        let ctl = self.ctl;
        ThreadUsage {
            cpu_ns: ctl.cpu_ns.load(SeqCst),
            voluntary_csw: ctl.voluntary_csw.load(SeqCst),
            involuntary_csw: ctl.involuntary_csw.load(SeqCst),
        }
    }
}

pub(super) const POSIX_THREAD: PeriodicMechanism = PeriodicMechanism {
    exact_counts: false,
    shared_helper_usage: Some(helper_usage),
    ..PeriodicMechanism::row(
        "posix-timer-thread",
        "posix-timer",
        "timer_create(SIGEV_THREAD): glibc starts a thread per expiry whose callback records the time",
        false,
        |_| {
            // Start (and find) glibc's helper before any measurement.
            let _ = helper_tid();
            Ok(Box::new(PosixThread {
                ctl: Box::leak(Box::default()),
                timer: None,
                read: 0,
                give_up: 0,
                buffer: false,
            }))
        },
    )
};
