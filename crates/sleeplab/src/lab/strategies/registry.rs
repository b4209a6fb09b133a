//! The registry: every strategy's name and what it does. Building one by name or by
//! setting is `settings.rs`' job.

use super::abs_sleep::AbsSleep;
use super::fixed_margin::FixedMargin;
use super::pure_spin::PureSpin;
use super::sdl_precise::SdlPrecise;
use super::seed_hybrid::SeedHybrid;
use super::std_sleep::StdSleep;
use crate::precise::precise_strategy::Precise;

/// A registry entry: a strategy's name and what it does, in one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrategyInfo {
    /// The name `strategy_by_name` accepts.
    pub name: &'static str,
    /// One line for `--list` output.
    pub description: &'static str,
}

/// Every strategy of [`precise`](crate::precise), in a stable order (ours last).
pub const STRATEGIES: &[StrategyInfo] = &[
    StrategyInfo {
        name: StdSleep::NAME,
        description: "relative native sleep of the remaining time (std::thread::sleep), no spin",
    },
    StrategyInfo {
        name: AbsSleep::NAME,
        description: "absolute clock_nanosleep(TIMER_ABSTIME) to the deadline, no spin",
    },
    StrategyInfo {
        name: PureSpin::NAME,
        description: "busy-wait with a pause instruction until the deadline",
    },
    StrategyInfo {
        name: SeedHybrid::NAME,
        description: "seed 002: 1 ms sleeps while Welford mean+1σ of 1 ms sleeps fits, then spin",
    },
    StrategyInfo {
        name: SdlPrecise::NAME,
        description: "SDL3 SDL_DelayPrecise: 1 ms sleeps while the worst one this call fits, then spin",
    },
    StrategyInfo {
        name: FixedMargin::NAME,
        description: "spin_sleep-like: relative sleep of (remaining - 125 µs), then yield-spin",
    },
    StrategyInfo {
        name: Precise::NAME,
        description: "sleeplab: absolute sleep to deadline - learned p99 margin, then spin",
    },
];

/// The registry: every strategy's name and description.
pub fn strategies() -> &'static [StrategyInfo] {
    STRATEGIES
}
