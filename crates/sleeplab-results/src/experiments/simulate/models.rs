//! The "native sleep" models the simulator plugs into
//! [`VirtualEnv::with_model`](sleeplab::lab::VirtualEnv::with_model): each decides,
//! per native sleep, how far past its target the sleeping thread wakes. Virtual time
//! advances by that amount; nothing really waits.
//!
//! * [`SchedulerModel`]: seed 002's `fakeSystemSleep`: a tick-driven scheduler of
//!   period `P` that wakes the thread at a random point of the next period, and with
//!   probability `p` gives the CPU to someone else for another whole period, again and
//!   again.
//! * [`Empirical`]: the oversleeps measured by `sleeplab sweep` on a real machine,
//!   replayed (see [`super::empirical`], which also records where they came from).
//!
//! Every model draws from its own seeded [`SimRng`], so a cell's run is a pure function
//! of the seed.

use super::empirical::{Empirical, ReplaySource};
use super::rng::{SimRng, below, chance, threshold};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sleeplab::lab::{NativeWake, SleepCall};
use std::sync::Arc;

/// The longest chain of preemptions one wakeup can suffer (a guard against
/// `preempt_prob` near 1; at the seed's 0.05 the chance of reaching it is 0.05^1000).
pub const MAX_PREEMPTIONS: u64 = 1_000;

/// Seed 002's fake system sleep: wake = end of the request + U(0, period) (alignment to
/// the next scheduler tick) + one more period for as long as another thread grabs the
/// CPU (each time with probability `preempt_prob`).
///
/// The oversleep of one sleep is `U + K·P` with `U` uniform on `[0, P)` and `K`
/// geometric: `P(K ≥ k) = p^k`. Its mean is `P/2 + P·p/(1 − p)`; at the seed's
/// `p = 0.05` its 99th percentile is about `1.8 P` (the tail beyond `P` holds 5 %).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SchedulerModel {
    /// Scheduler period, ns (at least 1).
    pub period_ns: u64,
    /// Chance that another thread takes one more period, each time (0 ≤ p < 1).
    pub preempt_prob: f64,
}

impl SchedulerModel {
    /// Draws one oversleep, ns.
    pub fn oversleep(&self, rng: &mut SimRng, preempt_threshold: u64) -> u64 {
        let period = self.period_ns.max(1);
        let mut o = below(rng, period);
        let mut k = 0;
        while k < MAX_PREEMPTIONS && chance(rng, preempt_threshold) {
            o = o.saturating_add(period);
            k += 1;
        }
        o
    }

    /// The closure for [`VirtualEnv::with_model`](sleeplab::lab::VirtualEnv::with_model),
    /// drawing from `rng`.
    pub fn wake_fn(self, mut rng: SimRng) -> impl FnMut(&SleepCall) -> NativeWake + Send + 'static {
        let t = threshold(self.preempt_prob);
        move |_call: &SleepCall| NativeWake::Late(self.oversleep(&mut rng, t))
    }

    /// The mean oversleep, ns: `P/2 + P·p/(1 − p)` (for documentation and tests).
    pub fn mean_oversleep_ns(&self) -> f64 {
        let p = self.preempt_prob;
        let period = self.period_ns as f64;
        period / 2.0 + period * p / (1.0 - p)
    }
}

/// A model as recorded in the result: one column of the grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModelSpec {
    /// Seed 002's fake scheduler.
    Scheduler(SchedulerModel),
    /// Oversleeps replayed from a sweep result.
    Replay(ReplaySource),
}

impl ModelSpec {
    /// A short column label: the period (`7 ms`) or `replay`.
    pub fn label(&self) -> String {
        match self {
            ModelSpec::Scheduler(m) => short_ns(m.period_ns),
            ModelSpec::Replay(_) => "replay".into(),
        }
    }

    /// Words that identify the model's cell stream in the seed mix (independent of the
    /// strategy, so every strategy in a cell faces the same random draws at first).
    pub fn seed_parts(&self) -> [u64; 2] {
        match self {
            ModelSpec::Scheduler(m) => [m.period_ns, m.preempt_prob.to_bits()],
            ModelSpec::Replay(_) => [0x5245_504C_4159, 0],
        }
    }
}

/// A duration as short as it is exact: `7 ms`, `250 µs`, else three or four digits.
pub fn short_ns(ns: u64) -> String {
    if ns >= 1_000_000 && ns % 1_000_000 == 0 {
        format!("{} ms", ns / 1_000_000)
    } else if (1_000..1_000_000).contains(&ns) && ns % 1_000 == 0 {
        format!("{} µs", ns / 1_000)
    } else {
        sleeplab_stats::fmt_ns(ns)
    }
}

/// A model ready to run: the spec plus, for replay, the loaded distribution.
#[derive(Debug, Clone)]
pub enum Model {
    /// Seed 002's fake scheduler.
    Scheduler(SchedulerModel),
    /// A replayed distribution (shared between worker threads).
    Replay(Arc<Empirical>),
}

impl Model {
    /// The wake closure for one cell, drawing from `rng`.
    pub fn wake_fn(
        &self,
        rng: SimRng,
    ) -> Box<dyn FnMut(&SleepCall) -> NativeWake + Send + 'static> {
        match self {
            Model::Scheduler(m) => Box::new(m.wake_fn(rng)),
            Model::Replay(e) => {
                let e = Arc::clone(e);
                let mut rng = rng;
                Box::new(move |call: &SleepCall| {
                    NativeWake::Late(e.draw(call.target.saturating_sub(call.now), &mut rng))
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::rng::rng_for;
    use super::*;

    #[test]
    fn scheduler_oversleep_has_the_seed_shape() {
        let m = SchedulerModel {
            period_ns: 4_000_000,
            preempt_prob: 0.05,
        };
        let t = threshold(m.preempt_prob);
        let mut rng = rng_for(11, &[]);
        let n = 200_000;
        let mut sum = 0f64;
        let mut beyond = 0u64;
        for _ in 0..n {
            let o = m.oversleep(&mut rng, t);
            sum += o as f64;
            beyond += u64::from(o >= m.period_ns);
        }
        // Mean P/2 + P·p/(1−p) = 2 ms + 210.5 µs; 5 % of wakeups lose a whole period.
        let mean = sum / f64::from(n);
        assert!((mean - m.mean_oversleep_ns()).abs() < 20_000.0, "{mean}");
        let share = beyond as f64 / f64::from(n);
        assert!((share - 0.05).abs() < 0.003, "{share}");
    }

    #[test]
    fn no_preemption_means_within_one_period() {
        let m = SchedulerModel {
            period_ns: 1_000,
            preempt_prob: 0.0,
        };
        let mut f = m.wake_fn(rng_for(1, &[]));
        let call = SleepCall {
            index: 0,
            now: 0,
            target: 10,
            absolute: true,
            cpu_ns: 0,
        };
        for _ in 0..1_000 {
            let NativeWake::Late(o) = f(&call) else {
                panic!("the scheduler model never interrupts")
            };
            assert!(o < 1_000);
        }
    }

    #[test]
    fn labels() {
        let m = |p| {
            ModelSpec::Scheduler(SchedulerModel {
                period_ns: p,
                preempt_prob: 0.05,
            })
        };
        assert_eq!(m(7_000_000).label(), "7 ms");
        assert_eq!(m(1_500_000).label(), "1.500 ms");
        assert_eq!(m(15_600_000).label(), "15.60 ms");
        assert_eq!(m(10_000_000).label(), "10 ms");
        assert_eq!(short_ns(250_000), "250 µs");
        assert_eq!(short_ns(1_000_000_000), "1000 ms");
    }
}
