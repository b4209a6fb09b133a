//! `posix-timer-thread`: a POSIX timer with `SIGEV_THREAD` notification. glibc runs one
//! helper thread per process that receives the timer's signal and starts a new thread
//! for every expiry; that thread calls our callback, which records its arrival time and
//! `timer_getoverrun` into a buffer allocated before the timer is armed. The measuring
//! thread only waits for the last tick. A callback's `timer_getoverrun` may be another
//! expiry's (the callbacks run concurrently), so the counts are made consistent with the
//! arrival times afterwards ([`reconcile`]).
//!
//! CPU cost: every callback thread adds its own CPU time (`CLOCK_THREAD_CPUTIME_ID`, read
//! at the end of the callback: thread start-up plus the callback) and context switches;
//! glibc's helper thread is found by name (see [`helper_usage`]) and read through its
//! per-thread CPU clock. Thread creation in the kernel before the new thread runs, and
//! its exit, are not counted.
//!
//! Lifetime: a callback thread may still be starting after `timer_delete` returns, and
//! glibc cannot say when the last one has run. So each run's small control block is
//! deliberately leaked (about 200 bytes); a late callback sees `retired` and returns
//! without touching the buffer, which is freed only after every callback that got past
//! that check has left (`in_flight` is incremented *before* the check).

use super::sys::{itimerspec, os_err, other_thread_usage};
use super::{MechanismError, Periodic, Plan, RunReport, Wake};
use crate::experiments::timers::accounting::reconcile;
use crate::interrupt::interrupted;
use crate::rusage::ThreadUsage;
use sleeplab::clock::monotonic_ns;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Condvar, Mutex, OnceLock};
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

/// One recorded callback.
#[derive(Default)]
struct Slot {
    wake_ns: AtomicU64,
    expirations: AtomicU64,
}

/// What the callbacks of one run share (leaked: see the module documentation).
struct Control {
    in_flight: AtomicU64,
    retired: AtomicBool,
    timer: AtomicUsize,
    slots: AtomicPtr<Slot>,
    cap: usize,
    next: AtomicUsize,
    /// The last deadline, ns: the run is over once a callback arrives at or after it.
    last_deadline: AtomicU64,
    cpu_ns: AtomicU64,
    voluntary_csw: AtomicU64,
    involuntary_csw: AtomicU64,
    done: Mutex<bool>,
    done_cv: Condvar,
}

