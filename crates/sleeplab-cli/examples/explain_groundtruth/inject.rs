//! The causes injected, and the waits they act on: absolute and relative sleeps, busy
//! stretches on the clock, deadlines placed away from the scheduler tick, and the two
//! helper threads (a SCHED_FIFO thread that takes the measuring CPU across a deadline,
//! a SCHED_IDLE thread that keeps it from going idle).

use sleeplab::clock::{Env, RealEnv, monotonic_ns};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// The FIFO thread's name, as the kernel's events name it (at most 15 bytes).
pub const HOG_COMM: &str = "gt-fifo-hog";
/// The SCHED_IDLE companion's name.
pub const COMPANION_COMM: &str = "gt-idle-spin";
/// The FIFO thread's priority (any real-time priority takes the CPU from the measuring
/// thread, which is SCHED_OTHER).
const HOG_PRIORITY: i32 = 10;

/// Sleeps until `deadline_ns` (CLOCK_MONOTONIC): `clock_nanosleep(TIMER_ABSTIME)`.
pub fn sleep_until(deadline_ns: u64) {
    RealEnv.sleep_until(deadline_ns);
}

/// Sleeps `ns` with a relative `clock_nanosleep` (the kernel's timer counts from its own
/// clock read at the call).
pub fn sleep_for(ns: u64) {
    RealEnv.sleep_for(ns);
}

/// Runs on the CPU until the clock reads `until_ns`; returns that last reading.
pub fn spin_until(until_ns: u64) -> u64 {
    loop {
        let now = monotonic_ns();
        if now >= until_ns {
            return now;
        }
        std::hint::spin_loop();
    }
}

/// Where on the millisecond grid a deadline falls. The scheduler tick fires on
/// multiples of its period in CLOCK_MONOTONIC (the kernel aligns it to them; 1, 4 or
/// 10 ms at HZ 1000, 250, 100: all whole milliseconds), and its interrupt runs every
/// timer whose soft expiry has passed: a deadline at `OFFSET_NS` past a millisecond,
/// with at most `1 ms − OFFSET_NS` of slack, is not cut short by the tick. Not right
/// after the millisecond: on a VM the tick's interrupt comes late by 100 µs and more
/// at times, and then runs a timer whose slack has just begun.
pub const OFFSET_NS: u64 = 400_000;

/// The first deadline at least `gap_ns` from `now_ns` that sits `offset_ns` past a
/// whole millisecond.
pub fn grid_deadline(now_ns: u64, gap_ns: u64, offset_ns: u64) -> u64 {
    const MS: u64 = 1_000_000;
    let m = (now_ns + gap_ns).saturating_sub(offset_ns).div_ceil(MS);
    m * MS + offset_ns
}

/// Sets the calling thread's policy to SCHED_IDLE (runs only when nothing else on its
/// CPU wants to).
fn set_sched_idle() -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: valid sched_param; 0 is the calling thread.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// When the FIFO thread held the CPU for one wake: it woke, spun until its stop time,
/// and read the clock as it stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Burn {
    /// The clock read when it began to spin.
    pub start_ns: u64,
    /// The clock read when it stopped (it sleeps right after).
    pub end_ns: u64,
}

/// A SCHED_FIFO thread pinned to the measuring CPU: told a deadline, it sleeps until
/// `lead_ns` before it, then holds the CPU until `burn_ns` after it, and reports when
/// its burn began and ended.
pub struct FifoHog {
    orders: Option<mpsc::Sender<(u64, u64)>>,
    burns: mpsc::Receiver<Burn>,
    handle: Option<JoinHandle<()>>,
}

impl FifoHog {
    /// Starts the thread on `cpu`; fails when it cannot take the real-time policy.
    pub fn start(cpu: usize) -> anyhow::Result<Self> {
        let (orders, rx) = mpsc::channel::<(u64, u64)>();
        let (tx, burns) = mpsc::channel::<Burn>();
        let (ready_tx, ready) = mpsc::channel::<Result<(), String>>();
        let handle = std::thread::Builder::new()
            .name(HOG_COMM.into())
            .spawn(move || {
                let set = sleeplab::system::pin_to_cpu(cpu)
                    .and_then(|()| {
                        sleeplab::system::set_policy(sleeplab::system::Policy::Fifo, HOG_PRIORITY)
                    })
                    .map_err(|e| e.to_string());
                let ok = set.is_ok();
                let _ = ready_tx.send(set);
                if !ok {
                    return;
                }
                for (wake_ns, stop_ns) in rx {
                    sleep_until(wake_ns);
                    let start_ns = monotonic_ns();
                    let end_ns = spin_until(stop_ns);
                    if tx.send(Burn { start_ns, end_ns }).is_err() {
                        return;
                    }
                }
            })?;
        ready
            .recv()?
            .map_err(|e| anyhow::anyhow!("{HOG_COMM}: {e}"))?;
        Ok(Self {
            orders: Some(orders),
            burns,
            handle: Some(handle),
        })
    }

    /// Orders one burn: wake at `wake_ns`, hold the CPU until `stop_ns`.
    pub fn order(&self, wake_ns: u64, stop_ns: u64) {
        if let Some(o) = &self.orders {
            let _ = o.send((wake_ns, stop_ns));
        }
    }

    /// The burn last ordered, once it is over.
    pub fn burn(&self) -> anyhow::Result<Burn> {
        Ok(self.burns.recv()?)
    }
}

impl Drop for FifoHog {
    fn drop(&mut self) {
        self.orders.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// A SCHED_IDLE thread spinning on one CPU while it lives: the CPU never goes idle, and
/// any other thread that wakes there takes it at once.
pub struct Companion {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Companion {
    /// Starts spinning on `cpu`; fails when it cannot take SCHED_IDLE.
    pub fn start(cpu: usize) -> anyhow::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let (ready_tx, ready) = mpsc::channel::<Result<(), String>>();
        let handle = std::thread::Builder::new()
            .name(COMPANION_COMM.into())
            .spawn(move || {
                let set = sleeplab::system::pin_to_cpu(cpu)
                    .map_err(|e| e.to_string())
                    .and_then(|()| set_sched_idle().map_err(|e| e.to_string()));
                let ok = set.is_ok();
                let _ = ready_tx.send(set);
                let mut x = 0u64;
                while ok && !s.load(Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            })?;
        ready
            .recv()?
            .map_err(|e| anyhow::anyhow!("{COMPANION_COMM}: {e}"))?;
        Ok(Self {
            stop,
            handle: Some(handle),
        })
    }
}

impl Drop for Companion {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
