//! [`PreciseSleeper`]: the [`Precise`] strategy bundled with its environment and the
//! thread setting it relies on (1 ns timer slack).

use std::time::{Duration, Instant};

use super::estimator::{EstimatorConfig, MarginEstimator};
use super::precise_strategy::Precise;
use super::sleep_report::{SleepReport, SleepStats};
use super::spin::SpinStrategy;
use super::tradeoff::{CpuBudget, SlicePolicy, Tradeoff};
use super::virtual_env::VirtualEnv;
use crate::clock::{Env, RealEnv, duration_ns, instant_to_ns};
use crate::system::{sched_slice_ns, set_sched_slice_ns, set_timer_slack_ns, timer_slack_ns};

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
/// One sleeper per thread: timer slack and the scheduler slice ([`SlicePolicy`]) are
/// per-thread settings applied when the sleeper is built (on the building thread), and
/// the learned margin describes that thread's wakeups. Generic over [`Env`] so tests and the simulator run this exact code in
/// virtual time.
#[derive(Debug)]
pub struct PreciseSleeper<E: Env = RealEnv> {
    env: E,
    wait: Precise,
    slack_ns: Option<u64>,
    slice_ns: Option<u64>,
}

impl PreciseSleeper<RealEnv> {
    /// A sleeper on the real clock with default parameters; sets this thread's timer
    /// slack to 1 ns.
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder for non-default parameters.
    pub fn builder() -> PreciseSleeperBuilder {
        PreciseSleeperBuilder::default()
    }

    /// Sleeps until `deadline` (returns at once if it has passed).
    pub fn sleep_until(&mut self, deadline: Instant) -> SleepReport {
        let ns = instant_to_ns(deadline);
        self.sleep_until_ns(ns)
    }
}

impl Default for PreciseSleeper<RealEnv> {
    fn default() -> Self {
        Self::new()
    }
}

impl PreciseSleeper<VirtualEnv> {
    /// A sleeper over a [`VirtualEnv`] with default parameters; leaves the timer slack
    /// alone. Same as [`with_env`](PreciseSleeper::with_env).
    pub fn new_virtual(env: VirtualEnv) -> Self {
        Self::with_env(env)
    }
}

impl<E: Env> PreciseSleeper<E> {
    /// A sleeper over `env` with default parameters; leaves the timer slack and the
    /// scheduler slice alone.
    pub fn with_env(env: E) -> Self {
        PreciseSleeperBuilder::default()
            .slack_policy(SlackPolicy::LeaveAlone)
            .slice_policy(SlicePolicy::Inherit)
            .build_with_env(env)
    }

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
    /// requesting the short one under [`SlicePolicy::Short`]), ns (0: the kernel reports
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

    /// The environment, mutably (e.g. to inject a stall into a [`VirtualEnv`]).
    pub fn env_mut(&mut self) -> &mut E {
        &mut self.env
    }

    /// Takes the environment back.
    pub fn into_env(self) -> E {
        self.env
    }
}

/// Builds a [`PreciseSleeper`] with non-default parameters.
///
/// The trade-off between lateness and CPU (see [`Tradeoff`]); each option's effect on
/// the project's recorded 60 Hz traces, replayed in virtual time, is in the README's
/// library section:
///
/// ```
/// use std::time::Duration;
/// use sleeplab::precise::{PreciseSleeper, SlackPolicy, VirtualEnv};
///
/// let mut sleeper = PreciseSleeper::builder()
///     .quantile(0.99)                                   // the lateness quantile to hold…
///     .lateness_tolerance(Duration::from_micros(50))    // …to within 50 µs late,
///     .cpu_budget_percent(3.0)                          // spinning ≤ 3 % of each wait,
///     .early_tolerance(Duration::from_micros(100))      // returning ≤ 100 µs early.
///     .slack_policy(SlackPolicy::LeaveAlone)
///     .build_with_env(VirtualEnv::new());
/// let r = sleeper.sleep_for_ns(16_666_667);
/// assert!(r.woke + 100_000 >= r.deadline); // never more than the early tolerance
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct PreciseSleeperBuilder {
    spin: SpinStrategy,
    slack: SlackPolicy,
    estimator: EstimatorConfig,
    tradeoff: Tradeoff,
}

