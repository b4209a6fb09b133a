//! Precise sleeps for async code: a sleep or a periodic tick wakes its task within
//! microseconds of its deadline, never before, without blocking the executor's threads
//! and without a spinning thread per sleeping task.
//!
//! # On tokio: [`ReactorInterval`] and [`ReactorTimer`]
//!
//! With the cargo feature `tokio`, a loop ticks on a [`ReactorInterval`] and one-shot
//! sleeps go through a [`ReactorTimer`]. Both wait in the runtime's own reactor: a
//! timerfd armed a learned margin before the deadline wakes the runtime's worker, which
//! spins the rest of the margin there, one kernel wake per deadline. The interval's
//! periodic timerfd is moved forward by the kernel, so no tick re-arms a timer; the
//! timer's two timerfds serve every task it is cloned into. Each spins at most 1 % of
//! each wait by default (`DEFAULT_CPU_BUDGET_PERCENT`), raised with
//! `with_cpu_budget_percent` for more precision at a high rate. They are made inside a
//! runtime with I/O enabled (`ReactorError` otherwise), and their margin is spun on the
//! executor's thread.
//!
//! ```
//! # #[cfg(feature = "tokio")]
//! # async fn example() -> Result<(), sleeplab::precise::asleep::ReactorError> {
//! use std::time::Duration;
//! use sleeplab::precise::asleep::{ReactorInterval, ReactorTimer};
//!
//! let mut frames = ReactorInterval::new(Duration::from_nanos(16_666_667))?; // 60 Hz
//! let tick = frames.tick().await; // tick k at start + k·period, never early
//! assert!(tick.woke_ns >= tick.scheduled_ns);
//!
//! let timer = ReactorTimer::with_cpu_budget_percent(5.0)?; // spin up to 5 % of a wait
//! timer.sleep(Duration::from_micros(1500)).await;
//! # Ok(())
//! # }
//! ```
//!
//! # On any executor: [`sleep_until`], [`AsyncTimer`]
//!
//! One timer thread serves every sleep of an [`AsyncTimer`] (the process-wide one
//! behind [`sleep_until`] and [`sleep`] starts on first use). It keeps the deadlines in
//! an ordered map and makes **one** precise sleep, a [`PreciseSleeper`] to the earliest
//! deadline (an absolute native sleep to `deadline − margin`, then a short spin), wakes
//! every sleep that is due, and sleeps to the next. A sleep registered before the
//! deadline the thread is sleeping to rings a bell (a futex) that cuts the native phase
//! short, and the thread starts over with the new earliest. With no sleep pending it
//! parks at no CPU.
//!
//! What it costs: a sleeping task costs a map entry (`O(log n)` to add and to fire) and
//! no CPU; the timer thread's spin is paid once per distinct deadline it sleeps to,
//! whatever the number of tasks, and is bounded by its [`CpuBudget`] (by default 1 % of
//! each wait: the thread serves every task, so its budget is a share of the time between
//! the deadlines it sleeps to). Sleeps due together are woken together, after one sleep.
//! Deadlines closer together than the margin are served by one spin that runs on from
//! the first to the next.
//!
//! What it does not do: the last hop is the executor's. A woken task runs when its
//! executor polls it; a worker parked in `epoll_wait` is woken by another thread, which
//! on a virtual machine with an idle vCPU costs a host wakeup (tens of µs): on tokio,
//! that second wake is what the reactor types above save. And a sleep registered during
//! the final spin with an earlier deadline than the spin's is woken at the end of that
//! spin (late by at most the margin): the spin is never cut short. docs/ASYNC.md weighs
//! the designs.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use sleeplab::precise::asleep;
//!
//! # fn block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     use std::task::{Context, Poll, Wake, Waker};
//! #     struct Unpark(std::thread::Thread);
//! #     impl Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
//! #     let waker = Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
//! #     let mut f = std::pin::pin!(f);
//! #     loop {
//! #         if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&waker)) { return v }
//! #         std::thread::park();
//! #     }
//! # }
//! block_on(async {
//!     let deadline = Instant::now() + Duration::from_millis(2);
//!     asleep::sleep_until(deadline).await; // on tokio, smol, any executor
//!     assert!(Instant::now() >= deadline); // never early
//! });
//! ```
//!
//! [`CpuBudget`]: crate::precise::CpuBudget
// Without the feature the reactor types do not exist: their links lead to this page.
#![cfg_attr(
    not(feature = "tokio"),
    doc = "[`ReactorInterval`]: self\n[`ReactorTimer`]: self"
)]

