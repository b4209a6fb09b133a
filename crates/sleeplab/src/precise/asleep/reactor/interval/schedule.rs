//! The reactor interval's decisions, with no clock and no I/O: when its periodic timerfd
//! must be (re-)armed, whether a wake is stale, whether to spin to the tick, what it
//! learns, and the next tick. Tested in virtual time.
//!
//! The timerfd is armed once, periodic, for the grid `tick − margin`: the kernel moves
//! the timer forward itself at every expiry, inside the interrupt that fired it, so no
//! tick re-arms it from user space. It is re-armed only when the grid moves (a
//! [`MissedTickBehavior::Delay`] restart) or the learned margin drifts from the armed
//! one by more than a quarter.

use crate::precise::estimator::MarginEstimator;
use crate::precise::ticker::{MissedTickBehavior, advance};
use crate::precise::tradeoff::Tradeoff;

/// The timerfd is re-armed for a new margin only when it differs from the armed one by
/// more than `1/REARM_FRACTION` of it ...
pub(crate) const REARM_FRACTION: u64 = 4;
/// ... and by at least this much, ns (below it a re-arm costs more than it saves).
pub(crate) const REARM_MIN_NS: u64 = 1_000;

/// Whether a timerfd armed with margin `armed_ns` should be re-armed for `wanted_ns`.
pub(crate) fn needs_rearm(armed_ns: u64, wanted_ns: u64) -> bool {
    let diff = armed_ns.abs_diff(wanted_ns);
    diff > armed_ns / REARM_FRACTION && diff >= REARM_MIN_NS
}

/// How the periodic timerfd is armed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Armed {
    /// The tick it was armed for: its grid is this plus whole periods, ns.
    pub(crate) first_ns: u64,
    /// Each expiry comes this long before its tick, ns.
    pub(crate) margin_ns: u64,
    /// The clock when it was armed, ns.
    pub(crate) set_ns: u64,
}

impl Armed {
    /// Whether an expiry of this arming belongs to the tick due at `tick_ns`.
    fn serves(&self, tick_ns: u64, period_ns: u64) -> bool {
        tick_ns >= self.first_ns && (tick_ns - self.first_ns) % period_ns == 0
    }
}

/// What `timerfd_settime` to make: first expiry `first_fire_ns` (absolute), then every
/// `period_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Arm {
    pub(crate) first_fire_ns: u64,
    pub(crate) period_ns: u64,
}

/// What a call to `tick()` does first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Begin {
    /// The tick is already due: fire it.
    Due,
    /// The tick is within the margin: spin to it, no wait.
    SpinTo(u64),
    /// Wait for the timerfd, after arming it as given (`None`: it is armed already).
    Wait(Option<Arm>),
}

/// What a wake of the timerfd means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woke {
    /// An expiry of an earlier tick (one fired without waiting): wait again.
    Stale,
    /// This tick's expiry, before the tick: spin to it.
    SpinTo(u64),
    /// This tick's expiry, at or after the tick: fire it.
    Due,
}

/// One tick of a [`ReactorInterval`](super::ReactorInterval).
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntervalTick {
    /// 0-based number of this tick.
    pub index: u64,
    /// When it was due, ns on [`monotonic_ns`](crate::clock::monotonic_ns)'s time line.
    pub scheduled_ns: u64,
    /// When `tick()` returned it, ns (never before `scheduled_ns`).
    pub woke_ns: u64,
    /// `woke_ns − scheduled_ns`, ns.
    pub lateness_ns: u64,
    /// Ticks missed at this one (counted as
    /// [`next_tick`](crate::precise::next_tick) says for the behaviour).
    pub missed: u64,
    /// Time spun on the executor's thread before it, ns.
    pub spun_ns: u64,
}

/// The schedule `start + k·period` of an interval and its timerfd's arming.
#[derive(Debug)]
pub(crate) struct Schedule {
    start_ns: u64,
    period_ns: u64,
    next_ns: u64,
    index: u64,
    pub(crate) behavior: MissedTickBehavior,
    pub(crate) missed: u64,
    pub(crate) estimator: MarginEstimator,
    pub(crate) tradeoff: Tradeoff,
    pub(crate) armed: Option<Armed>,
    /// When the current `tick()` began, ns.
    began_ns: u64,
    /// `timerfd_settime` calls so far.
    pub(crate) arms: u64,
}