impl PreciseSleeperBuilder {
    /// How the spin phase waits (default [`SpinStrategy::Spin`]).
    pub fn spin_strategy(mut self, spin: SpinStrategy) -> Self {
        self.spin = spin;
        self
    }

    /// What to do with the timer slack (default [`SlackPolicy::SetMinimal`]).
    pub fn slack_policy(mut self, slack: SlackPolicy) -> Self {
        self.slack = slack;
        self
    }

    /// The margin estimator's parameters (default [`EstimatorConfig::default`]).
    pub fn estimator(mut self, config: EstimatorConfig) -> Self {
        self.estimator = config;
        self
    }

    /// The lateness quantile the margin covers (default 0.99; 0.5..=1.0): the
    /// estimator's [`quantile`](EstimatorConfig::quantile).
    pub fn quantile(mut self, quantile: f64) -> Self {
        self.estimator.quantile = quantile;
        self
    }

    /// Lateness accepted at that quantile (default 0): the sleeper spins only as much as
    /// needed to be within `tolerance` late at the quantile
    /// ([`Tradeoff::lateness_tolerance_ns`]).
    pub fn lateness_tolerance(mut self, tolerance: Duration) -> Self {
        self.tradeoff.lateness_tolerance_ns = duration_ns(tolerance);
        self
    }

    /// Spin at most `percent` % (0–100) of each wait ([`CpuBudget::Percent`]); the default
    /// is [`CpuBudget::Auto`].
    pub fn cpu_budget_percent(mut self, percent: f64) -> Self {
        self.tradeoff.cpu_budget = CpuBudget::Percent(percent);
        self
    }

    /// How much of a wait may be spun (default [`CpuBudget::Auto`]).
    pub fn cpu_budget(mut self, budget: CpuBudget) -> Self {
        self.tradeoff.cpu_budget = budget;
        self
    }

    /// "Early rather than late": return up to `tolerance` before the deadline instead of
    /// spinning to it, never earlier ([`Tradeoff::early_tolerance_ns`]). Default 0: never
    /// early.
    pub fn early_tolerance(mut self, tolerance: Duration) -> Self {
        self.tradeoff.early_tolerance_ns = duration_ns(tolerance);
        self
    }

    /// Whether the building thread asks the scheduler for a short slice (default
    /// [`SlicePolicy::Short`]; [`Tradeoff::slice`]).
    pub fn slice_policy(mut self, slice: SlicePolicy) -> Self {
        self.tradeoff.slice = slice;
        self
    }

    /// The whole trade-off at once (replaces the options above).
    pub fn tradeoff(mut self, tradeoff: Tradeoff) -> Self {
        self.tradeoff = tradeoff;
        self
    }

    /// The strategy alone, without a thread setting or an environment (for replays and
    /// the registry).
    pub fn strategy(self) -> Precise {
        Precise::new(self.estimator, self.spin).with_tradeoff(self.tradeoff)
    }

    /// A sleeper on the real clock. With [`SlackPolicy::LeaveAlone`] it still reports the
    /// slack in force.
    pub fn build(self) -> PreciseSleeper<RealEnv> {
        let mut s = self.build_with_env(RealEnv);
        s.slack_ns = Some(timer_slack_ns());
        s.slice_ns = Some(sched_slice_ns());
        s
    }

    /// A sleeper over any environment; applies the slack and slice policies to the
    /// calling thread.
    pub fn build_with_env<E: Env>(self, env: E) -> PreciseSleeper<E> {
        let slack_ns = match self.slack {
            SlackPolicy::SetMinimal => {
                // A refusal (e.g. a seccomp sandbox) is not fatal: report what is in force.
                Some(set_timer_slack_ns(1).unwrap_or_else(|_| timer_slack_ns()))
            }
            SlackPolicy::LeaveAlone => None,
        };
        // As for the slack, a refusal is not fatal: report what is in force.
        let slice_ns = self
            .tradeoff
            .slice
            .request_ns()
            .map(|ns| set_sched_slice_ns(Some(ns)).unwrap_or_else(|_| sched_slice_ns()));
        PreciseSleeper {
            env,
            wait: self.strategy(),
            slack_ns,
            slice_ns,
        }
    }
}
