//! [`ReactorInterval`]: a precise, drift-free async interval on tokio whose ticks cost
//! one kernel wake each and no re-arm. One periodic timerfd in the runtime's reactor
//! expires a learned margin before each tick; the kernel moves it to the next expiry
//! itself, in the interrupt that fired it. The task that awaits `tick()` wakes on its own
//! worker and spins the rest of the margin there.
//!
//! Why periodic: a task that sleeps to its next deadline registers that deadline only
//! after it wakes, so its timer is the kernel's earliest every frame and arming it
//! reprograms the clock-event device, which on a virtual machine is an exit to the
//! host (`scripts/rearm-cost.c` measures it). A periodic timerfd never needs it.
//!
//! `schedule.rs` holds the decisions (arming, stale wakes, the spin, what is learned,
//! the next tick) with no clock and no I/O, so they are tested in virtual time.

mod schedule;

pub use schedule::IntervalTick;

use super::{ReactorError, budget, current_runtime, register};
use crate::clock::{RealEnv, duration_ns, instant_to_ns, monotonic_ns};
use crate::precise::spin::{SpinStrategy, native_sleep_until, spin_until};
use crate::precise::ticker::{MissedTickBehavior, TickerError};
use crate::precise::tradeoff::{CpuBudget, Tradeoff};
use crate::sys::TimerFd;
use schedule::{Begin, Schedule, Woke};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};
use tokio::io::unix::AsyncFd;

/// The counts of a [`ReactorInterval`] so far.
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IntervalStats {
    /// Ticks fired.
    pub ticks: u64,
    /// Ticks missed (see [`MissedTickBehavior`]).
    pub missed: u64,
    /// Times its timerfd was armed (`timerfd_settime`): once, plus one per grid move or
    /// margin change.
    pub arms: u64,
    /// Time spun on the executor's thread, ns.
    pub spun_ns: u64,
    /// The margin its timerfd is armed with, ns (0 before the first wait).
    pub margin_ns: u64,
}

/// The timerfd as the reactor registers it.
struct Fd(TimerFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.fd()
    }
}

impl std::fmt::Debug for Fd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "timerfd {}", self.0.fd())
    }
}

/// A precise, drift-free periodic schedule for async code on tokio: tick `k` is due at
/// `start + k·period` (exact nanoseconds, never accumulated from wake times), and
/// `tick().await` returns at or after it, never before. Missed ticks are handled as
/// tokio's `MissedTickBehavior` says, and by default as tokio's `Interval` handles them:
/// `Burst` (it mirrors tokio's `Interval`; the blocking [`Ticker`]'s default is `Skip`,
/// which [`with_missed_tick_behavior`](Self::with_missed_tick_behavior) sets here).
///
/// [`Ticker`]: crate::precise::Ticker
///
/// Each tick costs one wake of the awaiting task's worker by its periodic timerfd, and a
/// spin on that worker of at most the CPU budget's share of a period (1 % by default).
/// Unlike a sleep to each next deadline, no tick re-arms a timer (see the module docs).
/// `tick()` is cancel safe: a tick future dropped before it finished leaves the tick
/// due, for the next call.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use sleeplab::precise::asleep::ReactorInterval;
/// use std::time::Duration;
///
/// let mut every = ReactorInterval::new(Duration::from_millis(2)).expect("a timerfd");
/// for _ in 0..3 {
///     let t = every.tick().await;
///     assert!(t.woke_ns >= t.scheduled_ns); // never early
/// }
/// # }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
#[derive(Debug)]
pub struct ReactorInterval {
    fd: AsyncFd<Fd>,
    schedule: Schedule,
    spun_ns: u64,
}

impl ReactorInterval {
    /// The default share of a period each tick may spin, percent.
    pub const DEFAULT_CPU_BUDGET_PERCENT: f64 = 1.0;

    /// An interval whose first tick is due now, then every `period`, on the current tokio
    /// runtime.
    ///
    /// # Errors
    /// [`ReactorError::Period`] for a zero period (tokio's `interval` panics on it),
    /// [`ReactorError::NoRuntime`] outside a tokio runtime, [`ReactorError::IoDisabled`] on
    /// a runtime built without I/O (`enable_io`), or the system's refusal of a timerfd.
    pub fn new(period: Duration) -> Result<Self, ReactorError> {
        Self::new_at_ns(monotonic_ns(), duration_ns(period))
    }

