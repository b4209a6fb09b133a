//! `precise`: our strategy. An absolute native sleep to `deadline − margin`, with the
//! margin learned by a [`MarginEstimator`] and bounded by the caller's [`Tradeoff`], then
//! a spin to the deadline.

use super::contention::{Contention, LossCause, Regime};
use super::estimator::{EstimatorConfig, MarginEstimator};
use super::sleep_report::{SleepReport, SleepStats};
use super::spin::{SpinStrategy, native_sleep_until_or, spin_until};
use super::tradeoff::{ContentionPolicy, HostPolicy, Tradeoff};
use crate::clock::Env;

/// The `precise` wait strategy: the algorithm inside
/// `PreciseSleeper`, usable on its own over any [`Env`]
/// (a `WaitStrategy` of the lab, for replays and comparisons).
///
/// Each wait, with `target = deadline − early tolerance` (the deadline itself unless the
/// [`Tradeoff`] allows early returns):
/// 1. reads the clock; a target already reached returns at once (nothing learned);
/// 2. takes the margin for the time left, `min(estimator margin − lateness tolerance,
///    CPU ceiling)` ([`Tradeoff::margin_ns`]);
/// 3. if more than the margin remains, sleeps natively *on an absolute deadline* until
///    `target − margin`, again after every early (interrupted) return, and notes the
///    oversleep (wake − native target);
/// 4. spins (or yields, see [`SpinStrategy`]) until a clock read is at or after the
///    target, so it never returns before it whatever the native sleep or signals did;
/// 5. only then feeds the oversleep to the estimator (so learning never adds lateness),
///    and notes whether the spin lost its CPU, to whom (the scheduler, or the host: see
///    [`HostPolicy`](super::HostPolicy)), and whether the native wakeup was starved
///    ([`Contention`]): while spins keep being preempted, step 2's margin is capped at
///    what recent spins survived, while shortened spins still lose their CPU or wakeups
///    keep being starved it is 0 (unless the trade-off says
///    [`ContentionPolicy::Ignore`]).
///
/// It keeps running [`SleepStats`] and does not touch the timer slack.
#[derive(Debug, Clone, Default)]
pub struct Precise {
    estimator: MarginEstimator,
    spin: SpinStrategy,
    tradeoff: Tradeoff,
    contention: Contention,
    stats: SleepStats,
}

impl Precise {
    /// Registry name.
    pub const NAME: &'static str = "precise";

    /// A fresh strategy with the given estimator parameters and spin strategy, and the
    /// default [`Tradeoff`].
    pub fn new(config: EstimatorConfig, spin: SpinStrategy) -> Self {
        Self {
            estimator: MarginEstimator::new(config),
            spin,
            tradeoff: Tradeoff::default(),
            contention: Contention::default(),
            stats: SleepStats::default(),
        }
    }

    /// The same strategy with the caller's trade-off between lateness and CPU.
    pub fn with_tradeoff(mut self, tradeoff: Tradeoff) -> Self {
        self.tradeoff = tradeoff;
        self
    }

    /// The trade-off in force.
    pub fn tradeoff(&self) -> Tradeoff {
        self.tradeoff
    }

    /// The margin estimator (read-only).
    pub fn estimator(&self) -> &MarginEstimator {
        &self.estimator
    }

    /// The margin the next wait will use if it is long (no CPU ceiling applies), ns.
    pub fn margin_ns(&self) -> u64 {
        self.margin_for_ns(u64::MAX)
    }

    /// The margin the next wait will use with `wait_ns` left to its target, ns: the
    /// trade-off's, capped by the contended regime's spin ceiling while it holds.
    pub fn margin_for_ns(&self, wait_ns: u64) -> u64 {
        let margin = self.tradeoff.margin_ns(&self.estimator, wait_ns);
        if self.tradeoff.contention == ContentionPolicy::Ignore {
            return margin;
        }
        match self.contention.regime() {
            Regime::Free => margin,
            Regime::Contended { ceiling_ns, .. } => margin.min(ceiling_ns),
            Regime::Stopped { .. } | Regime::Starved => 0,
        }
    }

    /// Recent preemptions of the spin phase (read-only): whether the spin is contended
    /// and the ceiling it imposes.
    pub fn contention(&self) -> &Contention {
        &self.contention
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
        self.wait_until_or(env, deadline, |_| false)
            .expect("a wait nothing interrupts ends at its deadline")
    }

