//! [`Ticker`]: a drift-free periodic schedule `start + k·period` on top of a
//! [`PreciseSleeper`], with tokio's [`MissedTickBehavior`]s, and the pure next-tick
//! arithmetic [`next_tick`].

use std::time::Duration;

use super::sleep_report::SleepReport;
use super::sleeper::PreciseSleeper;
use crate::clock::{Env, RealEnv, duration_ns};

/// What a [`Ticker`] does when a tick fires a whole period (or more) late, so that later
/// grid instants have already passed. Same meanings as tokio's.
///
/// The default is [`Skip`](Self::Skip), a [`Ticker`]'s: for a frame or control loop,
/// dropping the ticks a stall made it miss and keeping the grid is what it wants, where
/// a burst of catch-up ticks would run frames back to back. That is unlike tokio, whose
/// default is `Burst`; the async `ReactorInterval` (cargo feature `tokio`), which mirrors
/// tokio's `Interval`, starts with `Burst` as tokio's does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissedTickBehavior {
    /// Fire the missed ticks at once, one per `tick()` call, until caught up; the grid is
    /// kept (next = scheduled + period). tokio's default.
    Burst,
    /// Restart the schedule from the late tick: next = now + period (the grid shifts).
    Delay,
    /// Drop the missed ticks: next = the first instant of the original grid after now.
    /// The default.
    #[default]
    Skip,
}

/// Why a [`Ticker`] was not made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TickerError {
    /// A zero period: a schedule that is always due, a busy loop. The text is the one
    /// Python's `sleeplab.Ticker(0)` raises (`ValueError`); C's `sleeplab_ticker_new`
    /// returns `SLEEPLAB_EINVAL` for it.
    #[error("period must be positive, got 0.0")]
    ZeroPeriod,
}

/// The pure next-tick arithmetic of a [`Ticker`].
///
/// Given the grid origin `start`, the `period`, the tick just fired (`scheduled`) and the
/// time it fired (`now`), returns `(next scheduled, missed)`. A tick counts as missed
/// once a whole period has passed: while `now − scheduled < period` the next tick is
/// simply `scheduled + period` for every behaviour (so ordinary lateness never makes the
/// schedule drift). Otherwise, with `late = now − scheduled`:
///
/// | behaviour | next | missed |
/// |---|---|---|
/// | `Burst` | `scheduled + period` (already due: fires at once) | 1: this tick missed its slot; each overdue slot is counted once, on the burst tick that fills it |
/// | `Delay` | `now + period` | `⌊late / period⌋` whole periods the schedule slides by |
/// | `Skip` | first `start + k·period` strictly after `now` | `⌊late / period⌋` grid instants dropped |
///
/// So one stall of `late` costs `⌊late / period⌋` missed ticks in total under every
/// behaviour. A `period` of 0 is treated as 1 ns. All arithmetic saturates at `u64::MAX`;
/// it never panics.
pub fn next_tick(
    start: u64,
    period: u64,
    scheduled: u64,
    now: u64,
    behavior: MissedTickBehavior,
) -> (u64, u64) {
    let period = period.max(1);
    let late = now.saturating_sub(scheduled);
    if late < period {
        return (scheduled.saturating_add(period), 0);
    }
    let periods_late = late / period;
    match behavior {
        MissedTickBehavior::Burst => (scheduled.saturating_add(period), 1),
        MissedTickBehavior::Delay => (now.saturating_add(period), periods_late),
        MissedTickBehavior::Skip => {
            let next = if now < start {
                start
            } else {
                ((now - start) / period)
                    .checked_add(1)
                    .and_then(|k| k.checked_mul(period))
                    .and_then(|off| start.checked_add(off))
                    .unwrap_or(u64::MAX)
            };
            (next, periods_late)
        }
    }
}

/// [`next_tick`] with the grid it leaves: `(start, next, missed)`, where a
/// [`MissedTickBehavior::Delay`] that missed ticks moves the grid's origin `start` to the
/// delayed next tick (the grid moves with the schedule); the other behaviours keep it.
pub(crate) fn advance(
    start: u64,
    period: u64,
    scheduled: u64,
    now: u64,
    behavior: MissedTickBehavior,
) -> (u64, u64, u64) {
    let (next, missed) = next_tick(start, period, scheduled, now, behavior);
    let start = if behavior == MissedTickBehavior::Delay && missed > 0 {
        next
    } else {
        start
    };
    (start, next, missed)
}

/// One tick of a [`Ticker`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    /// 0-based number of this tick among those returned by `tick()`.
    pub index: u64,
    /// The instant the tick was scheduled for, ns on the sleeper's time line.
    pub scheduled_ns: u64,
    /// When it actually fired, ns.
    pub woke_ns: u64,
    /// `woke − scheduled`, ns.
    pub lateness_ns: u64,
    /// Ticks missed at this tick (see [`next_tick`] for how each behaviour counts).
    pub missed: u64,
    /// The sleeper's report for the wait behind this tick.
    pub sleep: SleepReport,
}

/// A drift-free periodic schedule: tick `k` is due at `start + k·period` (exact integer
/// nanoseconds, never accumulated from wake times), waited for with a
/// [`PreciseSleeper`]. Late ticks are handled per [`MissedTickBehavior`], by default
/// [`Skip`](MissedTickBehavior::Skip) (unlike tokio, whose default is `Burst`). The first
/// tick is due at `start` (with [`Ticker::new`], immediately), as in tokio. The period is
/// positive: a zero one is refused ([`try_new`](Ticker::try_new)) or a panic
/// ([`new`](Ticker::new)), as tokio's `interval` panics on it.
#[derive(Debug)]
pub struct Ticker<E: Env = RealEnv> {
    sleeper: PreciseSleeper<E>,
    start: u64,
    period: u64,
    next: u64,
    index: u64,
    behavior: MissedTickBehavior,
    missed: u64,
}