    /// An interval whose first tick is due at `start`, then every `period`.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn new_at(start: Instant, period: Duration) -> Result<Self, ReactorError> {
        Self::new_at_ns(instant_to_ns(start), duration_ns(period))
    }

    /// An interval whose first tick is due at `start_ns` on [`monotonic_ns`]'s time
    /// line, then every `period_ns`.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn new_at_ns(start_ns: u64, period_ns: u64) -> Result<Self, ReactorError> {
        const WHAT: &str = "ReactorInterval";
        if period_ns == 0 {
            return Err(TickerError::ZeroPeriod.into());
        }
        let rt = current_runtime(WHAT)?;
        let timerfd = TimerFd::new(true).map_err(|e| ReactorError::Os {
            call: e.call,
            source: e.source,
        })?;
        // SAFETY: the `Fd` owns the timerfd, which stays open and is never replaced for
        // the AsyncFd's life.
        let fd = unsafe { register(&rt, Fd(timerfd), WHAT) }?;
        let tradeoff = Tradeoff {
            cpu_budget: CpuBudget::Percent(Self::DEFAULT_CPU_BUDGET_PERCENT),
            ..Tradeoff::default()
        };
        Ok(Self {
            fd,
            schedule: Schedule::new(start_ns, period_ns, tradeoff),
            spun_ns: 0,
        })
    }

    /// The same interval, spinning at most `percent` (0–100) of a period per tick
    /// (default [`DEFAULT_CPU_BUDGET_PERCENT`](Self::DEFAULT_CPU_BUDGET_PERCENT)).
    ///
    /// # Errors
    /// [`ReactorError::Option`] for a `percent` out of 0–100 (the sleeper's `cpu_budget`
    /// refusal).
    pub fn with_cpu_budget_percent(mut self, percent: f64) -> Result<Self, ReactorError> {
        self.schedule.tradeoff.cpu_budget = budget(percent)?;
        Ok(self)
    }

    /// The same interval with the missed-tick behaviour `behavior` (default
    /// [`Burst`](MissedTickBehavior::Burst), as tokio's `Interval`).
    pub fn with_missed_tick_behavior(mut self, behavior: MissedTickBehavior) -> Self {
        self.schedule.behavior = behavior;
        self
    }

    /// The period.
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.schedule.period_ns())
    }

    /// When the next tick is due, ns on [`monotonic_ns`]'s time line.
    pub fn next_tick_ns(&self) -> u64 {
        self.schedule.next_ns()
    }

    /// The counts so far.
    pub fn stats(&self) -> IntervalStats {
        IntervalStats {
            ticks: self.schedule.ticks(),
            missed: self.schedule.missed,
            arms: self.schedule.arms,
            spun_ns: self.spun_ns,
            margin_ns: self.schedule.armed.map_or(0, |a| a.margin_ns),
        }
    }

    /// Waits for the next tick and returns it: never before it is due.
    pub async fn tick(&mut self) -> IntervalTick {
        let mut spun = 0;
        match self.schedule.begin(monotonic_ns()) {
            Begin::Due => {}
            Begin::SpinTo(tick) => spun = spin_to(tick),
            Begin::Wait(arm) => {
                if let Some(arm) = arm {
                    // A failed settime leaves the timer as it was: the wait below then
                    // ends at the old grid's expiry or never; settime on a valid timerfd
                    // with a valid time does not fail.
                    let _ = self
                        .fd
                        .get_ref()
                        .0
                        .set(true, arm.first_fire_ns.max(1), arm.period_ns);
                }
                loop {
                    let Ok(mut guard) = self.fd.readable().await else {
                        // The reactor is gone (the runtime is shutting down): the tick
                        // comes from the clock alone, a native sleep to the margin (resumed
                        // after a signal) and the spin, never early.
                        let tick = self.schedule.next_ns();
                        native_sleep_until(
                            &mut RealEnv,
                            tick.saturating_sub(self.schedule.margin_ns()),
                        );
                        spun = spin_to(tick);
                        break;
                    };
                    // One read takes every expiry so far; an expiry after it comes with
                    // an edge of its own, so readiness is cleared either way.
                    let _ = self.fd.get_ref().0.read();
                    guard.clear_ready();
                    match self.schedule.woke(monotonic_ns()) {
                        Woke::Stale => continue,
                        Woke::SpinTo(tick) => {
                            spun = spin_to(tick);
                            break;
                        }
                        Woke::Due => break,
                    }
                }
            }
        }
        self.spun_ns = self.spun_ns.saturating_add(spun);
        self.schedule.fire(monotonic_ns(), spun)
    }
}

/// Spins on this thread until the clock reads `deadline_ns`; the time spun, ns.
fn spin_to(deadline_ns: u64) -> u64 {
    let from = monotonic_ns();
    let spun = spin_until(&mut RealEnv, from, deadline_ns, SpinStrategy::Spin);
    spun.woke.saturating_sub(from)
}

#[cfg(test)]
mod tests;