    /// [`wait_until`](Self::wait_until), except that when the native sleep returns
    /// early and `interrupted` says so, the wait ends there: `None`, nothing learned
    /// and nothing recorded (the shared timer of `asleep` gives up a
    /// sleep when an earlier deadline arrives). The spin is never interrupted.
    pub(crate) fn wait_until_or<E: Env>(
        &mut self,
        env: &mut E,
        deadline: u64,
        mut interrupted: impl FnMut(&mut E) -> bool,
    ) -> Option<SleepReport> {
        let start = env.now();
        let target = deadline.saturating_sub(self.tradeoff.early_tolerance_ns);
        if start >= target {
            let r = SleepReport::already_past(start, deadline);
            self.stats.record(&r);
            return Some(r);
        }
        let left = target - start;
        let margin = self.margin_for_ns(left);
        let wanted = self
            .estimator
            .margin_ns()
            .saturating_sub(self.tradeoff.lateness_tolerance_ns);
        let budget_limited = self.tradeoff.margin_ns(&self.estimator, left) < wanted;
        // Run-queue time tells the scheduler's delays from the host's (one pread, only
        // when this wait may spin).
        let run_queue_before = if margin > 0 { env.run_queue_ns() } else { None };
        let (native_end, oversleep) = if left > margin {
            let native_target = target - margin;
            let t = native_sleep_until_or(env, native_target, &mut interrupted)?;
            (t, Some(t - native_target))
        } else {
            (start, None)
        };
        // A starved wakeup (see `Contention`): at least STARVED_NS after the target, in a
        // wait that planned to spin (only those read the run queue before), and mostly
        // spent runnable but not running (the scheduler delayed it, not a timer or the
        // host). Read only when that late, so already past the deadline.
        let late = native_end.saturating_sub(target);
        let starved = late >= Contention::STARVED_NS
            && mostly_on_run_queue(env, run_queue_before, late).unwrap_or(false);
        // Learning touches the estimator's window, which a long sleep left cold in the
        // cache (about 2 µs of misses): done before the spin when the spin has time to
        // hide it, so the caller gets control back at the deadline, not 2 µs after. The
        // margin of this wait was fixed before it slept, so the order changes nothing else.
        let learn_early = target.saturating_sub(native_end) >= Self::LEARN_IN_SPIN_NS;
        if learn_early {
            self.learn(oversleep, left);
        }
        let spun = spin_until(env, native_end, target, self.spin);
        let report =
            SleepReport::from_instants(start, deadline, native_end, spun.woke, oversleep, margin)
                .with_spin_gap(spun.max_gap_ns)
                .with_wanted_margin(wanted, budget_limited);
        // Who took the CPU from the spin: the scheduler where the run queue grew by at
        // least half the gap (or without readings), else the host (a virtual machine's
        // vCPU did not run; on bare metal the hardware). The host's counts unless the
        // trade-off ignores it, and only a gap longer than the wait's margin: it cost
        // more than sleeping through the margin would have (a quiet host's interrupts
        // are shorter than the oversleeps the margin covers).
        let lost = report
            .preempted_while_spinning()
            .then(
                || match mostly_on_run_queue(env, run_queue_before, spun.max_gap_ns) {
                    Some(false) => LossCause::Host,
                    _ => LossCause::Scheduler,
                },
            )
            .filter(|&cause| {
                cause == LossCause::Scheduler
                    || (self.tradeoff.host == HostPolicy::Adapt && spun.max_gap_ns > margin)
            })
            .map(|cause| (spun.run_before_gap_ns, cause));
        self.contention.observe(lost, starved);
        if !learn_early {
            self.learn(oversleep, left);
        }
        self.stats.record(&report);
        Some(report)
    }

    /// Spin time left after the native wake above which learning happens before the spin.
    const LEARN_IN_SPIN_NS: u64 = 20_000;

    /// Feeds one wait's native oversleep (None: the wait did not sleep) to the estimator,
    /// counting a stall when it exceeded what the trade-off let any margin cover for a
    /// wait of `left` ns.
    fn learn(&mut self, oversleep: Option<u64>, left: u64) {
        match oversleep {
            Some(o) => {
                if o > self.tradeoff.ceiling_ns(&self.estimator, left) {
                    self.stats.stalls = self.stats.stalls.saturating_add(1);
                }
                self.estimator.observe(o);
            }
            None => self.estimator.observe_none(),
        }
    }
}

/// Whether the thread spent at least half of `ns` on a run queue since the reading
/// `before`; `None` where the environment gives no run-queue readings.
fn mostly_on_run_queue<E: Env>(env: &mut E, before: Option<u64>, ns: u64) -> Option<bool> {
    let (before, after) = (before?, env.run_queue_ns()?);
    Some(after.saturating_sub(before) >= ns / 2)
}