extern "C" fn on_expiry(value: libc::sigval) {
    let now = monotonic_ns();
    // SAFETY: the pointer is a leaked `Control`, valid for the life of the process.
    let ctl = unsafe { &*(value.sival_ptr as *const Control) };
    ctl.in_flight.fetch_add(1, SeqCst);
    if !ctl.retired.load(SeqCst) {
        // SAFETY: the timer is deleted only after `retired` is set; a deleted id just
        // returns -1 (EINVAL).
        let overrun = unsafe { libc::timer_getoverrun(ctl.timer.load(SeqCst) as libc::timer_t) };
        let n = 1 + u64::try_from(overrun).unwrap_or(0);
        let i = ctl.next.fetch_add(1, SeqCst);
        let slots = ctl.slots.load(SeqCst);
        if i < ctl.cap && !slots.is_null() {
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
        if now >= ctl.last_deadline.load(SeqCst) {
            if let Ok(mut d) = ctl.done.lock() {
                *d = true;
            }
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
) -> Result<libc::timer_t, MechanismError> {
    let mut sev = SigeventThread {
        value: libc::sigval { sival_ptr: value },
        signo: 0,
        notify: libc::SIGEV_THREAD,
        function: Some(function),
        attributes: std::ptr::null_mut(),
        _pad: [0; 8],
    };
    let mut timer: libc::timer_t = std::ptr::null_mut();
    // SAFETY: `SigeventThread` has glibc's layout (size checked above); valid pointers.
    let r = unsafe {
        libc::timer_create(
            libc::CLOCK_MONOTONIC,
            (&mut sev as *mut SigeventThread).cast::<libc::sigevent>(),
            &mut timer,
        )
    };
    if r != 0 {
        return Err(os_err("timer_create(SIGEV_THREAD)"));
    }
    Ok(timer)
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
            .spawn(|| {
                if let Ok(t) = create_timer(noop, std::ptr::null_mut()) {
                    // SAFETY: our timer, never armed.
                    unsafe { libc::timer_delete(t) };
                }
            })
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
pub fn helper_usage() -> Option<ThreadUsage> {
    other_thread_usage(helper_tid()?)
}

/// `posix-timer-thread`.
pub struct PosixThread;

impl PosixThread {
    /// A mechanism (the timer is created per run).
    pub fn new() -> Self {
        // Start (and find) glibc's helper before any measurement.
        let _ = helper_tid();
        Self
    }
}

impl Periodic for PosixThread {
    fn run(&mut self, plan: &Plan, wakes: &mut Vec<Wake>) -> Result<RunReport, MechanismError> {
        let cap = usize::try_from(plan.ticks).unwrap_or(usize::MAX / 2) + 64;
        let slots: Box<[Slot]> = (0..cap).map(|_| Slot::default()).collect();
        let slots_ptr = Box::into_raw(slots).cast::<Slot>();
        let ctl: &'static Control = Box::leak(Box::new(Control {
            in_flight: AtomicU64::new(0),
            retired: AtomicBool::new(false),
            timer: AtomicUsize::new(0),
            slots: AtomicPtr::new(slots_ptr),
            cap,
            next: AtomicUsize::new(0),
            last_deadline: AtomicU64::new(u64::MAX),
            cpu_ns: AtomicU64::new(0),
            voluntary_csw: AtomicU64::new(0),
            involuntary_csw: AtomicU64::new(0),
            done: Mutex::new(false),
            done_cv: Condvar::new(),
        }));
        let result = run_with(ctl, plan);
        // Retire: no callback touches the buffer after this.
        ctl.retired.store(true, SeqCst);
        while ctl.in_flight.load(SeqCst) != 0 {
            std::thread::yield_now();
        }
        let raw = ctl.slots.swap(std::ptr::null_mut(), SeqCst);
        // SAFETY: `raw` came from `Box::into_raw` of a `[Slot]` of length `cap`, and no
        // callback can reach it any more.
        let slots = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(raw, cap)) };
        let mut report = result?;
        let n = ctl.next.load(SeqCst).min(cap);
        let mut got: Vec<Wake> = slots[..n]
            .iter()
            .map(|s| Wake {
                wake_ns: s.wake_ns.load(SeqCst),
                expirations: s.expirations.load(SeqCst),
            })
            .collect();
        // Callback threads may run out of order, and each may have read another
        // expiry's overrun count.
        got.sort_by_key(|w| w.wake_ns);
        reconcile(report.t0_ns, plan.period_ns, &mut got);
        let mut covered = 0u64;
        for w in got {
            if covered >= plan.ticks {
                break;
            }
            covered += w.expirations.max(1);
            report.end_ns = w.wake_ns;
            wakes.push(w);
        }
        report.interrupted = covered < plan.ticks && interrupted();
        report.helper = ThreadUsage {
            cpu_ns: ctl.cpu_ns.load(SeqCst),
            voluntary_csw: ctl.voluntary_csw.load(SeqCst),
            involuntary_csw: ctl.involuntary_csw.load(SeqCst),
        };
        Ok(report)
    }
}

fn run_with(ctl: &'static Control, plan: &Plan) -> Result<RunReport, MechanismError> {
    let timer = create_timer(on_expiry, (ctl as *const Control).cast_mut().cast())?;
    ctl.timer.store(timer as usize, SeqCst);
    let p = plan.period_ns;
    let t0 = monotonic_ns();
    ctl.last_deadline
        .store(t0.saturating_add(plan.ticks.saturating_mul(p)), SeqCst);
    let spec = itimerspec(t0 + p, p);
    // SAFETY: our timer; valid itimerspec.
    let r = unsafe { libc::timer_settime(timer, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
    if r != 0 {
        let e = os_err("timer_settime");
        // SAFETY: our timer.
        unsafe { libc::timer_delete(timer) };
        return Err(e);
    }
    // Wait for the last tick, checking for Ctrl-C now and then. A timer that stopped
    // firing is given up a second after its last deadline (the missing ticks are then
    // counted as undelivered).
    let give_up = t0
        .saturating_add(plan.ticks.saturating_mul(p))
        .saturating_add(1_000_000_000);
    let mut done = ctl.done.lock().unwrap_or_else(|e| e.into_inner());
    while !*done && !interrupted() && monotonic_ns() < give_up {
        done = ctl
            .done_cv
            .wait_timeout(done, Duration::from_millis(50))
            .map(|(g, _)| g)
            .unwrap_or_else(|e| e.into_inner().0);
    }
    drop(done);
    // SAFETY: our timer.
    unsafe { libc::timer_delete(timer) };
    Ok(RunReport {
        t0_ns: t0,
        ..RunReport::default()
    })
}
