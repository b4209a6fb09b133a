//! [`PreciseSleeper`]: the [`Precise`] strategy bundled with its environment and the
//! thread setting it relies on (1 ns timer slack).

use std::time::{Duration, Instant};

use super::estimator::MarginEstimator;
use super::precise_strategy::Precise;
use super::sleep_report::{SleepReport, SleepStats};
use super::spin::SpinStrategy;
use super::tradeoff::Tradeoff;
use crate::clock::{Env, RealEnv, duration_ns, instant_to_ns};

/// What a sleeper does with the calling thread's timer slack when it is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SlackPolicy {
    /// Set it to 1 ns (`prctl(PR_SET_TIMERSLACK, 1)`), the minimum: with the default
    /// 50 µs the kernel may defer every native wakeup by up to 50 µs, which the margin
    /// would then have to cover by spinning. A failure to set it is not an error; the
    /// sleeper reports the slack actually in force.
    #[default]
    SetMinimal,
    /// Do not touch it (virtual environments, or a caller that manages it).
    LeaveAlone,
}

/// Sleeps precisely: a native sleep on an absolute deadline until `deadline − margin`,
/// then a spin to the deadline, with the margin learned online per sleeper (see
/// [`MarginEstimator`]). It never returns before the deadline.
///
/// One sleeper per thread: timer slack and the scheduler slice ([`SlicePolicy`](super::SlicePolicy)) are
/// per-thread settings applied when the sleeper is built (on the building thread), and
/// the learned margin describes that thread's wakeups. Generic over [`Env`] so tests and
/// the simulator run this exact code in virtual time
/// (the lab's `VirtualEnv`).
#[derive(Debug)]
pub struct PreciseSleeper<E: Env = RealEnv> {
    pub(super) env: E,
    pub(super) wait: Precise,
    pub(super) slack_ns: Option<u64>,
    pub(super) slice_ns: Option<u64>,
}

impl PreciseSleeper<RealEnv> {
    /// Sleeps until `deadline` (returns at once if it has passed).
    pub fn sleep_until(&mut self, deadline: Instant) -> SleepReport {
        let ns = instant_to_ns(deadline);
        self.sleep_until_ns(ns)
    }
}

impl<E: Env> PreciseSleeper<E> {
    /// Sleeps for `duration` from now (saturating at `u64::MAX` ns).
    pub fn sleep(&mut self, duration: Duration) -> SleepReport {
        self.sleep_for_ns(duration_ns(duration))
    }

    /// Sleeps for `ns` nanoseconds from now (saturating).
    pub fn sleep_for_ns(&mut self, ns: u64) -> SleepReport {
        let deadline = self.env.now().saturating_add(ns);
        self.sleep_until_ns(deadline)
    }

    /// Sleeps until `deadline` on the environment's time line (for [`RealEnv`],
    /// [`monotonic_ns`](crate::clock::monotonic_ns)). A deadline in the past returns at once.
    pub fn sleep_until_ns(&mut self, deadline: u64) -> SleepReport {
        self.wait.wait_until(&mut self.env, deadline)
    }

    /// [`sleep_until_ns`](Self::sleep_until_ns) that gives up after an early return of
    /// the native sleep when `interrupted` says so (`None`: nothing learned).
    pub(crate) fn sleep_until_ns_or(
        &mut self,
        deadline: u64,
        interrupted: impl FnMut(&mut E) -> bool,
    ) -> Option<SleepReport> {
        self.wait
            .wait_until_or(&mut self.env, deadline, interrupted)
    }

    /// The current time on the environment's clock, ns.
    pub fn now_ns(&mut self) -> u64 {
        self.env.now()
    }

    /// Running statistics: count, mean/max lateness, spin and native totals, stalls.
    pub fn stats(&self) -> SleepStats {
        self.wait.stats()
    }

    /// Clears the running statistics (the learned margin is kept).
    pub fn reset_stats(&mut self) {
        self.wait.reset_stats();
    }

    /// The margin the next sleep will use if it is long (no CPU ceiling applies), ns.
    pub fn margin_ns(&self) -> u64 {
        self.wait.margin_ns()
    }

    /// The margin the next sleep will use with `wait_ns` left to its target, ns.
    pub fn margin_for_ns(&self, wait_ns: u64) -> u64 {
        self.wait.margin_for_ns(wait_ns)
    }

    /// The trade-off between lateness and CPU in force.
    pub fn tradeoff(&self) -> Tradeoff {
        self.wait.tradeoff()
    }

    /// The margin estimator (read-only).
    pub fn estimator(&self) -> &MarginEstimator {
        self.wait.estimator()
    }

    /// How the spin phase waits.
    pub fn spin_strategy(&self) -> SpinStrategy {
        self.wait.spin_strategy()
    }

    /// The building thread's timer slack read right after construction (after setting it
    /// under [`SlackPolicy::SetMinimal`]), ns; `None` when a sleeper over a non-real
    /// environment left it alone.
    pub fn timer_slack_ns(&self) -> Option<u64> {
        self.slack_ns
    }

    /// The building thread's scheduler slice read right after construction (after
    /// requesting the short one under [`SlicePolicy::Short`](super::SlicePolicy::Short)), ns (0: the kernel reports
    /// none); `None` when a sleeper over a non-real environment left it alone.
    pub fn sched_slice_ns(&self) -> Option<u64> {
        self.slice_ns
    }

    /// The underlying strategy.
    pub fn strategy(&self) -> &Precise {
        &self.wait
    }

    /// The environment.
    pub fn env(&self) -> &E {
        &self.env
    }

    /// The environment, mutably (e.g. to inject a stall into the lab's `VirtualEnv`).
    pub fn env_mut(&mut self) -> &mut E {
        &mut self.env
    }

    /// Takes the environment back.
    pub fn into_env(self) -> E {
        self.env
    }
}