mod queue;
#[cfg(feature = "tokio")]
mod reactor;
#[cfg(test)]
mod tests;
mod timer_loop;

#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub use reactor::{IntervalStats, IntervalTick, ReactorError, ReactorInterval, ReactorTimer};

use crate::clock::{duration_ns, instant_to_ns, monotonic_ns};
use crate::precise::{OptionError, PreciseSleeper, PreciseSleeperBuilder};
use queue::{Shared, Slot};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use timer_loop::{BellEnv, Core, ring};

/// A timer thread that wakes async sleeps precisely; cheap to clone (every clone and
/// every [`Sleep`] it made share the thread, which ends when the last of them is gone).
#[derive(Debug, Clone)]
pub struct AsyncTimer {
    handle: Arc<Handle>,
}

/// The timer's counts so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimerStats {
    /// Sleeps woken.
    pub fired: u64,
    /// Their mean lateness as the timer thread saw it (its clock read after waking −
    /// their deadline), ns: the executor's own delay to poll the task comes on top.
    pub mean_late_ns: u64,
    /// The largest such lateness, ns.
    pub max_late_ns: u64,
    /// Sleeps registered and not yet fired.
    pub pending: usize,
    /// CPU time of the timer thread so far (its native sleeps, spins and wakes), ns.
    pub cpu_ns: u64,
}

/// Stops the thread when the last user is gone.
#[derive(Debug)]
struct Handle {
    shared: Arc<Shared>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        ring(&self.shared);
    }
}

impl AsyncTimer {
    /// The default budget of the timer thread's spin: a share of each wait, percent.
    pub const DEFAULT_CPU_BUDGET_PERCENT: f64 = 1.0;

    /// A timer thread whose sleeper has the default options, except a CPU budget of
    /// [`DEFAULT_CPU_BUDGET_PERCENT`](Self::DEFAULT_CPU_BUDGET_PERCENT).
    ///
    /// # Panics
    /// If the system refuses a new thread, as [`std::thread::spawn`] does.
    pub fn new() -> Self {
        // The defaults and a budget of 1 % are in range.
        Self::spawn(PreciseSleeper::builder().cpu_budget_percent(Self::DEFAULT_CPU_BUDGET_PERCENT))
    }

    /// A timer thread whose sleeper is built by `builder` (on that thread, so its timer
    /// slack and scheduler slice are set there).
    ///
    /// # Errors
    /// An option of `builder` out of its range, as
    /// [`PreciseSleeperBuilder::build`] refuses it (before any thread starts).
    ///
    /// # Panics
    /// If the system refuses a new thread, as [`std::thread::spawn`] does.
    pub fn with_sleeper(builder: PreciseSleeperBuilder) -> Result<Self, OptionError> {
        builder.validate()?;
        Ok(Self::spawn(builder))
    }

    /// Starts the timer thread on `builder`, whose options were checked.
    fn spawn(builder: PreciseSleeperBuilder) -> Self {
        let shared = Arc::new(Shared::default());
        let thread_shared = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("sleeplab-timer".into())
            .spawn(move || {
                thread_shared
                    .tid
                    .store(crate::sys::gettid(), Ordering::Release);
                let env = BellEnv::new(Arc::clone(&thread_shared));
                Core::new(builder.build_unchecked(env, false), thread_shared).run();
            })
            .expect("spawning the timer thread");
        Self {
            handle: Arc::new(Handle { shared }),
        }
    }

    /// A sleep that ends at `deadline` (at once if it has passed).
    pub fn sleep_until(&self, deadline: Instant) -> Sleep {
        self.sleep_until_ns(instant_to_ns(deadline))
    }

    /// A sleep that ends `duration` from now.
    pub fn sleep(&self, duration: Duration) -> Sleep {
        self.sleep_until_ns(monotonic_ns().saturating_add(duration_ns(duration)))
    }

    /// A sleep that ends at `deadline_ns` on [`monotonic_ns`]'s time line.
    pub fn sleep_until_ns(&self, deadline_ns: u64) -> Sleep {
        Sleep::new(deadline_ns, Backend::Thread(self.clone()))
    }

