//! `seed-hybrid`: seed 002's `preciseSleep`.

use super::wait_from::WaitFrom;
use crate::clock::Env;
use crate::precise::SleepReport;
use crate::precise::spin::{ONE_MS, SpinStrategy, native_sleep_for_from, spin_until};

/// Seed 002: sleep 1 ms at a time while the remaining time exceeds `mean + X·σ` of the
/// observed durations of 1 ms sleeps (Welford's online algorithm, kept across calls,
/// starting from a 5 ms estimate counted as one observation), then spin. The seed uses
/// `X = 1` and names `X` as its knob (more precision for more CPU).
///
/// Its weak points, kept on purpose: the estimate is of the whole 1 ms sleep, so the
/// spin phase averages about that long; and one bad sample inflates σ for a long time.
#[derive(Debug, Clone, Copy)]
pub struct SeedHybrid {
    sigmas: f64,
    estimate: f64,
    mean: f64,
    m2: f64,
    count: u64,
}

impl SeedHybrid {
    /// Registry name.
    pub const NAME: &'static str = "seed-hybrid";
    /// The seed's starting estimate, ns.
    pub const INITIAL_ESTIMATE_NS: f64 = 5e6;

    /// A fresh strategy at the seed's 5 ms starting estimate, with `X = 1`.
    pub fn new() -> Self {
        Self::with_sigmas(1.0)
    }

    /// A fresh strategy whose estimate is `mean + sigmas·σ` (negative or NaN is 0).
    pub fn with_sigmas(sigmas: f64) -> Self {
        Self {
            sigmas: if sigmas.is_nan() {
                0.0
            } else {
                sigmas.max(0.0)
            },
            estimate: Self::INITIAL_ESTIMATE_NS,
            mean: Self::INITIAL_ESTIMATE_NS,
            m2: 0.0,
            count: 1,
        }
    }

    /// The current estimate of a 1 ms sleep's duration (mean + X·σ), ns.
    pub fn estimate_ns(&self) -> f64 {
        self.estimate
    }

    /// `X`: how many standard deviations above the mean the estimate is.
    pub fn sigmas(&self) -> f64 {
        self.sigmas
    }

    fn learn(&mut self, observed: f64) {
        self.count = self.count.saturating_add(1);
        let delta = observed - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 = (self.m2 + delta * (observed - self.mean)).max(0.0);
        let stddev = (self.m2 / (self.count - 1) as f64).sqrt();
        self.estimate = self.mean + self.sigmas * stddev;
    }
}

impl Default for SeedHybrid {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitFrom for SeedHybrid {
    const NAME: &'static str = SeedHybrid::NAME;

    fn wait_from<E: Env>(&mut self, env: &mut E, start: u64, deadline: u64) -> SleepReport {
        let mut now = start;
        let mut oversleep = None;
        while (deadline.saturating_sub(now)) as f64 > self.estimate {
            let t = native_sleep_for_from(env, now, ONE_MS);
            self.learn((t - now) as f64);
            oversleep = Some((t - now).saturating_sub(ONE_MS));
            now = t;
        }
        let spun = spin_until(env, now, deadline, SpinStrategy::Spin);
        let margin = self.estimate.ceil() as u64;
        SleepReport::from_instants(start, deadline, now, spun.woke, oversleep, margin)
            .with_spin_gap(spun.max_gap_ns)
    }
}
