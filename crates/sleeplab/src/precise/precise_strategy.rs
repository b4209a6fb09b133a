//! `precise`: our strategy. An absolute native sleep to `deadline − margin`, with the
//! margin learned by a [`MarginEstimator`], then a spin to the deadline.

use super::estimator::{EstimatorConfig, MarginEstimator, Observation};
use super::sleep_report::{SleepReport, SleepStats};
use super::spin::{SpinStrategy, native_sleep_until, spin_until};
use super::wait_strategy::WaitStrategy;
use crate::clock::Env;

/// The `precise` wait strategy: the algorithm inside
/// [`PreciseSleeper`](super::PreciseSleeper), usable on its own over any [`Env`].
///
/// Each wait:
/// 1. reads the clock; a deadline already passed returns at once (nothing learned);
/// 2. if more than the margin remains, sleeps natively *on an absolute deadline* until
///    `deadline − margin`, again after every early (interrupted) return, and notes the
///    oversleep (wake − target);
/// 3. spins (or yields, see [`SpinStrategy`]) until a clock read is at or after the
///    deadline, so it never returns early whatever the native sleep or signals did;
/// 4. only then feeds the oversleep to the estimator (so learning never adds lateness).
///
/// It keeps running [`SleepStats`] and does not touch the timer slack.
#[derive(Debug, Clone, Default)]
pub struct Precise {
    estimator: MarginEstimator,
    spin: SpinStrategy,
    stats: SleepStats,
}

impl Precise {
    /// Registry name.
    pub const NAME: &'static str = "precise";

    /// A fresh strategy with the given estimator parameters and spin strategy.
    pub fn new(config: EstimatorConfig, spin: SpinStrategy) -> Self {
        Self {
            estimator: MarginEstimator::new(config),
            spin,
            stats: SleepStats::default(),
        }
    }

    /// The margin estimator (read-only).
    pub fn estimator(&self) -> &MarginEstimator {
        &self.estimator
    }

    /// The margin the next wait will use, ns.
    pub fn margin_ns(&self) -> u64 {
        self.estimator.margin_ns()
    }

    /// How the spin phase waits.
    pub fn spin_strategy(&self) -> SpinStrategy {
        self.spin
    }

    /// Running statistics since construction or the last [`reset_stats`](Self::reset_stats).
    pub fn stats(&self) -> SleepStats {
        self.stats
    }

    /// Clears the running statistics (the learned margin is kept).
    pub fn reset_stats(&mut self) {
        self.stats = SleepStats::default();
    }

    /// Waits until `deadline` on `env`'s time line (see the type docs).
    pub fn wait_until<E: Env>(&mut self, env: &mut E, deadline: u64) -> SleepReport {
        let start = env.now();
        if start >= deadline {
            let r = SleepReport::already_past(start, deadline);
            self.stats.record(&r);
            return r;
        }
        let margin = self.estimator.margin_ns();
        let (native_end, oversleep) = if deadline - start > margin {
            let target = deadline - margin;
            let t = native_sleep_until(env, target);
            (t, Some(t - target))
        } else {
            (start, None)
        };
        let woke = spin_until(env, deadline, self.spin);
        let report =
            SleepReport::from_instants(start, deadline, native_end, woke, oversleep, margin);
        match oversleep {
            Some(o) => {
                if self.estimator.observe(o) == Observation::Stall {
                    self.stats.stalls = self.stats.stalls.saturating_add(1);
                }
            }
            None => self.estimator.observe_none(),
        }
        self.stats.record(&report);
        report
    }
}

impl<E: Env> WaitStrategy<E> for Precise {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn sleep_until(&mut self, env: &mut E, deadline: u64) -> SleepReport {
        self.wait_until(env, deadline)
    }
}
