//! [`PreciseSleeperBuilder`]: the sleeper's options, set by typed methods (by name
//! through the option table, and `build`, which checks them there: `by_name.rs`), and the
//! sleeper's constructors that take one.

use std::time::Duration;

use super::estimator::EstimatorConfig;
use super::precise_strategy::Precise;
use super::sleeper::{PreciseSleeper, SlackPolicy, ThreadSettings};
use super::spin::SpinStrategy;
use super::tradeoff::{CpuBudget, HostPolicy, SlicePolicy, Tradeoff};
use crate::clock::{Env, RealEnv, duration_ns};

/// Builds a [`PreciseSleeper`] with non-default parameters.
///
/// The trade-off between lateness and CPU (see [`Tradeoff`]); each option's effect on
/// the project's recorded 60 Hz traces, replayed in virtual time, is in the README's
/// library section:
///
/// ```
/// use std::time::Duration;
/// use sleeplab::lab::VirtualEnv;
/// use sleeplab::precise::{PreciseSleeper, SlackPolicy};
///
/// let mut sleeper = PreciseSleeper::builder()
///     .quantile(0.99)                                   // the lateness quantile to hold…
///     .lateness_tolerance(Duration::from_micros(50))    // …to within 50 µs late,
///     .cpu_budget_percent(3.0)                          // spinning ≤ 3 % of each wait,
///     .early_tolerance(Duration::from_micros(100))      // returning ≤ 100 µs early.
///     .slack_policy(SlackPolicy::LeaveAlone)
///     .build_with_env(VirtualEnv::new())?;
/// let r = sleeper.sleep_for_ns(16_666_667);
/// assert!(r.woke_ns + 100_000 >= r.deadline_ns); // never more than the early tolerance
/// # Ok::<(), sleeplab::precise::OptionError>(())
/// ```
///
/// Every option has one range and one refusal, whichever way it is set: the typed
/// methods take any value, and [`build`](Self::build) (and
/// [`build_with_env`](Self::build_with_env)) check them all against the option table
/// `OPTIONS`, refusing a value out of its range with the same `OptionError` as the C
/// setters (`SLEEPLAB_EINVAL`) and Python's keywords
/// (`ValueError`, with this message):
///
/// ```
/// use sleeplab::precise::PreciseSleeper;
///
/// let err = PreciseSleeper::builder().quantile(0.2).build().unwrap_err();
/// assert_eq!(err.to_string(), "bad value `0.2` for quantile: expected a quantile from 0.5 to 1");
/// assert!(PreciseSleeper::builder().cpu_budget_percent(250.0).build().is_err());
/// ```
///
/// The same options by name are [`set`](Self::set) and [`set_text`](Self::set_text)
/// (which the C and Python bindings and the strategy settings go through), each checked
/// as it is set, with [`validate`](Self::validate) to check how they go together:
///
/// ```
/// use sleeplab::precise::{OptionValue, PreciseSleeperBuilder};
///
/// let mut b = PreciseSleeperBuilder::default();
/// b.set("quantile", OptionValue::Number(0.999)).unwrap();
/// b.set_text("lateness_tolerance", "50us").unwrap();
/// assert!(b.set_text("cap", "0.5ns").is_err()); // finer than 1 ns
/// assert!(b.set("window", OptionValue::Count(5000)).is_err()); // 1..=4096
/// b.validate().unwrap();
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PreciseSleeperBuilder {
    pub(super) spin: SpinStrategy,
    pub(super) slack: SlackPolicy,
    pub(super) estimator: EstimatorConfig,
    /// Whether the prior was stated (by name or with the whole [`EstimatorConfig`]): a
    /// stated prior above the cap is an error for [`validate`](Self::validate); the
    /// default one follows the cap down.
    pub(super) prior_stated: bool,
    pub(super) tradeoff: Tradeoff,
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
        self.prior_stated = true;
        self
    }

    /// The lateness quantile the margin covers (default 0.99; 0.5..=1.0, else
    /// [`build`](Self::build) refuses it): the estimator's
    /// [`quantile`](EstimatorConfig::quantile).
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

    /// Spin at most `percent` % (0–100, else [`build`](Self::build) refuses it) of each
    /// wait ([`CpuBudget::Percent`]); the default is [`CpuBudget::Auto`].
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

    /// Whether a spin's losses to the host (or the hardware) shorten and stop the spin
    /// like the scheduler's (default [`HostPolicy::Adapt`]; [`Tradeoff::host`]).
    pub fn host_policy(mut self, host: HostPolicy) -> Self {
        self.tradeoff.host = host;
        self
    }

    /// Whether the sleeping thread asks the scheduler for a short slice (default
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
    /// the registry, which take options already checked). It does not check them: a
    /// value out of its range is brought into it (see [`EstimatorConfig::normalized`]);
    /// [`validate`](Self::validate) says whether they are in range.
    pub fn strategy(self) -> Precise {
        Precise::new(self.estimator, self.spin).with_tradeoff(self.tradeoff)
    }

    /// The sleeper, without checking the options (the callers checked them, or they are
    /// the defaults); `report`: whether it reports the thread's slack and slice even where
    /// its policies leave them alone.
    pub(crate) fn build_unchecked<E: Env>(self, env: E, report: bool) -> PreciseSleeper<E> {
        PreciseSleeper {
            env,
            thread: ThreadSettings::apply(self.slack, self.tradeoff.slice, report),
            wait: self.strategy(),
        }
    }
}

impl PreciseSleeper<RealEnv> {
    /// A sleeper on the real clock with default parameters; sets this thread's timer
    /// slack to 1 ns (and that of each other thread it later sleeps on).
    pub fn new() -> Self {
        // The defaults are in range (the option table's tests check it).
        Self::builder().build_unchecked(RealEnv, true)
    }

    /// A builder for non-default parameters.
    pub fn builder() -> PreciseSleeperBuilder {
        PreciseSleeperBuilder::default()
    }
}

impl Default for PreciseSleeper<RealEnv> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Env> PreciseSleeper<E> {
    /// A sleeper over `env` with default parameters; leaves the timer slack and the
    /// scheduler slice alone.
    pub fn with_env(env: E) -> Self {
        // The defaults and these two policies are in range.
        PreciseSleeperBuilder::default()
            .slack_policy(SlackPolicy::LeaveAlone)
            .slice_policy(SlicePolicy::Inherit)
            .build_unchecked(env, false)
    }
}