    /// The counts so far.
    pub fn stats(&self) -> TimerStats {
        let s = &self.handle.shared;
        let cpu_ns = match s.tid.load(Ordering::Acquire) {
            0 => 0,
            tid => crate::usage::ThreadUsage::of_thread(tid).map_or(0, |u| u.cpu_ns),
        };
        s.counts.stats(s.pending(), cpu_ns)
    }
}

impl Default for AsyncTimer {
    fn default() -> Self {
        Self::new()
    }
}

/// The process-wide timer behind [`sleep_until`] and [`sleep`], started on first use.
pub fn global() -> &'static AsyncTimer {
    static GLOBAL: OnceLock<AsyncTimer> = OnceLock::new();
    GLOBAL.get_or_init(AsyncTimer::new)
}

/// A precise sleep to `deadline` on the process-wide timer ([`global`]).
pub fn sleep_until(deadline: Instant) -> Sleep {
    global().sleep_until(deadline)
}

/// A precise sleep to `deadline_ns` ([`monotonic_ns`]'s time line) on the process-wide
/// timer ([`global`]).
pub fn sleep_until_ns(deadline_ns: u64) -> Sleep {
    global().sleep_until_ns(deadline_ns)
}

/// A precise sleep of `duration` from now on the process-wide timer ([`global`]).
pub fn sleep(duration: Duration) -> Sleep {
    global().sleep(duration)
}

/// The timer a [`Sleep`] registers with.
#[derive(Debug)]
enum Backend {
    /// A timer thread's.
    Thread(AsyncTimer),
    /// A tokio reactor's.
    #[cfg(feature = "tokio")]
    Reactor(ReactorTimer),
}

impl Backend {
    fn register(&self, deadline_ns: u64, slot: Arc<Slot>) {
        match self {
            Self::Thread(t) => {
                let shared = &t.handle.shared;
                if shared.register(deadline_ns, slot) {
                    ring(shared);
                }
            }
            #[cfg(feature = "tokio")]
            Self::Reactor(r) => r.register(deadline_ns, slot),
        }
    }

    fn note_cancelled(&self) {
        match self {
            Self::Thread(t) => t.handle.shared.note_cancelled(),
            #[cfg(feature = "tokio")]
            Self::Reactor(r) => r.note_cancelled(),
        }
    }
}

/// A sleep to a deadline: a future that is ready once the deadline has passed, never
/// before. Registered with its timer ([`AsyncTimer`] or `ReactorTimer`) when first
/// polled; dropping it cancels it.
#[derive(Debug)]
#[must_use = "a sleep does nothing unless awaited"]
pub struct Sleep {
    deadline_ns: u64,
    slot: Option<Arc<Slot>>,
    timer: Backend,
}

impl Sleep {
    fn new(deadline_ns: u64, timer: Backend) -> Self {
        Self {
            deadline_ns,
            slot: None,
            timer,
        }
    }

    /// The deadline on [`monotonic_ns`]'s time line, ns.
    pub fn deadline_ns(&self) -> u64 {
        self.deadline_ns
    }
}

#[cfg(test)]
impl Sleep {
    /// Polls once with a waker that does nothing: whether it is pending (then it is
    /// registered with its timer).
    pub(crate) fn poll_once(self: Pin<&mut Self>) -> bool {
        self.poll(&mut Context::from_waker(std::task::Waker::noop()))
            .is_pending()
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if let Some(slot) = &self.slot {
            return match slot.ready_or_keep(cx.waker()) {
                true => Poll::Ready(()),
                false => Poll::Pending,
            };
        }
        if monotonic_ns() >= self.deadline_ns {
            return Poll::Ready(());
        }
        let slot = Arc::new(Slot::default());
        // Keeps the waker before the timer can see the slot: a fire finds it.
        slot.ready_or_keep(cx.waker());
        self.timer.register(self.deadline_ns, Arc::clone(&slot));
        self.slot = Some(slot);
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.as_ref().filter(|s| !s.is_fired()) {
            slot.cancel();
            self.timer.note_cancelled();
        }
    }
}

/// `sleep_until` with tokio's `Instant` (the cargo feature `tokio`).
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub fn sleep_until_tokio(deadline: tokio::time::Instant) -> Sleep {
    sleep_until(deadline.into_std())
}