impl Ticker<RealEnv> {
    /// A ticker on the real clock with a fresh [`PreciseSleeper::new`] (which sets this
    /// thread's timer slack to 1 ns); the first tick is due now.
    ///
    /// # Panics
    /// If `period` is zero, with [`TickerError::ZeroPeriod`]'s text (as tokio's
    /// `interval` panics on a zero period); [`try_new`](Self::try_new) returns the error.
    #[track_caller]
    pub fn new(period: Duration) -> Self {
        match Self::try_new(period) {
            Ok(ticker) => ticker,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`new`](Self::new), or [`TickerError::ZeroPeriod`] for a zero period (before any
    /// sleeper is built, so this thread's settings are left alone).
    pub fn try_new(period: Duration) -> Result<Self, TickerError> {
        positive(duration_ns(period))?;
        Ok(Ticker::with_sleeper(PreciseSleeper::new(), period))
    }
}

/// `period_ns` if it is not zero.
fn positive(period_ns: u64) -> Result<u64, TickerError> {
    match period_ns {
        0 => Err(TickerError::ZeroPeriod),
        ns => Ok(ns),
    }
}

impl<E: Env> Ticker<E> {
    /// A ticker over `sleeper` whose first tick is due now (on the sleeper's clock).
    ///
    /// # Panics
    /// If `period` is zero, as [`new`](Ticker::new);
    /// [`try_with_sleeper`](Self::try_with_sleeper) returns the error.
    #[track_caller]
    pub fn with_sleeper(sleeper: PreciseSleeper<E>, period: Duration) -> Self {
        match Self::try_with_sleeper(sleeper, period) {
            Ok(ticker) => ticker,
            Err(e) => panic!("{e}"),
        }
    }

    /// [`with_sleeper`](Self::with_sleeper), or [`TickerError::ZeroPeriod`] for a zero
    /// period.
    pub fn try_with_sleeper(
        mut sleeper: PreciseSleeper<E>,
        period: Duration,
    ) -> Result<Self, TickerError> {
        let period_ns = positive(duration_ns(period))?;
        let start = sleeper.now_ns();
        Ok(Self::with_sleeper_at_ns(sleeper, start, period_ns))
    }

    /// A ticker over `sleeper` whose tick `k` is due at `start_ns + k·period_ns`.
    ///
    /// # Panics
    /// If `period_ns` is zero, as [`new`](Ticker::new).
    #[track_caller]
    pub fn with_sleeper_at_ns(sleeper: PreciseSleeper<E>, start_ns: u64, period_ns: u64) -> Self {
        let period = match positive(period_ns) {
            Ok(ns) => ns,
            Err(e) => panic!("{e}"),
        };
        Self {
            sleeper,
            start: start_ns,
            period,
            next: start_ns,
            index: 0,
            behavior: MissedTickBehavior::default(),
            missed: 0,
        }
    }

    /// Sets the missed-tick behaviour (builder style).
    pub fn with_missed_tick_behavior(mut self, behavior: MissedTickBehavior) -> Self {
        self.behavior = behavior;
        self
    }

    /// Sets the missed-tick behaviour.
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.behavior = behavior;
    }

    /// Waits for the next tick and returns it.
    pub fn tick(&mut self) -> Tick {
        let scheduled = self.next;
        let sleep = self.sleeper.sleep_until_ns(scheduled);
        let woke = sleep.woke_ns;
        let (start, next, missed) =
            advance(self.start, self.period, scheduled, woke, self.behavior);
        self.start = start;
        self.next = next;
        self.missed = self.missed.saturating_add(missed);
        let tick = Tick {
            index: self.index,
            scheduled_ns: scheduled,
            woke_ns: woke,
            lateness_ns: woke.saturating_sub(scheduled),
            missed,
            sleep,
        };
        self.index = self.index.saturating_add(1);
        tick
    }

    /// Restarts the grid: tick `k` (counting from the next call) is due at
    /// `start_ns + k·period`. The tick count and missed total are kept.
    pub fn reset_at_ns(&mut self, start_ns: u64) {
        self.start = start_ns;
        self.next = start_ns;
    }

    /// The period, ns.
    pub fn period_ns(&self) -> u64 {
        self.period
    }

    /// The grid origin, ns (moves when [`MissedTickBehavior::Delay`] reschedules).
    pub fn start_ns(&self) -> u64 {
        self.start
    }

    /// When the next tick is due, ns.
    pub fn next_scheduled_ns(&self) -> u64 {
        self.next
    }

    /// Ticks returned so far.
    pub fn ticks(&self) -> u64 {
        self.index
    }

    /// Missed ticks so far (see [`next_tick`]).
    pub fn missed_ticks(&self) -> u64 {
        self.missed
    }

    /// The missed-tick behaviour.
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.behavior
    }

    /// The sleeper (for its stats and margin).
    pub fn sleeper(&self) -> &PreciseSleeper<E> {
        &self.sleeper
    }

    /// The sleeper, mutably (e.g. to reach a virtual environment).
    pub fn sleeper_mut(&mut self) -> &mut PreciseSleeper<E> {
        &mut self.sleeper
    }

    /// Takes the sleeper back.
    pub fn into_sleeper(self) -> PreciseSleeper<E> {
        self.sleeper
    }
}