impl Schedule {
    /// Tick `k` due at `start_ns + k·period_ns` (a zero period is 1 ns).
    pub(crate) fn new(start_ns: u64, period_ns: u64, tradeoff: Tradeoff) -> Self {
        Self {
            start_ns,
            period_ns: period_ns.max(1),
            next_ns: start_ns,
            index: 0,
            // tokio's Interval's default, which the reactor interval mirrors (a Ticker's
            // default is Skip).
            behavior: MissedTickBehavior::Burst,
            missed: 0,
            estimator: MarginEstimator::default(),
            tradeoff,
            armed: None,
            began_ns: 0,
            arms: 0,
        }
    }

    /// The period, ns.
    pub(crate) fn period_ns(&self) -> u64 {
        self.period_ns
    }

    /// When the next tick is due, ns.
    pub(crate) fn next_ns(&self) -> u64 {
        self.next_ns
    }

    /// The margin wanted now: the estimator's, bounded by the budget's share of a period
    /// and by half a period (an expiry never comes before the tick ahead of its own).
    pub(crate) fn margin_ns(&self) -> u64 {
        self.tradeoff
            .margin_ns(&self.estimator, self.period_ns)
            .min(self.period_ns / 2)
    }

    /// `tick()` began at `now_ns`.
    pub(crate) fn begin(&mut self, now_ns: u64) -> Begin {
        self.began_ns = now_ns;
        let tick = self.next_ns;
        if now_ns >= tick {
            return Begin::Due;
        }
        let margin = self.margin_ns();
        if tick - now_ns <= margin {
            // No native wait: the estimator forgets one step.
            self.estimator.observe_none();
            return Begin::SpinTo(tick);
        }
        let keep = self
            .armed
            .is_some_and(|a| a.serves(tick, self.period_ns) && !needs_rearm(a.margin_ns, margin));
        if keep {
            return Begin::Wait(None);
        }
        self.armed = Some(Armed {
            first_ns: tick,
            margin_ns: margin,
            set_ns: now_ns,
        });
        self.arms += 1;
        Begin::Wait(Some(Arm {
            first_fire_ns: tick - margin,
            period_ns: self.period_ns,
        }))
    }

    /// The timerfd woke the waiting `tick()` at `now_ns`. An expiry before this tick's
    /// fire time is stale. Otherwise it learns how late the wake came after the fire
    /// time (only when the task was waiting, and the timerfd armed, before it: a fire
    /// time already past when it began is no native wait).
    pub(crate) fn woke(&mut self, now_ns: u64) -> Woke {
        let tick = self.next_ns;
        let margin = self.armed.map_or(0, |a| a.margin_ns);
        let fire = tick - margin.min(tick);
        if now_ns < fire {
            return Woke::Stale;
        }
        let waited_from = self.armed.map_or(now_ns, |a| a.set_ns).max(self.began_ns);
        if fire > waited_from {
            self.estimator.observe(now_ns - fire);
        } else {
            self.estimator.observe_none();
        }
        if now_ns >= tick {
            Woke::Due
        } else {
            Woke::SpinTo(tick)
        }
    }

    /// The tick due now fired at `woke_ns` after spinning `spun_ns`: it, and the next
    /// tick as the missed-tick behaviour says.
    pub(crate) fn fire(&mut self, woke_ns: u64, spun_ns: u64) -> IntervalTick {
        let scheduled = self.next_ns;
        let (start, next, missed) = advance(
            self.start_ns,
            self.period_ns,
            scheduled,
            woke_ns,
            self.behavior,
        );
        // A Delay that missed ticks moves the grid (and the timerfd with it).
        self.start_ns = start;
        self.next_ns = next;
        self.missed = self.missed.saturating_add(missed);
        let tick = IntervalTick {
            index: self.index,
            scheduled_ns: scheduled,
            woke_ns,
            lateness_ns: woke_ns.saturating_sub(scheduled),
            missed,
            spun_ns,
        };
        self.index = self.index.saturating_add(1);
        tick
    }

    /// Ticks fired so far.
    pub(crate) fn ticks(&self) -> u64 {
        self.index
    }
}
